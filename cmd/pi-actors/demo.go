package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pi-actors/pi-actors/verbs"
)

func init() {
	localVerbs = append(localVerbs, &verb{
		name:    "demo",
		summary: "a guided tour of supervised runs and the memory",
		usage: `pi-actors demo [keep=true]

A guided tour of about eight seconds. In a private agent root it starts a
kernel and a small supervised workload: a service that crashes once and is
restarted, a parallel fan-out, a script actor fed through its mailbox, a
run that is killed, a room swarm (a locker and three workers), and the
memory: the demo's runs recalled from the knowledge store, and an atom
about one of its files found by the file. Each step prints the command it
ran and what that command showed, then the follow-ups your session received. Everything it
started is stopped at the end and the private root is removed (keep=true
keeps the root and prints its path). Ctrl-C also cleans up, then exits 130.

It runs the real pi-actors-kernel, which must be next to pi-actors:
  CGO_ENABLED=0 go install ./cmd/... && "$(go env GOPATH)/bin/pi-actors" demo`,
		run: runDemo,
	})
}

// Bounds of the demo.
const (
	demoWidth   = 112              // characters of one shown output line
	demoWait    = 30 * time.Second // the longest any step waits for a run (the swarm takes 0.4 s here, 8 s under -race beside other tests on 2 busy cores)
	demoCleanup = 10 * time.Second // the longest the cleanup may take
)

// demoServiceScript crashes on its first start (a marker file in the run's
// state directory remembers it) and stays up from the second on; SIGTERM
// (control.cancel) stops it cleanly.
const demoServiceScript = `# service.sh STATE_DIR: a small service for the pi-actors demo.
# Its first start crashes (exit 3); from the second start on it stays up.
trap 'echo "service: stopping cleanly"; exit 0' TERM
if [ ! -e "$1/crashed-once" ]; then
  : > "$1/crashed-once"
  echo "service: first start"
  sleep 0.5
  echo "service: crashing on purpose (exit 3)" >&2
  exit 3
fi
echo "service: second start, up and serving"
while :; do sleep 1; done
`

// demoWorkerScript is a script actor: it claims task.assign messages from
// its run's inbox, sums 1..N and reports each result to its coordinator.
// It exits when its mailbox stays empty for 2 s.
const demoWorkerScript = `# worker.sh PI_ACTORS: a script actor for the pi-actors demo. It claims
# task.assign messages (body: a number N) from its mailbox, sums 1..N and
# reports each result to its coordinator; it exits once its mailbox has
# stayed empty for 2 s.
pa=$1
echo "worker: ready for task.assign messages"
while msg=$("$pa" mailbox claim wait=2s 2>/dev/null); do
  id=$(printf '%s\n' "$msg" | sed -n 's/.*"id":"\([^"]*\)".*/\1/p')
  n=$(printf '%s\n' "$msg" | sed -n 's/.*"body":"*\([0-9][0-9]*\).*/\1/p')
  if [ -z "$n" ] || [ "$n" -lt 1 ]; then
    echo "worker: $id: the body is not a positive number" >&2
    "$pa" mailbox done id="$id" status=failed error="body must be a positive number" >/dev/null
    continue
  fi
  sum=$(( $(seq -s + 1 "$n") ))
  echo "worker: sum(1..$n) = $sum"
  "$pa" mailbox done id="$id" status=handled >/dev/null
  "$pa" message to=coordinator from="$PI_ACTORS_ADDRESS" type=task.result \
    summary="sum(1..$n) = $sum" body:="{\"n\":$n,\"sum\":$sum}" >/dev/null
done
echo "worker: mailbox empty for 2 s, exiting"
`

// demoConfig keeps the private root quiet: no draft recipes for the
// inline spawns, and a short kill grace.
const demoConfig = `# pi-actors demo: a private agent root, removed when the demo ends.
[runs]
capture_drafts = false

[exec]
kill_grace_ms = 1000
`

// demoError ends the demo with an exit code.
type demoError struct {
	exit int
	msg  string
	hint string
}

func (e *demoError) Error() string { return e.msg }

// demo is one tour: the private root, the session, and the output.
type demo struct {
	ctx     context.Context
	out     io.Writer
	root    string // the private agent root
	session string
	self    string // this binary: the worker calls it
	// restoreWd goes back to the caller's working directory.
	restoreWd func()
	step      int
	followups int // follow-ups shown so far
}

func runDemo(ctx context.Context, a *app, r *request) int {
	keep := false
	for _, k := range r.order {
		if k != "keep" {
			return a.fail(r, usagef("unknown demo parameter %s (parameters: keep)", k))
		}
		switch fmt.Sprint(r.params[k]) {
		case "true":
			keep = true
		case "false":
		default:
			return a.fail(r, usagef("keep must be true or false (got %v)", r.params[k]))
		}
	}
	if len(r.words) > 0 {
		return a.fail(r, usagef("demo takes no words (got %q): pi-actors demo [keep=true]", r.words[0]))
	}
	if r.json {
		return a.fail(r, usagef("demo is a guided tour for people: it has no --json form"))
	}
	if bin, err := verbs.KernelBinary(); err != nil || !isFile(bin) {
		self, _ := os.Executable()
		msg := fmt.Sprintf("the demo starts a real kernel, but pi-actors-kernel is not next to %s nor in PATH", self)
		if env := os.Getenv("PI_ACTORS_KERNEL_BIN"); env != "" {
			msg = fmt.Sprintf("the demo starts a real kernel, but PI_ACTORS_KERNEL_BIN=%s is not a file", env)
		}
		return a.fail(r, &cliError{Exit: exitUnavailable, Code: "kernel_unavailable", Message: msg,
			Hint: `install the binaries and run the installed one: CGO_ENABLED=0 go install ./cmd/... && "$(go env GOPATH)/bin/pi-actors" demo`})
	}
	self, err := os.Executable()
	if err != nil {
		return a.fail(r, fmt.Errorf("demo: find this binary: %w", err))
	}
	root, err := os.MkdirTemp("", "pi-actors-demo-")
	if err != nil {
		return a.fail(r, &cliError{Exit: exitCantCreate, Code: "cant_create", Message: "demo: create a private agent root: " + err.Error()})
	}
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		os.RemoveAll(root)
		return a.fail(r, fmt.Errorf("demo: %w", err))
	}
	root = real
	d := &demo{ctx: ctx, out: a.io.out, root: root, session: fmt.Sprintf("demo-%d", os.Getpid()), self: self, restoreWd: func() {}}

	// The verbs run in this process against the private root, as the demo
	// session; the caller's environment comes back at the end.
	restore := setenvs(map[string]string{
		"PI_CODING_AGENT_DIR": root, "PI_ACTORS_SESSION": d.session,
		"PI_ACTORS_RUN_ID": "", "PI_ACTORS_ADDRESS": "", "PI_ACTORS_STATE_DIR": "",
	})
	defer restore()
	// The runs work in the private root, where their scripts are.
	if wd, err := os.Getwd(); err == nil {
		d.restoreWd = func() { os.Chdir(wd) }
	}
	if err := os.Chdir(root); err != nil {
		os.RemoveAll(root)
		return a.fail(r, fmt.Errorf("demo: %w", err))
	}
	defer d.restoreWd()

	tourErr := d.tour()
	interrupted := ctx.Err() != nil
	if interrupted {
		fmt.Fprintf(d.out, "\ninterrupted: stopping everything the demo started…\n")
	} else if tourErr != nil {
		fmt.Fprintf(d.out, "\nthe demo stopped early: %v\nstopping everything it started…\n", tourErr)
	}
	cleanErr := d.cleanup(keep, tourErr == nil && !interrupted)
	switch {
	case interrupted:
		if cleanErr != nil {
			fmt.Fprintf(a.io.err, "pi-actors demo: cleanup: %v\n", cleanErr)
		}
		return 130
	case tourErr != nil:
		if cleanErr != nil {
			fmt.Fprintf(a.io.err, "pi-actors demo: cleanup: %v\n", cleanErr)
		}
		var de *demoError
		if errors.As(tourErr, &de) {
			return a.fail(r, &cliError{Exit: de.exit, Code: "demo_failed", Message: de.msg, Hint: de.hint})
		}
		return a.fail(r, &cliError{Exit: exitSoftware, Code: "demo_failed", Message: tourErr.Error()})
	case cleanErr != nil:
		return a.fail(r, &cliError{Exit: exitSoftware, Code: "demo_cleanup", Message: "demo cleanup: " + cleanErr.Error(),
			Hint: "kill what is left by hand; the private root is " + root})
	}
	d.summary(keep)
	return exitOK
}

// isFile reports whether path names an existing regular file.
func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// setenvs sets environment variables (empty: unset) and returns what puts
// the previous values back.
func setenvs(vars map[string]string) func() {
	type old struct {
		v  string
		ok bool
	}
	saved := map[string]old{}
	for k, v := range vars {
		prev, ok := os.LookupEnv(k)
		saved[k] = old{prev, ok}
		if v == "" {
			os.Unsetenv(k)
		} else {
			os.Setenv(k, v)
		}
	}
	return func() {
		for k, o := range saved {
			if o.ok {
				os.Setenv(k, o.v)
			} else {
				os.Unsetenv(k)
			}
		}
	}
}

func (d *demo) summary(keep bool) {
	d.printf("\nWhat you saw\n")
	for _, s := range []string{
		"run:service crashed once and its supervisor restarted it (restart policy on-failure, 200 ms backoff).",
		"run:fanout ran four branches at the same time; each was reported as it finished.",
		"run:worker, a plain sh script, took tasks from its mailbox and reported each result upward.",
		"run:doomed was killed with control.kill; none of its processes was left.",
		"run:swarm split 30 tasks between three actor-workers through a locker; its room holds the conversation.",
		"Every run was recorded as it ended: recall found run:service's attempts by what they printed, and an atom\n    about service.sh was found by the file it owns.",
		"Your session heard about ends, results and failures as follow-ups, without polling.",
	} {
		d.printf("  - %s\n", s)
	}
	d.printf("\nTry next, in your own agent root ($PI_CODING_AGENT_DIR, by default ~/.pi/agent):\n")
	for _, c := range [][2]string{
		{"export PI_ACTORS_SESSION=me", "follow-ups belong to a session: name yours"},
		{"pi-actors spawn as=run:tick template='sleep 30'", "start a supervised run"},
		{"pi-actors inspect target=run:tick view=status", "what it is doing now"},
		{"pi-actors message to=run:tick type=control.kill", "stop it and every process it started"},
		{"pi-actors watch", "follow-ups as they arrive (Ctrl-C stops)"},
		{"pi-actors knowledge recall query='tick'", "what your runs did, recalled"},
		{"pi-actors kernel stop", "stop the kernel; runs keep running"},
	} {
		d.printf("  %-50s # %s\n", c[0], c[1])
	}
	if keep {
		d.printf("\nThe demo's runs are kept in %s; look at them with\n  PI_CODING_AGENT_DIR=%s PI_ACTORS_SESSION=%s pi-actors inspect target=coordinator view=runs\n", d.root, d.root, d.session)
	}
}

// capture runs a verb of this CLI in this process and returns what it
// printed (stdout and stderr) and its exit code.
func (d *demo) capture(args ...string) (string, int) {
	var buf bytes.Buffer
	code := run(d.ctx, args, streams{in: strings.NewReader(""), out: &buf, err: &buf})
	return buf.String(), code
}

// show runs a verb and prints it with its output; a failing verb ends the
// tour.
func (d *demo) show(args ...string) (string, error) {
	out, code := d.capture(args...)
	d.command(args, out, "")
	if code != exitOK {
		return out, d.failed(args, code)
	}
	return out, nil
}

// failed ends the tour after a verb failed (its output is shown above).
func (d *demo) failed(args []string, code int) error {
	if err := d.ctx.Err(); err != nil {
		return err
	}
	cmd := "pi-actors " + strings.Join(args[:min(2, len(args))], " ")
	if code == exitUnavailable {
		return &demoError{exit: exitUnavailable, msg: cmd + ": the kernel is unavailable (exit 69)",
			hint: "pi-actors demo keep=true keeps the private root and its kernel log (tmp/pi-actors/kernel.log)"}
	}
	return &demoError{exit: exitSoftware, msg: fmt.Sprintf("%s exited %d (its output is above)", cmd, code)}
}

// header starts a numbered step.
func (d *demo) header(title string, lines ...string) {
	d.step++
	d.printf("\n%d. %s\n", d.step, title)
	for _, l := range lines {
		d.printf("   %s\n", l)
	}
}

// note prints a line of narration inside a step.
func (d *demo) note(s string) { d.printf("   %s\n", s) }

// command prints `$ pi-actors <args>` and the output, indented and bounded.
func (d *demo) command(args []string, out, note string) {
	words := make([]string, len(args))
	for i, a := range args {
		words[i] = d.abbrev(displayArg(a))
	}
	d.printf("   $ pi-actors %s\n", strings.Join(words, " "))
	if note != "" {
		d.printf("     %s\n", note)
	}
	out = strings.TrimRight(out, "\n")
	if out == "" {
		d.printf("     (no output)\n")
		return
	}
	for _, l := range strings.Split(out, "\n") {
		for _, part := range showLines(d.abbrev(l), demoWidth) {
			d.printf("     %s\n", part)
		}
	}
}

func (d *demo) printf(format string, args ...any) { fmt.Fprintf(d.out, format, args...) }

// abbrev writes the private root as $DEMO.
func (d *demo) abbrev(s string) string { return strings.ReplaceAll(s, d.root, "$DEMO") }

// waitFor polls cond every 20 ms for up to demoWait; Ctrl-C ends it.
func (d *demo) waitFor(what string, cond func() bool) error {
	deadline := time.Now().Add(demoWait)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s waiting for %s", demoWait, what)
		}
		select {
		case <-d.ctx.Done():
			return d.ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// displayArg quotes one argument as a POSIX shell would need it.
func displayArg(a string) string {
	if a == "" {
		return "''"
	}
	if !strings.ContainsAny(a, " \t\n'\"{}$*?[]|&;<>()\\`!#~") {
		return a
	}
	if key, val, isJSON, ok := splitParam(a); ok {
		sep := "="
		if isJSON {
			sep = ":="
		}
		return key + sep + shellQuote(val)
	}
	return shellQuote(a)
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// cutDisplay bounds one shown line.
func cutDisplay(s string, max int) string {
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}

// condenseEvents shows each events.jsonl line of `inspect view=events` as
// its event name and its short fields (no timestamps or commands).
func condenseEvents(out string) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	for i, l := range lines {
		var ev map[string]any
		if !strings.HasPrefix(l, "{") || json.Unmarshal([]byte(l), &ev) != nil {
			continue
		}
		name, _ := ev["event"].(string)
		var keys []string
		for k := range ev {
			switch k {
			case "event", "ts", "run", "command", "activeSubagents", "inbox_id":
				continue
			}
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := []string{fmt.Sprintf("%-20s", name)}
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s=%v", k, ev[k]))
		}
		if c, ok := ev["command"].(string); ok && name == "command.start" {
			parts = append(parts, "command="+strconv.Quote(cutDisplay(c, 60)))
		}
		lines[i] = strings.TrimRight(strings.Join(parts, " "), " ")
	}
	return strings.Join(lines, "\n")
}

// condenseFollowups keeps, of `inspect target=coordinator
// view=followups`, the header, each follow-up's first line and its Body
// line; the run-file and next-step lines are left out (and counted).
func condenseFollowups(out string) (string, string) {
	blocks := strings.Split(strings.TrimRight(out, "\n"), "\n\n")
	var keep []string
	dropped := 0
	for i, b := range blocks {
		lines := strings.Split(b, "\n")
		if i == 0 && len(lines) > 0 && strings.HasPrefix(lines[0], "session=") {
			keep = append(keep, lines[0])
			lines = lines[1:]
		}
		for j, l := range lines {
			switch {
			case j == 0, strings.HasPrefix(l, "Body: "), strings.HasPrefix(l, "Error: "), l == "(no follow-ups)":
				keep = append(keep, l)
			default:
				dropped++
			}
		}
	}
	note := ""
	if dropped > 0 {
		note = "(each follow-up's first line and body; its run files and next steps are left out)"
	}
	return strings.Join(keep, "\n"), note
}

// showLines bounds one line of a verb's output for display: a line longer
// than width loses its next= hints, then wraps at spaces (continuation
// lines indented two more); a single word longer than width is cut.
func showLines(s string, width int) []string {
	if len([]rune(s)) <= width {
		return []string{s}
	}
	words := strings.Split(s, " ")
	kept := words[:0:0]
	for _, w := range words {
		if !strings.HasPrefix(w, "next=") {
			kept = append(kept, w)
		}
	}
	var out []string
	line := ""
	for _, w := range kept {
		limit := width
		if len(out) > 0 {
			limit = width - 2
		}
		w = cutDisplay(w, width-2)
		switch {
		case line == "":
			line = w
		case len([]rune(line))+1+len([]rune(w)) <= limit:
			line += " " + w
		default:
			out = append(out, line)
			line = w
		}
	}
	if line != "" {
		out = append(out, line)
	}
	for i := 1; i < len(out); i++ {
		out[i] = "  " + out[i]
	}
	return out
}
