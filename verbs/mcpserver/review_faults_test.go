package mcpserver_test

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// A tool called under another spelling (docs/mcp.md: "answers to either
// spelling") keeps its cause, the JSON-RPC id: it is noted under the name
// as sent and taken under the listed one (by the name's key; it was lost).
func TestCauseKeptForOtherSpelling(t *testing.T) {
	agent := t.TempDir()
	c := connect(t, agent, "PI_ACTORS_SESSION=carol")
	for _, name := range []string{"spawn", "SPAWN"} {
		id := strings.ToLower(name) + "-" + map[bool]string{true: "listed", false: "other"}[name == "spawn"]
		if res := c.call(name, map[string]any{"as": "run:" + id, "template": "sleep 600"}); res.IsError {
			t.Fatalf("%s: %s", name, text(res))
		}
		defer c.call("message", map[string]any{"to": "run:" + id, "type": "control.kill"})
	}
	for _, id := range []string{"spawn-listed", "spawn-other"} {
		meta, err := os.ReadFile(filepath.Join(agent, "tmp", "pi-actors", "runs", id, "run.json"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(meta), `"mcp_request"`) {
			t.Errorf("run %s has no mcp_request cause:\n%s", id, meta)
		}
	}
}

// A fractional or null request id is refused by the guard (-32600): the
// SDK answered 1.5 as id 1 (a client cannot match it, and it may collide
// with its own request 1) and never answered id null.
func TestNonIntegerIDsRefused(t *testing.T) {
	agent := t.TempDir()
	// The server's follow-up pump would start a kernel, perhaps only as the
	// test ends (too late for its stop): one is up before it, and is stopped
	// after the server (cleanups run last first).
	kernel := func(verb string) {
		c := exec.Command(filepath.Join(bin, "pi-actors"), "kernel", verb)
		c.Env = env(agent)
		c.Run()
	}
	kernel("start")
	t.Cleanup(func() { kernel("stop") })
	in, lines, _ := rawServer(t, env(agent))
	send := func(s string) { in.Write([]byte(s + "\n")) }
	next := func() string {
		select {
		case l := <-lines:
			return l
		case <-time.After(5 * time.Second):
			return ""
		}
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	next()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`)
	var r struct {
		ID    json.RawMessage     `json:"id"`
		Error *struct{ Code int } `json:"error"`
	}
	got := next()
	json.Unmarshal([]byte(got), &r)
	if string(r.ID) != "1.5" && (r.Error == nil || r.Error.Code != -32600) {
		t.Errorf("id 1.5 answered %s (want id 1.5 or -32600 invalid request)", got)
	}
	send(`{"jsonrpc":"2.0","id":null,"method":"ping"}`)
	if got := next(); got == "" {
		t.Errorf("id null: no answer at all (want -32600 invalid request)")
	}
	// An integer id past 2^53 was answered under another id (a float's).
	send(`{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`)
	if got := next(); !strings.Contains(got, `"code":-32600`) || !strings.Contains(got, "2^53") {
		t.Errorf("id 2^53+1 answered %s (want -32600 naming the bound)", got)
	}
	// Whitespace after a message is JSON's: it ended the connection.
	send(`{"jsonrpc":"2.0","id":7,"method":"ping"} ` + "\t")
	if got := next(); !strings.Contains(got, `"id":7`) || !strings.Contains(got, `"result"`) {
		t.Errorf("a ping with trailing whitespace answered %q (want its result)", got)
	}
	send(`{"jsonrpc":"2.0","id":8,"method":"ping"}`)
	if got := next(); !strings.Contains(got, `"id":8`) {
		t.Errorf("after it the connection answered %q (want id 8's result)", got)
	}
}

// An inspect view=followups call the client cancelled leaves the session's
// follow-ups queued: a client that honours the cancellation drops the late
// answer, so they were lost when the answer counted them as passed on.
// (It can pass by luck, never fail by it: when the follow-up pump reaches
// the kernel first, they are pushed.)
func TestCancelledFollowupsCallLosesNothing(t *testing.T) {
	agent := t.TempDir()
	cli := func(args ...string) string {
		cmd := exec.Command(filepath.Join(bin, "pi-actors"), args...)
		cmd.Env = append(env(agent), "PI_ACTORS_SESSION=fs")
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	t.Cleanup(func() { cli("kernel", "stop") })
	cli("spawn", "template=echo hi", "as=run:q1")
	time.Sleep(3 * time.Second)
	cli("kernel", "stop")

	in, lines, stop := rawServer(t, append(env(agent), "PI_ACTORS_SESSION=fs"))
	in.Write([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n"))
	<-lines
	in.Write([]byte(`{"jsonrpc":"2.0","id":50,"method":"tools/call","params":{"name":"inspect","arguments":{"target":"coordinator","view":"followups"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":50}}` + "\n"))
	in.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
	pushed := false
	deadline := time.After(5 * time.Second)
loop:
	for {
		select {
		case l := <-lines:
			if strings.Contains(l, `"pi-actors.followup"`) && strings.Contains(l, `"q1"`) {
				pushed = true
			}
		case <-deadline:
			break loop
		}
	}
	stop()
	if left := cli("inspect", "target=coordinator", "view=followups"); !pushed && !strings.Contains(left, "run:q1") {
		t.Errorf("run:q1's follow-up was handed to a cancelled call only: not pushed, no longer queued:\n%s", left)
	}
}

// rawServer starts pi-actors mcp with environ and returns its stdin, its
// stdout's lines and stop (stdin closed, the server waited for; also when
// the test ends).
func rawServer(t *testing.T, environ []string) (in io.WriteCloser, lines <-chan string, stop func()) {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, "pi-actors"), "mcp")
	cmd.Env = environ
	in, _ = cmd.StdinPipe()
	outp, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() { once.Do(func() { in.Close(); cmd.Wait() }) }
	t.Cleanup(stop)
	out := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(outp)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			out <- sc.Text()
		}
		close(out)
	}()
	return in, out, stop
}

// TestCallRefusesStdin: call's stdin gives the first step the caller's
// terminal stdin, which an MCP client does not have (the step read
// nothing and the call went on): the schema leaves it out and a call
// that sends it anyway is refused, naming it, before anything runs.
func TestCallRefusesStdin(t *testing.T) {
	agent := t.TempDir()
	c := connect(t, agent)
	if schema := c.inputSchema("call"); strings.Contains(schema, `"stdin"`) {
		t.Errorf("call's schema offers stdin: %s", schema)
	}
	marker := filepath.Join(agent, "ran")
	recipe := filepath.Join(agent, "touch.json")
	if err := os.WriteFile(recipe, []byte(`{"description":"touch a file","template":"touch {path}"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	res := c.call("call", map[string]any{"recipe": recipe, "stdin": true, "args": map[string]any{"path": marker}})
	if !res.IsError || !strings.Contains(text(res), "stdin") || !strings.Contains(text(res), "MCP client") {
		t.Fatalf("call with stdin: error=%v %s", res.IsError, text(res))
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the refused call ran its recipe: %s exists", marker)
	}
}
