package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/pi-actors/pi-actors/internal/testproc"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pi-actors/pi-actors/verbs"
)

// bin is a directory with the real pi-actors, pi-actors-kernel, pi-actors-front and pi-actors-supervise
// binaries, built once for the package's tests.
var bin string

func TestMain(m *testing.M) {
	testproc.Watchdog()
	dir, err := os.MkdirTemp("", "pi-actors-mcp-bin-")
	if err != nil {
		panic(err)
	}
	cmd := exec.Command("go", "build", "-o", dir+"/", "github.com/pi-actors/pi-actors/cmd/pi-actors", "github.com/pi-actors/pi-actors/cmd/pi-actors-kernel", "github.com/pi-actors/pi-actors/cmd/pi-actors-front", "github.com/pi-actors/pi-actors/cmd/pi-actors-supervise")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build binaries: %v\n%s", err, out)
		os.Exit(1)
	}
	bin = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// client is a real MCP client (the SDK's) talking to `pi-actors mcp` over
// stdio in a subprocess.
type client struct {
	t        *testing.T
	agent    string
	session  *mcp.ClientSession
	mu       sync.Mutex
	logs     []*mcp.LoggingMessageParams
	changed  int
	notified chan struct{}
	// updated are the URIs of notifications/resources/updated, in order;
	// listChanged counts notifications/resources/list_changed.
	updated     []string
	listChanged int
}

// env is the environment of every process the test starts: a private
// agent root, the built binaries first on PATH.
func env(agent string) []string {
	return append(os.Environ(), "PI_CODING_AGENT_DIR="+agent, "PATH="+bin+":"+os.Getenv("PATH"),
		"PI_ACTORS_SESSION=", "PI_ACTORS_RUN_ID=", "PI_ACTORS_STATE_DIR=", "PI_ACTORS_BIN=", "PI_ACTORS_KERNEL_BIN=")
}

func connect(t *testing.T, agent string, extraEnv ...string) *client {
	return connectVersion(t, agent, "", extraEnv...)
}

// connectVersion connects speaking protocol version (""= the SDK's newest).
func connectVersion(t *testing.T, agent, version string, extraEnv ...string) *client {
	t.Helper()
	c := &client{t: t, agent: agent, notified: make(chan struct{}, 64)}
	cl := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			c.mu.Lock()
			c.logs = append(c.logs, req.Params)
			c.mu.Unlock()
			c.notified <- struct{}{}
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			c.mu.Lock()
			c.changed++
			c.mu.Unlock()
			c.notified <- struct{}{}
		},
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			c.mu.Lock()
			c.updated = append(c.updated, req.Params.URI)
			c.mu.Unlock()
			c.notify()
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			c.mu.Lock()
			c.listChanged++
			c.mu.Unlock()
			c.notify()
		},
	})
	cmd := exec.Command(filepath.Join(bin, "pi-actors"), "mcp")
	cmd.Env = append(env(agent), extraEnv...)
	cmd.Stderr = os.Stderr
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := cl.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	c.session = s
	t.Cleanup(func() {
		s.Close()
		stop := exec.Command(filepath.Join(bin, "pi-actors"), "kernel", "stop")
		stop.Env = env(agent)
		stop.Run()
	})
	return c
}

func (c *client) call(name string, args map[string]any) *mcp.CallToolResult {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := c.session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		c.t.Fatalf("call %s: %v", name, err)
	}
	return res
}

// inputSchema is the listed input schema of tool name, as JSON ("" when
// it is not listed).
func (c *client) inputSchema(name string) string {
	c.t.Helper()
	tools, err := c.session.ListTools(context.Background(), nil)
	if err != nil {
		c.t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if tool.Name == name {
			raw, _ := json.Marshal(tool.InputSchema)
			return string(raw)
		}
	}
	return ""
}

func text(r *mcp.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func structured(t *testing.T, r *mcp.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(r.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
	return m
}

// wait polls cond until it holds or 15 s pass, waking on notifications.
func (c *client) wait(what string, cond func() bool) {
	c.t.Helper()
	deadline := time.After(15 * time.Second)
	for !cond() {
		select {
		case <-c.notified:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			c.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func (c *client) followups(run string) []map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []map[string]any
	for _, l := range c.logs {
		b, _ := json.Marshal(l.Data)
		var f map[string]any
		if json.Unmarshal(b, &f) == nil && f["run"] == run && l.Logger == "pi-actors.followup" {
			out = append(out, f)
		}
	}
	return out
}

// TestMCPEndToEnd drives the real server with the SDK's client, in the
// stateless protocol (the SDK's newest) and in the 2025-06-18 one (an
// initialize handshake).
func TestMCPEndToEnd(t *testing.T) {
	for _, version := range []string{"", "2025-06-18"} {
		t.Run("protocol="+version, func(t *testing.T) { endToEnd(t, version) })
	}
}

func endToEnd(t *testing.T, version string) {
	agent := t.TempDir()
	c := connectVersion(t, agent, version)
	ctx := context.Background()

	// The session is named in the instructions.
	init := c.session.InitializeResult()
	if !strings.Contains(init.Instructions, "coordinator session mcp-") {
		t.Errorf("instructions do not name the session: %q", init.Instructions)
	}

	// Tools: the core verbs with explicit annotations, and the packaged recipes.
	tools, err := c.session.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*mcp.Tool{}
	for _, tool := range tools.Tools {
		byName[tool.Name] = tool
	}
	for _, name := range []string{"spawn", "message", "inspect", "call", "register_tool", "mailbox", "utility-git-status"} {
		if byName[name] == nil {
			t.Fatalf("tool %s missing from %d tools", name, len(tools.Tools))
		}
	}
	if a := byName["inspect"].Annotations; a == nil || !a.ReadOnlyHint || a.OpenWorldHint == nil || *a.OpenWorldHint {
		t.Errorf("inspect annotations: %+v", a)
	}
	if a := byName["message"].Annotations; a == nil || a.DestructiveHint == nil || !*a.DestructiveHint {
		t.Errorf("message annotations: %+v", a)
	}
	schema, _ := json.Marshal(byName["inspect"].InputSchema)
	for _, want := range []string{`"target"`, `"view"`, `"lines"`, `"required":["target","view"]`} {
		if !strings.Contains(string(schema), want) {
			t.Errorf("inspect schema lacks %s: %s", want, schema)
		}
	}

	// A run that finishes: its follow-up arrives as a notification, once.
	res := c.call("spawn", map[string]any{"as": "run:quick", "template": "echo hello"})
	if res.IsError || !strings.HasPrefix(text(res), "address=run:quick status=running") {
		t.Fatalf("spawn: %s", text(res))
	}
	c.wait("follow-up of run:quick", func() bool { return len(c.followups("quick")) > 0 })
	f := c.followups("quick")[0]
	if f["status"] != "done" || f["kind"] != "transition" {
		t.Errorf("follow-up: %v", f)
	}
	res = c.call("inspect", map[string]any{"target": "run:quick", "view": "status"})
	if res.IsError || !strings.HasPrefix(text(res), "run=quick status=done") || structured(t, res)["status"] != "done" {
		t.Errorf("inspect: %s %v", text(res), res.StructuredContent)
	}

	// A long run, killed through message (a deliberate stop: it is
	// recorded killed, and no follow-up is queued for it).
	res = c.call("spawn", map[string]any{"as": "run:long", "template": "sleep 600"})
	if res.IsError {
		t.Fatalf("spawn long: %s", text(res))
	}
	res = c.call("message", map[string]any{"to": "run:long", "type": "control.kill"})
	if res.IsError || !strings.Contains(text(res), "stopped=true") {
		t.Fatalf("kill: %s", text(res))
	}
	res = c.call("inspect", map[string]any{"target": "run:long", "view": "status"})
	if !strings.HasPrefix(text(res), "run=long status=killed") {
		t.Errorf("after the kill: %s", text(res))
	}
	if n := len(c.followups("quick")); n != 1 {
		t.Errorf("run:quick's follow-up arrived %d times, want once", n)
	}

	// Bad input: isError with the CLI's code, message and hint.
	res = c.call("inspect", map[string]any{"target": "run:quick", "view": "nope"})
	if !res.IsError {
		t.Fatalf("bad view accepted: %s", text(res))
	}
	if e, _ := structured(t, res)["error"].(map[string]any); e["code"] != "usage" || !strings.Contains(fmt.Sprint(e["message"]), "view=status") {
		t.Errorf("error body: %v", res.StructuredContent)
	}
	res = c.call("spawn", map[string]any{"as": "run:x", "bogus": 1})
	if !res.IsError || !strings.Contains(text(res), "unknown spawn parameter bogus") {
		t.Errorf("unknown parameter: %s", text(res))
	}

	// A new recipe file becomes a tool, announced by list_changed.
	c.mu.Lock()
	before := c.changed
	c.mu.Unlock()
	recipe := `{"description": "Say hello to someone", "args": ["who"], "template": "echo hello {who}"}`
	if err := os.MkdirAll(filepath.Join(agent, "recipes"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(agent, "recipes", "greet.json"), []byte(recipe), 0o600); err != nil {
		t.Fatal(err)
	}
	c.wait("tools/list_changed", func() bool { c.mu.Lock(); defer c.mu.Unlock(); return c.changed > before })
	tools, err = c.session.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tool := range tools.Tools {
		found = found || tool.Name == "greet"
	}
	if !found {
		t.Fatal("the new recipe greet is not a tool")
	}
	res = c.call("greet", map[string]any{"who": "mcp"})
	if res.IsError || !strings.Contains(structured(t, res)["output"].(string), "hello mcp") {
		t.Errorf("greet: %s %v", text(res), res.StructuredContent)
	}
	res = c.call("greet", map[string]any{})
	if !res.IsError {
		t.Errorf("greet without its required argument: %s", text(res))
	}
}

// A caller's $PI_ACTORS_SESSION is the connection's session: runs of
// another session are refused (77's session_mismatch).
func TestMCPSessionOwnership(t *testing.T) {
	agent := t.TempDir()
	a := connect(t, agent, "PI_ACTORS_SESSION=alice")
	if !strings.Contains(a.session.InitializeResult().Instructions, "coordinator session alice") {
		t.Fatalf("instructions: %s", a.session.InitializeResult().Instructions)
	}
	if res := a.call("spawn", map[string]any{"as": "run:mine", "template": "sleep 600"}); res.IsError {
		t.Fatalf("spawn: %s", text(res))
	}
	b := connect(t, agent, "PI_ACTORS_SESSION=bob")
	res := b.call("message", map[string]any{"to": "run:mine", "type": "control.kill"})
	if !res.IsError || !strings.Contains(text(res), "session_mismatch") {
		t.Errorf("bob killed alice's run: %s", text(res))
	}
	if res := a.call("message", map[string]any{"to": "run:mine", "type": "control.kill"}); res.IsError {
		t.Errorf("alice could not kill her run: %s", text(res))
	}
}

// A tool registered as name=my-tool is listed as my_tool and answers to
// either spelling; so does a packaged recipe (utility_git_status).
func TestMCPToolSpellings(t *testing.T) {
	agent := t.TempDir()
	c := connect(t, agent)
	c.mu.Lock()
	before := c.changed
	c.mu.Unlock()
	res := c.call("register_tool", map[string]any{"name": "my-tool", "description": "say hi", "template": "echo hi {who=you}"})
	if res.IsError || !strings.Contains(text(res), `Registered tool "my_tool"`) {
		t.Fatalf("register_tool: %s", text(res))
	}
	c.wait("tools/list_changed", func() bool { c.mu.Lock(); defer c.mu.Unlock(); return c.changed > before })
	tools, err := c.session.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, tool := range tools.Tools {
		listed[tool.Name] = true
	}
	if !listed["my_tool"] || listed["my-tool"] {
		t.Fatalf("listed my_tool=%v my-tool=%v", listed["my_tool"], listed["my-tool"])
	}
	for _, name := range []string{"my_tool", "my-tool", "My-Tool"} {
		res := c.call(name, map[string]any{"who": name})
		if res.IsError || !strings.Contains(structured(t, res)["output"].(string), "hi "+name) {
			t.Errorf("call %s: %s", name, text(res))
		}
	}
	if res := c.call("utility_git_status", map[string]any{}); strings.Contains(text(res), "unknown tool") {
		t.Errorf("utility_git_status: %s", text(res))
	}
	// Through the tools that take a name: message to=tool:, inspect target=tool:, call.
	res = c.call("message", map[string]any{"to": "tool:my-tool", "type": "tool.call", "body": map[string]any{"who": "msg"}})
	if res.IsError || !strings.Contains(text(res), "tool_invoked") {
		t.Errorf("message to=tool:my-tool: %s", text(res))
	}
	res = c.call("inspect", map[string]any{"target": "tool:my-tool", "view": "status"})
	if res.IsError || !strings.HasPrefix(text(res), "tool=my_tool ") {
		t.Errorf("inspect target=tool:my-tool: %s", text(res))
	}
	res = c.call("call", map[string]any{"recipe": "my-tool", "args": map[string]any{"who": "call"}})
	if res.IsError || !strings.Contains(text(res), "hi call") {
		t.Errorf("call recipe=my-tool: %s", text(res))
	}
	if _, err := c.session.CallTool(context.Background(), &mcp.CallToolParams{Name: "no-such-tool"}); err == nil || !strings.Contains(err.Error(), `unknown tool "no-such-tool"`) {
		t.Errorf("an unknown tool: %v", err)
	}
}

// TestMCPRecipeSpeltLikeVerb: tools/list leaves out a user recipe spelt
// like a verb — any verb, tool or not, in any case, - or _ — and keeps one
// spelt like a pi built-in only (Bash: nothing in MCP has that name).
func TestMCPRecipeSpeltLikeVerb(t *testing.T) {
	agent := t.TempDir()
	if err := os.MkdirAll(filepath.Join(agent, "recipes"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"Logs", "stop", "Spawn", "Query-Graph", "Bash", "notes"} {
		recipe := `{"description": "recipe ` + id + `", "template": "echo hi"}`
		if err := os.WriteFile(filepath.Join(agent, "recipes", id+".json"), []byte(recipe), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c := connect(t, agent)
	tools, err := c.session.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]string{}
	for _, tool := range tools.Tools {
		listed[tool.Name] = tool.Description
	}
	for _, name := range []string{"Logs", "stop", "Spawn", "Query-Graph"} {
		if _, ok := listed[name]; ok {
			t.Errorf("recipe %s spelt like a verb is listed", name)
		}
	}
	for name, desc := range map[string]string{"Bash": "recipe Bash", "notes": "recipe notes"} {
		if listed[name] != desc {
			t.Errorf("%s: listed %q, want the recipe (%q)", name, listed[name], desc)
		}
	}
	if !strings.HasPrefix(listed["spawn"], verbs.Find("spawn").Summary) || !strings.HasPrefix(listed["query_graph"], verbs.Find("query_graph").Summary) {
		t.Errorf("the verbs spawn and query_graph are not listed as verbs: %q, %q", listed["spawn"], listed["query_graph"])
	}
}
