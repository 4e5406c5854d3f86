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
	"syscall"
	"time"

	"github.com/pi-actors/pi-actors/internal/lazyre"

	"github.com/pi-actors/pi-actors/actors/wire"
	"github.com/pi-actors/pi-actors/internal/config"
	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/runs"
)

func init() {
	verbs = append(verbs, &verb{
		name:    "demo",
		summary: "a guided tour of supervised runs",
		usage: `pi-actors demo [keep=true]

A guided tour of about five seconds. In a private agent root it starts a
kernel and a small supervised workload: a service that crashes once and is
restarted, a parallel fan-out, a script actor fed through its mailbox, and
a run that is killed. Each step prints the command it ran and what that
command showed, then the follow-ups your session received. Everything it
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
	demoWait    = 8 * time.Second  // the longest any step waits for a run
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
	if bin, err := kernelBinary(); err != nil || !isFile(bin) {
		self, _ := os.Executable()
		msg := fmt.Sprintf("the demo starts a real kernel, but pi-actors-kernel is not next to %s nor in PATH", self)
		if env := os.Getenv("PI_ACTORS_KERNEL_BIN"); env != "" {
			msg = fmt.Sprintf("the demo starts a real kernel, but PI_ACTORS_KERNEL_BIN=%s is not a file", env)
		}
		return a.fail(r, &cliError{exit: exitUnavailable, code: "kernel_unavailable", msg: msg,
			hint: `install both binaries and run the installed one: CGO_ENABLED=0 go install ./cmd/... && "$(go env GOPATH)/bin/pi-actors" demo`})
	}
	self, err := os.Executable()
	if err != nil {
		return a.fail(r, fmt.Errorf("demo: find this binary: %w", err))
	}
	root, err := os.MkdirTemp("", "pi-actors-demo-")
	if err != nil {
		return a.fail(r, &cliError{exit: exitCantCreate, code: "cant_create", msg: "demo: create a private agent root: " + err.Error()})
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
			return a.fail(r, &cliError{exit: de.exit, code: "demo_failed", msg: de.msg, hint: de.hint})
		}
		return a.fail(r, &cliError{exit: exitSoftware, code: "demo_failed", msg: tourErr.Error()})
	case cleanErr != nil:
		return a.fail(r, &cliError{exit: exitSoftware, code: "demo_cleanup", msg: "demo cleanup: " + cleanErr.Error(),
			hint: "kill what is left by hand; the private root is " + root})
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

// tour is the demo itself, step by step.
func (d *demo) tour() error {
	d.printf("pi-actors demo: a guided tour of supervised runs (about 5 s)\n\n")
	d.printf("Everything below runs in a private agent root, written $DEMO, with its own kernel;\n")
	d.printf("the demo stops all of it at the end and removes $DEMO.\n")
	d.printf("Each step shows the command it ran and what the command printed (long lines wrapped,\n")
	d.printf("their next= hints left out). The runs work in $DEMO, next to their scripts.\n")
	d.printf("  $DEMO   = %s\n", d.root)
	d.printf("  session = %s   (the coordinator session: the runs belong to it and report to it)\n", d.session)

	for name, text := range map[string]string{"service.sh": demoServiceScript, "worker.sh": demoWorkerScript, config.FileName: demoConfig} {
		if err := os.WriteFile(filepath.Join(d.root, name), []byte(text), 0o600); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}

	steps := []func() error{d.stepKernel, d.stepService, d.stepFanout, d.stepWorker, d.stepDoomed, d.stepStop, d.stepFollowups}
	for _, s := range steps {
		if err := d.ctx.Err(); err != nil {
			return err
		}
		if err := s(); err != nil {
			return err
		}
	}
	return nil
}

func (d *demo) stepKernel() error {
	d.header("Start the kernel.",
		"One kernel per agent root hosts the run actors and each session's follow-up queue.",
		"Any verb that needs it starts it; here we start it explicitly.")
	_, err := d.show("kernel", "start")
	return err
}

func (d *demo) stepService() error {
	d.header("A service with a restart policy.",
		"service.sh crashes on its first start (exit 3) and stays up from the second one on. Its",
		"restart policy (on-failure, 200 ms backoff) lets its supervisor bring it back. (sh is the",
		"run's program here: pi-actors itself never runs anything through a shell.)")
	if _, err := d.show("spawn", "as=run:service", "template=sh service.sh {state_dir}",
		`restart:={"policy":"on-failure","backoff_ms":200}`); err != nil {
		return err
	}
	if _, err := d.show("inspect", "target=run:service", "view=status"); err != nil {
		return err
	}
	d.note("… half a second later it crashes; the supervisor waits 200 ms and starts it again:")
	dir := runs.StateDirFor(d.root, "service")
	err := d.waitFor("run:service to be up again after its crash", func() bool {
		in, err := runs.Load(dir)
		if err != nil || in.Status != runs.StatusRunning || in.Progress == nil || in.Progress.Restarts < 1 || in.Progress.Phase != runs.StatusRunning {
			return false
		}
		data, _ := os.ReadFile(dir.Path(runs.StdoutLog))
		return bytes.Contains(data, []byte("second start"))
	})
	if err != nil {
		return err
	}
	if _, err := d.show("inspect", "target=run:service", "view=status"); err != nil {
		return err
	}
	args := []string{"inspect", "target=run:service", "view=events"}
	out, code := d.capture(args...)
	d.command(args, condenseEvents(d.abbrev(out)), "(each JSON line shown as its event and key fields)")
	if code != exitOK {
		return d.failed(args, code)
	}
	if _, err := d.show("inspect", "target=run:service", "view=tail"); err != nil {
		return err
	}
	if err := d.waitSettled("service", false); err != nil {
		return err
	}
	d.note("Your session was told about the crash, with a follow-up (reading them drains the queue):")
	return d.showFollowups()
}

func (d *demo) stepFanout() error {
	d.header("A parallel fan-out.",
		"Four branches of one command run at the same time: branch i sleeps (5-i)/10 s, then prints a",
		"line, so they finish in reverse order, and the run takes about 0.4 s, not the 1 s its sleeps",
		"add up to. The run is done when all four branches are.")
	if _, err := d.show("spawn", "as=run:fanout", "parallel:=true", "repeat:=4",
		`template=sh -c "sleep 0.$1; echo branch $2 finished" sh {4-index} {index+1}`); err != nil {
		return err
	}
	if err := d.waitSettled("fanout", true); err != nil {
		return err
	}
	if _, err := d.show("inspect", "target=run:fanout", "view=status"); err != nil {
		return err
	}
	if _, err := d.show("inspect", "target=run:fanout", "view=tail"); err != nil {
		return err
	}
	d.note("Each branch that finished while others still ran was reported at once, then the run's end:")
	return d.showFollowups()
}

func (d *demo) stepWorker() error {
	d.header("A script actor fed through its mailbox.",
		"worker.sh loops on `pi-actors mailbox claim`: for each task.assign message it sums 1..N",
		"and reports the result to its coordinator (`pi-actors message to=coordinator`). It exits",
		"once its mailbox has stayed empty for 2 s.")
	if _, err := d.show("spawn", "as=run:worker", "template=sh worker.sh {pa}",
		`values:={"pa":`+strconv.Quote(d.self)+`}`); err != nil {
		return err
	}
	for _, n := range []string{"10", "100"} {
		if _, err := d.show("message", "to=run:worker", "type=task.assign", "body="+n); err != nil {
			return err
		}
	}
	dir := runs.StateDirFor(d.root, "worker")
	err := d.waitFor("run:worker to handle both tasks", func() bool {
		recs, _, err := mailbox.NewInbox(dir.Path(runs.InboxFile)).List(10)
		handled := 0
		for _, rec := range recs {
			if rec.Status() == mailbox.StatusHandled {
				handled++
			}
		}
		return err == nil && handled == 2
	})
	if err != nil {
		return err
	}
	if _, err := d.show("inspect", "target=run:worker", "view=mailbox"); err != nil {
		return err
	}
	d.note("… its mailbox stays empty for 2 s, so it exits:")
	if err := d.waitSettled("worker", true); err != nil {
		return err
	}
	if _, err := d.show("inspect", "target=run:worker", "view=tail"); err != nil {
		return err
	}
	d.note("Its results reached your session as follow-ups:")
	return d.showFollowups()
}

func (d *demo) stepDoomed() error {
	d.header("A run that is killed.",
		"control.kill SIGKILLs every process the run started, and its supervisor, at once.")
	if _, err := d.show("spawn", "as=run:doomed", "template=sleep 600"); err != nil {
		return err
	}
	dir := runs.StateDirFor(d.root, "doomed")
	var leaf runs.Leaf
	err := d.waitFor("run:doomed to start sleep", func() bool {
		p := dir.Progress()
		if p == nil || len(p.Leaves) == 0 {
			return false
		}
		leaf = p.Leaves[0]
		return true
	})
	if err != nil {
		return err
	}
	meta, err := dir.Meta()
	if err != nil {
		return err
	}
	if _, err := d.show("inspect", "target=run:doomed", "view=status"); err != nil {
		return err
	}
	if _, err := d.show("message", "to=run:doomed", "type=control.kill"); err != nil {
		return err
	}
	gone := func(pid int, start uint64) bool {
		deadline := time.Now().Add(2 * time.Second)
		for runs.Alive(pid, start) {
			if time.Now().After(deadline) {
				return false
			}
			time.Sleep(10 * time.Millisecond)
		}
		return true
	}
	if !gone(leaf.Pid, leaf.Start) {
		return fmt.Errorf("run:doomed was killed but its process %d (sleep 600) is still running", leaf.Pid)
	}
	if !gone(meta.Pid, meta.PidStart) {
		return fmt.Errorf("run:doomed was killed but its supervisor %d is still running", meta.Pid)
	}
	// The supervisor has written its last word: the status is final.
	if _, err := d.show("inspect", "target=run:doomed", "view=status"); err != nil {
		return err
	}
	d.note(fmt.Sprintf("checked: sleep 600 (pid %d) is gone, and so is the run's supervisor (pid %d).", leaf.Pid, meta.Pid))
	return nil
}

func (d *demo) stepStop() error {
	d.header("Stop the service.",
		"control.cancel sends SIGTERM (SIGKILL after a grace period); service.sh traps it and exits",
		"cleanly. Then the session's runs, as they ended:")
	if _, err := d.show("message", "to=run:service", "type=control.cancel"); err != nil {
		return err
	}
	_, err := d.show("inspect", "target=coordinator", "view=runs")
	return err
}

func (d *demo) stepFollowups() error {
	d.header("The follow-up queue.",
		fmt.Sprintf("Your session received %d follow-ups, each shown above as it arrived. Runs stopped on", d.followups),
		"purpose (run:doomed, run:service) raise none, so once the kernel has seen every run end,",
		"the queue is empty:")
	// A run's last follow-ups are queued when the kernel sees its
	// supervisor exit; wait until no run is live.
	err := d.waitFor("the kernel to see every run end", func() bool {
		out, code := d.capture("kernel", "status", "--json")
		var env struct {
			Result struct {
				LiveRuns float64 `json:"live_runs"`
			} `json:"result"`
		}
		return code == exitOK && json.Unmarshal([]byte(out), &env) == nil && env.Result.LiveRuns == 0
	})
	if err != nil {
		return err
	}
	return d.showFollowups()
}

// waitSettled waits until the kernel has queued the follow-ups of what the
// run reported so far and, with ended, of the run's end: notified.json
// records how far it got.
func (d *demo) waitSettled(run string, ended bool) error {
	dir := runs.StateDirFor(d.root, run)
	what := "the kernel to take in run:" + run + "'s reports"
	if ended {
		what = "run:" + run + " to finish"
	}
	return d.waitFor(what, func() bool {
		var n struct {
			OutboxLines int    `json:"outbox_lines"`
			Terminal    string `json:"terminal"`
		}
		lines, err := mailbox.Read(dir.Path(runs.OutboxFile))
		if err != nil || dir.ReadJSON(runs.NotifiedFile, &n) != nil || n.OutboxLines < len(lines) {
			return false
		}
		if !ended {
			return true
		}
		in, err := runs.Load(dir)
		return err == nil && runs.Terminal(in.Status) && (n.Terminal != "" || in.Handled != nil)
	})
}

func (d *demo) showFollowups() error {
	args := []string{"inspect", "target=coordinator", "view=followups"}
	out, code := d.capture(args...)
	text, note := condenseFollowups(out)
	d.command(args, text, note)
	if code != exitOK {
		return d.failed(args, code)
	}
	if m := followupsRe.FindStringSubmatch(out); m != nil {
		n, _ := strconv.Atoi(m[1])
		d.followups += n
	}
	return nil
}

// followupsRe finds the count in the first line of view=followups.
var followupsRe = lazyre.New(`(?m)^session=\S+ followups=(\d+)`)

// cleanup stops every run of the private root, then its kernel, checks
// that no process of the demo is left, and removes the root (unless keep).
// shown prints the kernel stop as the last step of the tour.
func (d *demo) cleanup(keep, shown bool) error {
	ctx := d.ctx
	d.ctx = context.Background()
	defer func() { d.ctx = ctx }()
	deadline := time.Now().Add(demoCleanup)
	var problems []string

	// Every live run: control.kill through the kernel, else by hand.
	dirs, _ := filepath.Glob(filepath.Join(runs.Root(d.root), "*", runs.RunFile))
	for _, f := range dirs {
		dir := runs.Dir(filepath.Dir(f))
		in, err := runs.Load(dir)
		if err != nil || runs.Terminal(in.Status) {
			continue
		}
		d.capture("message", "to=run:"+in.Meta.Run, "type=control.kill")
		if in, err = runs.Load(dir); err == nil && !runs.Terminal(in.Status) {
			killRunByHand(in)
		}
	}
	if shown {
		d.header("Clean up.", "Stop the kernel (every run has ended) and remove the private root.")
		if _, err := d.show("kernel", "stop"); err != nil {
			problems = append(problems, err.Error())
		}
	} else {
		d.capture("kernel", "stop")
	}
	// A kernel that did not stop is killed.
	var k wire.Info
	if data, err := os.ReadFile(filepath.Join(wire.TmpDir(d.root), "kernel.json")); err == nil && json.Unmarshal(data, &k) == nil && k.Pid > 0 {
		for runs.Alive(k.Pid, k.PidStart) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if runs.Alive(k.Pid, k.PidStart) && processMentions(k.Pid, d.root) {
			syscall.Kill(k.Pid, syscall.SIGKILL)
			problems = append(problems, fmt.Sprintf("the kernel (pid %d) did not stop and was killed", k.Pid))
		}
	}
	// Nothing that mentions the private root may be left running.
	var left []int
	for {
		left = demoLeftovers(d.root)
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(left) > 0 {
		runs.KillAll(left, syscall.SIGKILL)
		problems = append(problems, fmt.Sprintf("processes %v were still running and were killed", left))
	} else if shown {
		d.note("checked: no process of the demo is left.")
	}
	// Leave the private root before it goes.
	d.restoreWd()
	if keep {
		if shown {
			d.note("kept $DEMO (keep=true).")
		}
	} else if err := os.RemoveAll(d.root); err != nil {
		problems = append(problems, "remove "+d.root+": "+err.Error())
	} else if shown {
		d.note("removed $DEMO.")
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	if !shown {
		what := "removed " + d.root
		if keep {
			what = "kept " + d.root
		}
		d.printf("stopped every run and the kernel; %s.\n", what)
	}
	return nil
}

// killRunByHand SIGKILLs what is left of a run whose supervisor did not
// apply control.kill: its session and its recorded leaf groups.
func killRunByHand(in *runs.Info) {
	if m := in.Meta; m.Pid > 0 && runs.Alive(m.Pid, m.PidStart) {
		runs.KillAll(runs.SessionMembers(m.Pid), syscall.SIGKILL)
	}
	if in.Progress != nil {
		for _, l := range in.Progress.Leaves {
			if runs.Alive(l.Pid, l.Start) {
				syscall.Kill(-l.Pid, syscall.SIGKILL)
			}
		}
	}
}

// demoLeftovers lists the live processes (other than this one) that
// mention the private root (processMentions).
func demoLeftovers(root string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() || !runs.Alive(pid, 0) {
			continue
		}
		if processMentions(pid, root) {
			out = append(out, pid)
		}
	}
	return out
}

// processMentions reports whether a process's command line or environment
// names root: as a path prefix or a whole word (so another demo's root,
// which root may be a prefix of, does not count).
func processMentions(pid int, root string) bool {
	for _, f := range []string{"cmdline", "environ"} {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, f))
		if err != nil {
			continue
		}
		for _, end := range []string{"/", "\x00", " ", "'", `"`} {
			if bytes.Contains(data, []byte(root+end)) {
				return true
			}
		}
		if bytes.HasSuffix(data, []byte(root)) {
			return true
		}
	}
	return false
}

func (d *demo) summary(keep bool) {
	d.printf("\nWhat you saw\n")
	for _, s := range []string{
		"run:service crashed once and its supervisor restarted it (restart policy on-failure, 200 ms backoff).",
		"run:fanout ran four branches at the same time; each was reported as it finished.",
		"run:worker, a plain sh script, took tasks from its mailbox and reported each result upward.",
		"run:doomed was killed with control.kill; none of its processes was left.",
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
