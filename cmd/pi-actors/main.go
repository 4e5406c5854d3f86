// Command pi-actors is the CLI of pi-actors: a process supervisor and
// memory for coding-agent swarms. The verbs mirror the agent tool surface
// (spawn, message, inspect, exec, call, register_tool, …); see
// `pi-actors help` and docs/cli.md.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/pi-actors/pi-actors/internal/config"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	code := run(ctx, os.Args[1:], streams{in: os.Stdin, out: os.Stdout, err: os.Stderr})
	stop()
	os.Exit(code)
}

// streams is the IO a verb may use; verbs never touch os.Std* directly.
type streams struct {
	in       io.Reader
	out, err io.Writer
}

// verb is one CLI verb.
type verb struct {
	name    string
	summary string
	usage   string
	// firstWord makes the first non-flag word positional (exec's template).
	firstWord bool
	// flags are the verb's own flags (besides --json, --verbose, --help).
	flags []string
	// batch: the verb takes a stdin batch whole (the kernel runs it in
	// parallel) instead of one request at a time.
	batch bool
	run   func(ctx context.Context, a *app, r *request) int
	// issue names the capability a verb waits for; such verbs are listed
	// but answer "not yet available".
	pending bool
}

var verbs []*verb

func findVerb(name string) *verb {
	for _, v := range verbs {
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
}

func run(ctx context.Context, args []string, io streams) int {
	if len(args) > 0 && args[0] == "supervise" {
		return superviseMain(args[1:])
	}
	a := &app{io: io}
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
	name := args[0]
	if name == "--help" || name == "-h" {
		name = "help"
	}
	v := findVerb(name)
	if v == nil {
		return a.fail(&request{verb: name, json: hasFlag(args, "--json")}, usagef("unknown verb %q; verbs: %s", name, verbNames()))
	}
	r, err := parseArgs(args, io.in, v)
	if err != nil {
		return a.fail(&request{verb: name, json: hasFlag(args, "--json")}, err)
	}
	if r.help && v.name != "help" {
		fmt.Fprint(io.out, verbHelp(v))
		return exitOK
	}
	if v.pending {
		return a.fail(r, &cliError{exit: exitUsage, code: "not_available",
			msg:  fmt.Sprintf("%s is not yet available in this build", v.name),
			hint: "available now: " + availableNames()})
	}
	if len(r.batch) == 0 || v.batch {
		return v.run(ctx, a, r)
	}
	code := exitOK
	for _, item := range r.single() {
		if c := v.run(ctx, a, item); c != exitOK && code == exitOK {
			code = c
		}
	}
	return code
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
}

type errorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
	Details any    `json:"details,omitempty"`
}

func (a *app) writeJSON(v any) {
	enc := json.NewEncoder(a.io.out)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

// ok prints a successful result: compact text, or the JSON envelope.
func (a *app) ok(r *request, text string, result any) int {
	if r.json {
		a.writeJSON(envelope{OK: true, Result: result})
		return exitOK
	}
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	io.WriteString(a.io.out, text)
	return exitOK
}

// fail prints an error and returns its exit code. In --json mode the
// envelope goes to stdout; otherwise the message and hint go to stderr.
func (a *app) fail(r *request, err error) int {
	ce := classify(err)
	if r.json {
		a.writeJSON(envelope{Error: &errorBody{Code: ce.code, Message: ce.msg, Hint: ce.hint, Details: ce.details}})
		return ce.exit
	}
	prefix := "pi-actors"
	if r.verb != "" {
		prefix += " " + r.verb
	}
	fmt.Fprintf(a.io.err, "%s: %s\n", prefix, ce.msg)
	if ce.hint != "" {
		fmt.Fprintf(a.io.err, "hint: %s\n", ce.hint)
	}
	return ce.exit
}
