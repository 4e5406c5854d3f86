// Command pi-actors is the CLI of pi-actors: a process supervisor and
// memory for coding-agent swarms. The verbs mirror the agent tool surface
// (spawn, message, inspect, exec, call, register_tool, …); see
// `pi-actors help` and docs/cli.md.
//
// This package parses arguments, prints results and decides exit codes;
// what each verb does lives in package verbs, shared with the MCP server
// and the pi extension. It is also the per-run supervisor (the hidden
// `supervise` verb), so it links nothing heavy: no actor system, no SQLite,
// no gopsutil.
package main

import (
	"bytes"
	"context"
	"encoding/json"
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
	"github.com/pi-actors/pi-actors/verbs/wire"
)

func main() {
	os.Exit(mainArgs(os.Args[1:]))
}

// mainArgs runs the CLI on args with the process's streams; SIGINT,
// SIGTERM and SIGHUP cancel its context (a workflow's scheduler then
// stops its node runs itself): see interruptible.
func mainArgs(args []string) int {
	if len(args) > 0 && args[0] == "supervise" {
		// A supervisor handles its signals itself.
		return superviseMain(args[1:])
	}
	ctx, stop := interruptible(context.Background(), signalDelay)
	defer stop()
	return run(ctx, args, streams{in: os.Stdin, out: os.Stdout, err: os.Stderr})
}

// signalDelay is how long a request-and-answer verb runs before the CLI
// handles signals itself.
const signalDelay = 20 * time.Millisecond

// armKey holds, in the context interruptible makes, the function that
// starts handling signals at once.
type armKey struct{}

// interruptible returns a context that the handled signals
// (handledSignals) cancel once signals are handled, and its stop.
// Handling them costs the runtime a start-up of its own (a thread and
// more to keep running: 0.7 ms of CPU and of wall time on the 2-core
// bench machine, a fifth of a spawn's CLI), which a request-and-answer
// verb finishes before paying: signals are handled from delay after the
// call, or from armSignals. A signal before then has its default action,
// as for any command: the kernel finishes a request it is handling.
func interruptible(parent context.Context, delay time.Duration) (context.Context, func()) {
	base, cancelCause := context.WithCancelCause(parent)
	cancel := func() { cancelCause(context.Canceled) }
	var (
		mu      sync.Mutex
		stopped bool
		sigs    chan os.Signal
	)
	arm := func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped || sigs != nil {
			return
		}
		ch := make(chan os.Signal, 1)
		sigs = ch
		signal.Notify(ch, handledSignals()...)
		go func() {
			select {
			case sig := <-ch:
				cancelCause(signalled{sig})
			case <-base.Done():
			}
		}()
	}
	t := time.AfterFunc(delay, arm)
	return context.WithValue(base, armKey{}, arm), func() {
		t.Stop()
		mu.Lock()
		defer mu.Unlock()
		stopped = true
		if sigs != nil {
			signal.Stop(sigs)
		}
		cancel()
	}
}

// handledSignals are the signals the CLI takes over: SIGTERM, and SIGINT
// and SIGHUP unless it was started with them ignored — a background job
// of a script (Ctrl-C is for the script, not its jobs) or nohup — which
// it keeps ignoring, as any command does (handling them would undo it).
func handledSignals() []os.Signal {
	sigs := []os.Signal{syscall.SIGTERM}
	for _, s := range []os.Signal{os.Interrupt, syscall.SIGHUP} {
		if !signal.Ignored(s) {
			sigs = append(sigs, s)
		}
	}
	return sigs
}

// signalled is the cause of a context a signal cancelled: what stopped
// on it (a foreground exec) exits 128+n, as a shell reports a command a
// signal ended.
type signalled struct{ sig os.Signal }

func (s signalled) Error() string { return "interrupted by " + s.sig.String() }

// ExitCode is 128+n for signal n.
func (s signalled) ExitCode() int {
	if n, ok := s.sig.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 130
}

// armSignals makes ctx's signals handled from now on (a verb that waits
// or cleans up on one calls it before it starts); a no-op on a context
// interruptible did not make.
func armSignals(ctx context.Context) {
	if arm, ok := ctx.Value(armKey{}).(func()); ok {
		arm()
	}
}

// quickVerbs answer one request and end; they pay for signal handling
// only if they run past signalDelay.
var quickVerbs = []string{"spawn", "message", "inspect", "ps", "rm", "register_tool", "session", "kernel"}

// streams is the IO a verb may use; verbs never touch os.Std* directly.
type streams struct {
	in       io.Reader
	out, err io.Writer
}

// verb is a verb of the CLI itself (help, version, demo, …); the others
// come from package verbs.
type verb struct {
	name    string
	summary string
	usage   string
	// usageFn builds a usage that is costly to build (from the verb
	// table) only when it is shown; it stands in for usage.
	usageFn func() string
	// flags are the verb's own flags (besides --json, --verbose, --help).
	flags []string
	run   func(ctx context.Context, a *app, r *request) int
	// hidden verbs are not listed by help.
	hidden bool
	// ownHelp verbs print their own --help (knowledge: per operation).
	ownHelp bool
}

var localVerbs []*verb

// Usage is the verb's usage text.
func (v *verb) Usage() string {
	if v.usageFn != nil {
		return v.usageFn()
	}
	return v.usage
}

func findLocal(name string) *verb {
	for _, v := range localVerbs {
		if v.name == name {
			return v
		}
	}
	return nil
}

// app carries what every verb shares.
type app struct {
	io       streams
	agentDir string
	cfg      *config.Config
	noColor  bool  // --no-color
	outErr   error // the first failed write to stdout
}

func run(ctx context.Context, args []string, io streams) int {
	if len(args) == 0 || !slices.Contains(quickVerbs, args[0]) {
		armSignals(ctx)
	}
	if len(args) > 0 && args[0] == "supervise" {
		return superviseMain(args[1:])
	}
	if len(args) > 0 && args[0] == "stage" {
		return stageMain(ctx, args[1:], io)
	}
	if len(args) > 0 && args[0] == "__complete" {
		return completeMain(args[1:], io)
	}
	a := &app{io: io}
	args, a.noColor = stripNoColor(args)
	if len(args) == 0 {
		fmt.Fprint(io.err, helpText())
		return exitUsage
	}
	// Flags may stand anywhere, before the verb too.
	lead := 0
	for lead < len(args) && strings.HasPrefix(args[lead], "-") && args[lead] != "-" && args[lead] != "--" {
		lead++
	}
	if lead > 0 && lead < len(args) {
		args = append(append([]string{args[lead]}, args[:lead]...), args[lead+1:]...)
	}
	if lead == len(args) {
		if !slices.Contains(args, "--help") && !slices.Contains(args, "-h") {
			// Flags and no verb (pi-actors --json).
			return a.fail(&request{json: hasFlag(args, "--json")}, usagef("no verb given (only %s); pi-actors help lists the verbs", strings.Join(args, " ")))
		}
		// pi-actors --json --help: help, with the other flags.
		args = append([]string{"help"}, slices.DeleteFunc(slices.Clone(args), func(f string) bool { return f == "--help" || f == "-h" })...)
	}
	name := args[0]
	if name == "--help" || name == "-h" {
		name = "help"
	}
	jsonOut := hasFlag(args, "--json")
	if spec := verbs.Find(name); spec != nil {
		r, err := parseArgs(args, io.in, specFlags(spec), spec.Word)
		if err != nil {
			return a.fail(&request{verb: name, json: jsonOut}, err)
		}
		if r.help {
			return a.written(r, a.ok(r, specHelp(spec), map[string]any{"verb": spec.Name, "usage": spec.Usage, "available": true}))
		}
		return a.runSpec(ctx, spec, r)
	}
	v := findLocal(name)
	if v == nil {
		return a.fail(&request{json: jsonOut}, usagef("unknown verb %q; verbs: %s", name, verbNames()))
	}
	r, err := parseArgs(args, io.in, v.flags, "")
	if err != nil {
		return a.fail(&request{verb: name, json: jsonOut}, err)
	}
	if r.help && v.name != "help" && !v.ownHelp {
		return a.written(r, a.ok(r, v.Usage()+"\n", map[string]any{"verb": v.name, "usage": v.Usage(), "available": true}))
	}
	return a.written(r, v.run(ctx, a, r))
}

// written is code, or output_failed (74) when it is success but the
// answer could not be written to stdout (a full disk, a closed pipe): a
// truncated help or completion script does not pass for success.
func (a *app) written(r *request, code int) int {
	if code != exitOK || a.outErr == nil {
		return code
	}
	return a.fail(r, outputError(a.outErr))
}

func hasFlag(args []string, flag string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == flag {
			return true
		}
	}
	return false
}

// config loads the agent root and pi-actors.toml once.
func (a *app) config() (config.Config, error) {
	if a.cfg != nil {
		return *a.cfg, nil
	}
	dir, err := config.AgentDir()
	if err != nil {
		return config.Config{}, err
	}
	cfg, err := config.Load(dir)
	if err != nil {
		return cfg, err
	}
	a.agentDir, a.cfg = dir, &cfg
	return cfg, nil
}

// envelope is the --json output: exactly one object per request.
type envelope struct {
	OK     bool       `json:"ok"`
	Result any        `json:"result,omitempty"`
	Error  *errorBody `json:"error,omitempty"`
	// Text is the compact text, with --text (for clients that show it
	// beside the result: the pi extension).
	Text *string `json:"text,omitempty"`
}

type errorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
	Details any    `json:"details,omitempty"`
}

func (a *app) writeJSON(v any) error {
	if b, ok := envelopeJSON(v); ok {
		_, err := a.io.out.Write(b)
		return a.wrote(err)
	}
	enc := json.NewEncoder(a.io.out)
	enc.SetEscapeHTML(false)
	return a.wrote(enc.Encode(v))
}

// envelopeJSON is the line writeJSON's encoder writes for a successful
// envelope whose result is a verb's flat result struct (wire.MarshalFlat),
// without encoding/json's field tables of the envelope and the result
// (a twentieth of a spawn's CPU: the CLI writes one answer); ok is false
// for any other value.
func envelopeJSON(v any) ([]byte, bool) {
	env, isEnv := v.(envelope)
	if !isEnv || !env.OK || env.Error != nil {
		return nil, false
	}
	b := []byte(`{"ok":true`)
	if env.Result != nil {
		r, ok := wire.MarshalFlat(env.Result, false)
		if !ok {
			return nil, false
		}
		b = append(append(b, `,"result":`...), r...)
	}
	if env.Text != nil {
		var t bytes.Buffer
		enc := json.NewEncoder(&t)
		enc.SetEscapeHTML(false)
		if enc.Encode(*env.Text) != nil {
			return nil, false
		}
		b = append(append(b, `,"text":`...), bytes.TrimSuffix(t.Bytes(), []byte("\n"))...)
	}
	return append(b, '}', '\n'), true
}

// wrote records the first failed write to stdout (outErr) and returns
// err.
func (a *app) wrote(err error) error {
	if err != nil && a.outErr == nil {
		a.outErr = err
	}
	return err
}

// ok prints a successful result: compact text, or the JSON envelope.
func (a *app) ok(r *request, text string, result any) int {
	if r.json {
		env := envelope{OK: true, Result: result}
		if r.text {
			env.Text = &text
		}
		a.writeJSON(env)
		return exitOK
	}
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	if a.colour() {
		text = colourText(text)
	}
	_, err := io.WriteString(a.io.out, text)
	a.wrote(err)
	return exitOK
}

// fallbackHint is the hint of an error that brings none: the verb's help
// for a usage or data error, where runs are listed for a missing one, the
// kernel's state when it did not answer.
func fallbackHint(verb string, exit int) string {
	help := "pi-actors help"
	if verb != "" {
		help += " " + verb
	}
	switch exit {
	case verbs.ExitNoInput:
		return "pi-actors ps --all lists the runs; inspect target=recipes view=summary the recipes"
	case verbs.ExitUnavailable:
		return "pi-actors kernel status"
	case verbs.ExitTempFail:
		return "retry when the run or file named above is free; " + help
	case verbs.ExitNoPerm:
		return "pi-actors session list"
	}
	return help
}

// fail prints an error and returns its exit code. In --json mode the
// envelope goes to stdout; otherwise the message and hint go to stderr.
func (a *app) fail(r *request, err error) int {
	ce := verbs.Classify(err)
	if ce.Hint == "" || ce.Hint == "pi-actors help" && r.verb != "" && r.verb != "help" {
		// Every error says where to look next (CLI.md's error shape);
		// knowledge errors got a hint by their code in Classify. A usage
		// error's generic help is the verb's.
		c := *ce
		c.Hint = fallbackHint(r.verb, ce.Exit)
		ce = &c
	}
	if r.json {
		env := envelope{Error: &errorBody{Code: ce.Code, Message: ce.Message, Hint: ce.Hint, Details: ce.Details}}
		if r.text {
			msg := ce.Message
			env.Text = &msg
		}
		a.writeJSON(env)
		return ce.Exit
	}
	prefix := "pi-actors"
	if r.verb != "" {
		prefix += " " + r.verb
	}
	if r.item > 0 {
		prefix += fmt.Sprintf(" (item %d)", r.item)
	}
	fmt.Fprintf(a.io.err, "%s: %s\n", prefix, ce.Message)
	if ce.Hint != "" {
		fmt.Fprintf(a.io.err, "hint: %s\n", ce.Hint)
	}
	return ce.Exit
}
