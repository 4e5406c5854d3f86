package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pi-actors/pi-actors/internal/config"
	"github.com/pi-actors/pi-actors/verbs"
)

// The bridge verb is a long-lived front door for a program that calls many
// verbs and cannot afford a process per call (the pi extension looks up
// the knowledge of every file pi reads): one JSON request per line on
// stdin, one JSON reply per line on stdout, answered concurrently, in
// completion order. At stdin's EOF (its parent is gone or done with it)
// the commands its calls run are stopped — nobody is left to read their
// answers — and it ends once the other calls in flight have answered; a
// signal (SIGTERM, SIGHUP, SIGINT) stops everything at once. Either way
// it ends only after the commands it started are gone.

func init() {
	localVerbs = append(localVerbs, &verb{name: "bridge", hidden: true, run: runBridge,
		summary: "serve verbs as JSON lines on stdin/stdout (for the pi extension)",
		usage: `pi-actors bridge

A long-lived JSON-lines front door (hidden; the pi extension uses it).
The first line out is the hello: {"id":0,"ok":true,"result":{"version",
"agent_dir","pi":{[pi] of pi-actors.toml}}} (ok=false with the config error
and the defaults when pi-actors.toml is invalid). Then each line in
  {"id":N,"verb":"query_graph","params":{...},"cwd":"/dir","session":"s","timeout_ms":200,"tool_call_id":"t1","cause":"<message id>"}
gets one line out
  {"id":N,"ok":true,"result":...,"text":"...","ms":1.2}   or   {"id":N,"ok":false,"error":{"code","message","hint","exit"}}
in completion order. {"id":N,"op":"hello"} repeats the hello (config re-read);
{"id":N,"op":"cancel","target":M} cancels call M (its commands are stopped).
Every verb of the verb layer except watch; exec and call get empty stdin.`})
}

// bridgeRequest is one request line.
type bridgeRequest struct {
	ID        int             `json:"id"`
	Op        string          `json:"op,omitempty"`
	Verb      string          `json:"verb"`
	Params    json.RawMessage `json:"params,omitempty"`
	Cwd       string          `json:"cwd,omitempty"`
	Session   string          `json:"session,omitempty"`
	TimeoutMS int             `json:"timeout_ms,omitempty"`
	// Target is the id of the call a cancel op cancels.
	Target int `json:"target,omitempty"`
	// ToolCall is pi's tool-call id, Cause the message the call answers:
	// the spawns and messages the call makes record them as their cause.
	ToolCall string `json:"tool_call_id,omitempty"`
	Cause    string `json:"cause,omitempty"`
}

// bridgeReply is one reply line.
type bridgeReply struct {
	ID     int          `json:"id"`
	OK     bool         `json:"ok"`
	Result any          `json:"result,omitempty"`
	Text   *string      `json:"text,omitempty"`
	Error  *verbs.Error `json:"error,omitempty"`
	MS     float64      `json:"ms"`
	// out is the verb's outcome, settled once the reply was written.
	out *verbs.Outcome
}

// bridgeHello is the hello's result.
type bridgeHello struct {
	Version  string    `json:"version"`
	AgentDir string    `json:"agent_dir"`
	Pi       config.Pi `json:"pi"`
}

type bridge struct {
	base *verbs.Env
	mu   sync.Mutex // serialises lines on out
	out  io.Writer

	callsMu   sync.Mutex
	calls     map[int]tracked // calls in flight by id
	cancelled map[int]bool    // cancels that came before their call
	// commands holds the calls in flight that run commands (exec, call):
	// after stopCommands, no new one starts and the bridge waits for them.
	commands sync.WaitGroup
	stopping bool
}

// tracked is a call in flight: its cancel, and whether it runs commands.
type tracked struct {
	cancel   context.CancelFunc
	commands bool
}

// commandVerbs are the verbs whose calls run commands in the bridge's own
// process tree (the others ask the kernel).
var commandVerbs = map[string]bool{"exec": true, "call": true}

// maxEarlyCancels bounds the cancels remembered for calls not yet seen.
const maxEarlyCancels = 1024

func runBridge(ctx context.Context, a *app, r *request) int {
	if len(r.words) > 0 || len(r.params) > 0 {
		return a.fail(r, usagef("bridge takes no parameters: it reads requests from stdin"))
	}
	base, err := verbs.NewEnv()
	if err != nil {
		return a.fail(r, err)
	}
	base.Version, base.JSON, base.CallerPid = Version, true, os.Getppid()
	b := &bridge{base: base, out: a.io.out, calls: map[int]tracked{}, cancelled: map[int]bool{}}
	// Its reader may be gone before a stopped call answers: a write to the
	// broken pipe then fails instead of killing the bridge mid-stop
	// (caught, not ignored: the commands it starts get the default back).
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	defer signal.Stop(pipe)
	b.write(b.hello(0))
	var wg sync.WaitGroup // every call in flight, added only by the reader
	eof := make(chan struct{})
	go func() {
		defer close(eof)
		in := bufio.NewReaderSize(a.io.in, 64<<10)
		for {
			line, err := in.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					b.write(b.serve(ctx, line))
				}()
			}
			if err != nil {
				return
			}
		}
	}()
	select {
	case <-eof:
		b.stopCommands()
		// The other calls answer (each within its timeout_ms); one
		// without a timeout that hangs (a stopped kernel) does not keep
		// the bridge alive.
		drained := make(chan struct{})
		go func() {
			wg.Wait()
			close(drained)
		}()
		select {
		case <-drained:
		case <-time.After(bridgeDrain):
		case <-ctx.Done():
		}
	case <-ctx.Done():
		b.stopCommands()
	}
	// Each stopped call returns once its commands' process groups are
	// gone (TERM, the kill grace, KILL): the bridge outlives them.
	stopped := make(chan struct{})
	go func() {
		b.commands.Wait()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(bridgeStop):
	}
	return exitOK
}

// bridgeStop bounds the wait for stopped commands (their kill grace and
// the read of their last output).
var bridgeStop = time.Minute

// stopCommands cancels the calls in flight that run commands, and refuses
// new ones.
func (b *bridge) stopCommands() {
	b.callsMu.Lock()
	defer b.callsMu.Unlock()
	b.stopping = true
	for _, c := range b.calls {
		if c.commands {
			c.cancel()
		}
	}
}

// bridgeDrain bounds the wait for the calls in flight that ask the kernel
// after stdin's EOF.
var bridgeDrain = 10 * time.Second

// hello reports the version, the agent root and the [pi] config.
func (b *bridge) hello(id int) *bridgeReply {
	cfg, err := config.Load(b.base.AgentDir)
	h := bridgeHello{Version: Version, AgentDir: b.base.AgentDir, Pi: cfg.Pi}
	if err != nil {
		h.Pi = config.Defaults().Pi
		return &bridgeReply{ID: id, Result: h, Error: verbs.Classify(err)}
	}
	return &bridgeReply{ID: id, OK: true, Result: h}
}

// serve answers one request line.
func (b *bridge) serve(ctx context.Context, line []byte) (reply *bridgeReply) {
	start := time.Now()
	var req bridgeRequest
	if err := json.Unmarshal(line, &req); err != nil {
		return &bridgeReply{ID: -1, Error: verbs.Classify(usagef("bridge: a request is one JSON object per line: %v", err))}
	}
	defer func() {
		if p := recover(); p != nil {
			reply = &bridgeReply{ID: req.ID, Error: &verbs.Error{Code: "internal", Message: fmt.Sprintf("%s: internal error: %v", req.Verb, p), Exit: exitSoftware}}
		}
		reply.MS = float64(time.Since(start).Microseconds()) / 1000
	}()
	switch req.Op {
	case "hello":
		return b.hello(req.ID)
	case "cancel":
		return &bridgeReply{ID: req.ID, OK: true, Result: map[string]bool{"cancelled": b.cancel(req.Target)}}
	}
	ctx, done, ok := b.track(ctx, req.ID, commandVerbs[req.Verb])
	if !ok {
		return &bridgeReply{ID: req.ID, Error: &verbs.Error{Code: "unavailable", Message: req.Verb + ": the bridge is ending (its input closed or it was signalled): no new command starts", Exit: verbs.ExitTempFail}}
	}
	defer done()
	out, err := b.call(ctx, &req)
	if err != nil {
		return &bridgeReply{ID: req.ID, Error: verbs.Classify(err)}
	}
	if out.Fail != nil {
		fail := *out.Fail
		if fail.Details == nil {
			fail.Details = out.Result
		}
		return &bridgeReply{ID: req.ID, Error: &fail, Text: &out.Text, out: out}
	}
	return &bridgeReply{ID: req.ID, OK: true, Result: out.Result, Text: &out.Text, out: out}
}

// call decodes, validates and runs one verb in the request's directory and
// session.
func (b *bridge) call(ctx context.Context, req *bridgeRequest) (*verbs.Outcome, error) {
	if req.Op != "" {
		return nil, usagef("bridge: unknown op %q (hello, cancel, or a verb)", req.Op)
	}
	spec := verbs.Find(req.Verb)
	if spec == nil || spec.Name == "watch" {
		return nil, usagef("bridge: unknown verb %q: every verb of pi-actors schema except watch", req.Verb)
	}
	env := *b.base
	if req.Cwd != "" {
		env.Cwd = req.Cwd
	}
	if req.Session != "" {
		env.Session = req.Session
		env.Environ = append(slices.DeleteFunc(slices.Clone(env.Environ), func(kv string) bool {
			return strings.HasPrefix(kv, "PI_ACTORS_SESSION=")
		}), "PI_ACTORS_SESSION="+req.Session)
	}
	env.Stdin = bytes.NewReader(nil)
	env.Cause.ToolCall, env.Cause.Message = verbs.CauseID(req.ToolCall), req.Cause
	// Every verb, not only those that dial the kernel (ps, inspect and
	// logs read the files): a session or cause no request accepts.
	if err := verbs.CheckCaller(env.Session, &env.Cause); err != nil {
		return nil, err
	}
	if err := env.LoadConfig(); err != nil && !lenientConfig[spec.Name] {
		return nil, err
	}
	params := req.Params
	if len(bytes.TrimSpace(params)) == 0 || string(bytes.TrimSpace(params)) == "null" {
		params = json.RawMessage("{}")
	}
	r, err := spec.DecodeJSON(params)
	if err != nil {
		return nil, err
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	if req.TimeoutMS <= 0 {
		return runVerb(ctx, spec, &env, r)
	}
	// The kernel client has no read deadline: a call past its timeout is
	// answered as timed out and left to finish (or not) on its own.
	ctx, cancel := context.WithTimeout(ctx, time.Duration(req.TimeoutMS)*time.Millisecond)
	defer cancel()
	type ran struct {
		out *verbs.Outcome
		err error
	}
	done := make(chan ran, 1)
	go func() {
		out, err := runVerb(ctx, spec, &env, r)
		done <- ran{out, err}
	}()
	select {
	case res := <-done:
		return res.out, res.err
	case <-ctx.Done():
		return nil, &verbs.Error{Code: "timeout", Message: fmt.Sprintf("%s: no answer within %d ms (is the kernel busy or stopped? pi-actors kernel status)", req.Verb, req.TimeoutMS), Exit: verbs.ExitTempFail}
	}
}

func runVerb(ctx context.Context, spec *verbs.Spec, env *verbs.Env, r verbs.Request) (*verbs.Outcome, error) {
	out, err := spec.Run(ctx, env, r)
	if err == nil && out == nil {
		err = errors.New(spec.Name + ": no outcome")
	}
	return out, err
}

// track registers a call in flight so that a cancel op can stop it; a
// call that runs commands is refused (ok false) once the bridge stops
// them.
func (b *bridge) track(ctx context.Context, id int, commands bool) (_ context.Context, done func(), ok bool) {
	ctx, cancel := context.WithCancel(ctx)
	b.callsMu.Lock()
	defer b.callsMu.Unlock()
	if commands {
		if b.stopping {
			cancel()
			return nil, nil, false
		}
		b.commands.Add(1)
	}
	if b.cancelled[id] {
		delete(b.cancelled, id)
		cancel()
	}
	b.calls[id] = tracked{cancel: cancel, commands: commands}
	return ctx, func() {
		cancel()
		b.callsMu.Lock()
		delete(b.calls, id)
		if commands {
			b.commands.Done()
		}
		b.callsMu.Unlock()
	}, true
}

// cancel cancels the call id (its commands are stopped as on Ctrl-C);
// a cancel for a call not seen yet is kept for it.
func (b *bridge) cancel(id int) bool {
	b.callsMu.Lock()
	defer b.callsMu.Unlock()
	if c, ok := b.calls[id]; ok {
		c.cancel()
		return true
	}
	if len(b.cancelled) >= maxEarlyCancels {
		clear(b.cancelled)
	}
	b.cancelled[id] = true
	return false
}

func (b *bridge) write(r *bridgeReply) {
	line, err := json.Marshal(r)
	if err != nil {
		line, _ = json.Marshal(&bridgeReply{ID: r.ID, Error: &verbs.Error{Code: "internal", Message: "encode reply: " + err.Error(), Exit: exitSoftware}})
	}
	b.mu.Lock()
	_, err = b.out.Write(append(line, '\n'))
	b.mu.Unlock()
	verbs.SettleOutcome(r.out, err == nil)
}
