package mcpserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pi-actors/pi-actors/recipes"
	"github.com/pi-actors/pi-actors/recipes/template"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs"
)

// Server is one MCP connection's server: the tools, the session and the
// follow-up pump.
type Server struct {
	env    *verbs.Env
	log    *slog.Logger
	srv    *mcp.Server
	runs   *runResources
	mu     sync.Mutex
	tools  map[string]ToolDef // by tool name
	ss     *mcp.ServerSession
	ssSet  chan struct{}
	cancel context.CancelFunc
	// stopping ends when the server is told to stop (SIGTERM, its
	// caller's context): every call in flight is cancelled then, as a
	// client's cancel does, so its processes are stopped before the
	// server exits (go-sdk's Close waits for calls without cancelling
	// them: a SIGKILL after the grace left them running).
	stopping context.Context
	pump     sync.Once
	calls    *callIDs // the JSON-RPC ids of tool calls (guarded transports)
}

// Options configure a server.
type Options struct {
	// Env is the connection's environment; its Session is the
	// connection's session (a new one when empty).
	Env     *verbs.Env
	Version string
	// Log receives the server's own log lines (stderr: stdout carries the
	// protocol only).
	Log *slog.Logger
}

// NewSession returns a new session id for a connection without one.
func NewSession() string {
	b := make([]byte, 6)
	rand.Read(b)
	return "mcp-" + hex.EncodeToString(b)
}

// New builds the server and its tool catalogue.
func New(opts Options) (*Server, error) {
	env := *opts.Env
	if env.Session == "" {
		env.Session = NewSession()
	}
	env.Stream, env.Stdin, env.JSON = nil, nil, true
	// A server lives long and lists runs at every inspect: it keeps what
	// it read of the runs index and reads only what the index gained.
	runs.KeepIndexes()
	s := &Server{env: &env, log: opts.Log, tools: map[string]ToolDef{}, ssSet: make(chan struct{})}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	instructions := fmt.Sprintf(`pi-actors: a process supervisor and memory for coding-agent swarms.
This connection is coordinator session %s: runs you spawn belong to it, and
their follow-ups (a run finished, a run's message to you) arrive as
notifications/message (logger "pi-actors.followup"), each once; inspect
target=coordinator view=followups drains any you missed. Tools: spawn,
message, inspect, call, register_tool, mailbox, the knowledge graph
(query_graph, manage_graph, manage_changelog: durable memory about the
codebase; read it before working on files, update it after), the vector
memory (search, search_all, smart_search, recall: what earlier runs,
decisions and code said), and one tool per recipe. Every run you may read is also a resource:
pi-actors://run/<id>/status and pi-actors://run/<id>/tail (subscribe to
follow a run without polling).`, env.Session)
	s.runs = newRunResources(s)
	so := &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       s.log,
		Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}, Tools: &mcp.ToolCapabilities{ListChanged: true},
			Resources: &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true}},
		InitializedHandler: func(ctx context.Context, _ *mcp.InitializedRequest) {
			s.startFollowups()
		},
	}
	s.runs.options(so)
	s.srv = mcp.NewServer(&mcp.Implementation{Name: "pi-actors", Version: opts.Version}, so)
	s.runs.register()
	// Follow-ups are not ordinary log lines: they reach the client whatever
	// level it asks for, so the session's level stays at debug.
	s.srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			// Follow-ups start once the client can take notifications: after
			// notifications/initialized, or — in the stateless protocol,
			// which has no handshake — with its first request.
			if method != "initialize" && (method == "notifications/initialized" || !strings.HasPrefix(method, "notifications/")) {
				s.startFollowups()
			}
			if method == "resources/list" {
				s.runs.start(ctx) // the runs are listed once the kernel's stream says which
			}
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && method == "tools/call" && p != nil {
				p.Name = s.toolName(p.Name) // my-tool reaches my_tool
			}
			if method == "logging/setLevel" {
				if p, ok := req.GetParams().(*mcp.SetLoggingLevelParams); ok && p != nil {
					p.Level = "debug"
				}
			}
			return next(ctx, method, req)
		}
	})
	core, err := CoreTools()
	if err != nil {
		return nil, err
	}
	for _, t := range core {
		s.add(t)
	}
	if err := s.refreshRecipes(); err != nil {
		s.log.Warn("recipe tools", "err", err)
	}
	return s, nil
}

// Session is the connection's coordinator session.
func (s *Server) Session() string { return s.env.Session }

// Run serves one connection on t until it ends or ctx is done.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.cancel, s.stopping = cancel, ctx
	if g, ok := t.(*guarded); ok {
		s.calls = g.calls
	}
	stopWatch := s.watchRecipes(ctx)
	defer stopWatch()
	ss, err := s.srv.Connect(ctx, t, &mcp.ServerSessionOptions{State: &mcp.ServerSessionState{LogLevel: "debug"}})
	if err != nil {
		return fmt.Errorf("mcp connect: %w", err)
	}
	s.mu.Lock()
	s.ss = ss
	close(s.ssSet)
	s.mu.Unlock()
	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	select {
	case <-ctx.Done():
		ss.Close()
		<-done
		return nil
	case err := <-done:
		return err
	}
}

// add registers one tool (replacing one of the same name).
func (s *Server) add(t ToolDef) {
	destructive, open := t.Annotations.Destructive, false
	tool := &mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: t.Annotations.ReadOnly, DestructiveHint: &destructive,
			IdempotentHint: t.Annotations.Idempotent, OpenWorldHint: &open}}
	s.tools[t.Name] = t
	s.srv.AddTool(tool, s.handler(t))
}

// toolName is the listed tool a called name stands for: the name itself,
// else the one tool spelt differently (recipes.NameKey: case, - and _).
func (s *Server) toolName(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.tools[name]; ok {
		return name
	}
	match := ""
	for listed := range s.tools {
		if recipes.NameKey(listed) == recipes.NameKey(name) {
			if match != "" {
				return name // ambiguous: the client must use the listed name
			}
			match = listed
		}
	}
	if match == "" {
		return name
	}
	return match
}

// handler runs a tool call through the verb layer.
func (s *Server) handler(t ToolDef) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, _ error) {
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("tool panicked", "tool", t.Name, "panic", p)
				res = errorResult(&verbs.Error{Code: "internal", Message: fmt.Sprintf("%s: internal error: %v", t.Name, p), Exit: verbs.ExitSoftware})
			}
		}()
		if s.stopping != nil {
			var cancel context.CancelFunc
			ctx, cancel = context.WithCancel(ctx)
			defer cancel()
			defer context.AfterFunc(s.stopping, cancel)()
		}
		var args json.RawMessage
		var id string
		if req != nil && req.Params != nil {
			args = req.Params.Arguments
			id = s.calls.take(req.Params.Name, args)
		}
		out, err := s.call(ctx, t, args, id)
		if err != nil {
			return errorResult(verbs.Classify(err)), nil
		}
		// The result goes to the client once this returns: a
		// view=followups answer's follow-ups count as passed on here —
		// unless the client cancelled the call (it drops the answer):
		// then they go back to the queue.
		defer func() { verbs.SettleOutcome(out, ctx.Err() == nil) }()
		return outcomeResult(out), nil
	}
}

// call decodes, validates and runs one call.
func (s *Server) call(ctx context.Context, t ToolDef, args json.RawMessage, requestID string) (*verbs.Outcome, error) {
	env := *s.env
	env.Cause.MCPRequest = requestID // what its spawns and messages record as their cause
	if t.Recipe != "" {
		spec := verbs.Find("call")
		c := &verbs.Call{Recipe: t.Recipe}
		if len(bytes.TrimSpace(args)) > 0 && string(bytes.TrimSpace(args)) != "null" {
			if err := json.Unmarshal(args, &c.Args); err != nil {
				return nil, verbs.Invalidf("%s: arguments must be one JSON object: %v", t.Name, err)
			}
		}
		if v, given := c.Args["run_id"]; given && v == nil {
			delete(c.Args, "run_id") // null: left out
		} else if given {
			id, ok := v.(string)
			if !ok {
				// As the CLI refuses run_id:=5 (it started a run under a
				// generated id).
				return nil, verbs.Invalidf("run_id must be a string, got %s", template.CompactJSON(v))
			}
			c.RunID = id
			delete(c.Args, "run_id")
		}
		return spec.Run(ctx, &env, c)
	}
	spec := verbs.Find(t.Verb)
	if err := refuseTerminal(spec, args); err != nil {
		return nil, err
	}
	req, err := spec.DecodeJSON(args)
	if err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	return spec.Run(ctx, &env, req)
}

// refuseTerminal refuses a parameter that reads the caller's terminal
// (call's stdin): an MCP client has none, and the step would read nothing.
func refuseTerminal(spec *verbs.Spec, args json.RawMessage) error {
	if len(spec.Terminal) == 0 {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return nil // DecodeJSON names what is wrong with it
	}
	for _, name := range spec.Terminal {
		if _, ok := m[name]; ok {
			return &verbs.Error{Exit: verbs.ExitUsage, Code: "usage",
				Message: fmt.Sprintf("%s parameter %s gives the first step the caller's terminal stdin, which an MCP client does not have", spec.Name, name),
				Hint:    "leave " + name + " out and pass the input as an argument of the recipe"}
		}
	}
	return nil
}

// outcomeResult is a verb's outcome as a tool result: the compact text and
// the --json result as structured content.
func outcomeResult(out *verbs.Outcome) *mcp.CallToolResult {
	if out.Fail != nil {
		r := errorResult(out.Fail)
		if out.Text != "" {
			r.Content = append(r.Content, &mcp.TextContent{Text: out.Text})
		}
		return r
	}
	text := out.Text
	if text == "" {
		text = "ok"
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: structured(out.Result)}
}

// errorResult is a failed call: isError, and the code, message and hint
// the CLI's --json prints.
func errorResult(e *verbs.Error) *mcp.CallToolResult {
	text := e.Code + ": " + e.Message
	if e.Hint != "" {
		text += "\nhint: " + e.Hint
	}
	body := map[string]any{"code": e.Code, "message": e.Message}
	if e.Hint != "" {
		body["hint"] = e.Hint
	}
	if e.Details != nil {
		body["details"] = e.Details
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: map[string]any{"error": body}}
}

// structured makes a result an object (structured content is an object
// for most clients): a list or a scalar is wrapped as {"result": …}.
func structured(v any) any {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil || len(b) == 0 || b[0] != '{' {
		return map[string]any{"result": v}
	}
	return json.RawMessage(b)
}

// session waits for the connected session (or ctx's end).
func (s *Server) session(ctx context.Context) *mcp.ServerSession {
	select {
	case <-s.ssSet:
	case <-ctx.Done():
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ss
}

// followupDelay bounds the pause before the follow-up pump reconnects to a
// kernel that went away.
const followupDelay = 2 * time.Second
