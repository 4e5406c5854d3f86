package runs_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/internal/testproc"
	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/sessions"
)

// TestMain doubles as the processes a run needs, so everything below is a
// real process tree: with PI_ACTORS_TEST_HELPER set, `<test binary>
// supervise <dir>` is the run supervisor (runs.Supervise, readiness pipe on
// fd 3) and any other first word is a named helper (internal/testproc).
func TestMain(m *testing.M) {
	testproc.NoRaceExitSleep()
	if os.Getenv(testproc.EnvVar) != "" {
		if len(os.Args) == 3 && os.Args[1] == "supervise" {
			if os.Getenv("PI_RUNS_TEST_TERM_AT_HANDOVER") == "1" {
				runs.TermAtHandover()
			}
			os.Exit(runs.Main("supervise", os.Args[2:]))
		}
		testproc.Main(os.Args[1:])
	}
	testproc.Watchdog()
	os.Exit(m.Run())
}

// bin is this test binary: leaves run it as a helper ({bin} sleep-forever).
func bin() string { return os.Args[0] }

// testRun is a run started by a test.
type testRun struct {
	t     *testing.T
	agent string
	dir   runs.Dir
	meta  *runs.Meta
	proc  *os.Process
	done  chan struct{} // closed when the supervisor has exited and been reaped
}

// spec returns a run spec whose supervisor and leaves are this binary.
func spec(agent, id string, tmpl any, values map[string]any) runs.Spec {
	v := map[string]any{"bin": bin()}
	for k, x := range values {
		v[k] = x
	}
	return runs.Spec{
		ID: id, Cwd: agent, Owner: "s1", LaunchSource: "spawn", Template: tmpl, Values: v, Depth: 1,
		Limits:     runs.Limits{MaxParallel: 64, MaxLeaves: 1000, KillGraceMS: 300, LogMaxBytes: 1 << 20, LogKeep: 1},
		Env:        append(os.Environ(), testproc.EnvVar+"=1"),
		Supervisor: []string{bin(), "supervise"},
	}
}

// start starts a run and arranges that nothing it started outlives the
// test.
func start(t *testing.T, agent string, sp runs.Spec) *testRun {
	t.Helper()
	meta, proc, err := runs.Start(agent, sp)
	if err != nil {
		t.Fatalf("start run:%s: %v", sp.ID, err)
	}
	r := &testRun{t: t, agent: agent, dir: runs.Dir(meta.StateDir), meta: meta, proc: proc, done: make(chan struct{})}
	go func() {
		proc.Wait()
		close(r.done)
	}()
	t.Cleanup(func() { r.killAll() })
	return r
}

// killAll kills the run's whole session (the supervisor leads its own):
// the supervisor, then — once it is gone and can fork no more — whatever
// is left in the session, until nothing is (a leaf forked just as the
// first kill went out would otherwise survive the test).
func (r *testRun) killAll() {
	pid := r.meta.Pid
	runs.KillAll(runs.SessionMembers(pid), syscall.SIGKILL)
	select {
	case <-r.done:
	case <-time.After(5 * time.Second):
		r.t.Errorf("run:%s supervisor did not exit", r.meta.Run)
	}
	for deadline := time.Now().Add(5 * time.Second); ; {
		var left []int
		for _, p := range runs.SessionMembers(pid) {
			if st, err := runs.Stat(p); err == nil && st.State != "Z" {
				left = append(left, p)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			r.t.Errorf("run:%s: processes left in its session: %v", r.meta.Run, left)
			return
		}
		runs.KillAll(left, syscall.SIGKILL)
		time.Sleep(10 * time.Millisecond)
	}
}

// eventually polls cond every 5 ms until it holds or d passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// wait waits for the supervisor to exit and returns result.json.
func (r *testRun) wait(d time.Duration) *runs.Result {
	r.t.Helper()
	select {
	case <-r.done:
	case <-time.After(d):
		r.t.Fatalf("run:%s still running after %s; events:\n%s", r.meta.Run, d, r.read(runs.EventsFile))
	}
	res := r.dir.Result()
	if res == nil {
		r.t.Fatalf("run:%s ended without result.json; events:\n%s", r.meta.Run, r.read(runs.EventsFile))
	}
	return res
}

// send appends a message to the run's inbox and rings the supervisor's
// doorbell, as the kernel does.
func (r *testRun) send(typ string, body any) string {
	r.t.Helper()
	rec, _, err := mailbox.NewInbox(r.dir.Path(runs.InboxFile)).Append(map[string]any{"to": r.meta.Address, "type": typ, "body": body})
	if err != nil {
		r.t.Fatal(err)
	}
	syscall.Kill(r.meta.Pid, syscall.SIGUSR1)
	return rec.ID()
}

func (r *testRun) read(name string) string {
	data, _ := os.ReadFile(r.dir.Path(name))
	return string(data)
}

// events returns events.jsonl decoded.
func (r *testRun) events() []map[string]any {
	var out []map[string]any
	f, err := os.Open(r.dir.Path(runs.EventsFile))
	if err != nil {
		return nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// eventsNamed returns the events of one kind, in order.
func (r *testRun) eventsNamed(name string) []map[string]any {
	var out []map[string]any
	for _, e := range r.events() {
		if e["event"] == name {
			out = append(out, e)
		}
	}
	return out
}

func eventTime(t *testing.T, e map[string]any) time.Time {
	t.Helper()
	ts, err := time.Parse(time.RFC3339Nano, fmt.Sprint(e["ts"]))
	if err != nil {
		t.Fatalf("event %v: ts: %v", e, err)
	}
	return ts
}

func waitPid(t *testing.T, file string) int {
	t.Helper()
	eventually(t, 10*time.Second, "pid file "+filepath.Base(file), func() bool { return testproc.ReadPid(file) > 0 })
	return testproc.ReadPid(file)
}

func assertGone(t *testing.T, what string, pid int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for testproc.Alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("%s (pid %d) survived", what, pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestValidIDRejectsPathTraversal(t *testing.T) {
	for _, id := range []string{"", ".", "..", "../x", "a/b", "/abs", "a b", "a\x00b", "ü", strings.Repeat("a", 129), "a\nb", "..a", ".x.new-5", "archived", "preserved-artifacts", "tmp", "index.jsonl", "index.jsonl.lock"} {
		if err := runs.ValidID(id); !errors.Is(err, runs.ErrInvalidID) {
			t.Errorf("ValidID(%q) = %v, want ErrInvalidID", id, err)
		}
	}
	for _, id := range []string{"a", "A-1_b.c", "a..", "x.new-5", "archived-1", "my-tmp", strings.Repeat("a", 128)} {
		if err := runs.ValidID(id); err != nil {
			t.Errorf("ValidID(%q) = %v, want ok", id, err)
		}
	}
}

// An invalid id is refused before anything exists: no directory anywhere
// under the agent root, no process.
func TestStartInvalidIDCreatesNothing(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	for _, id := range []string{"..", "../escape", "a/b", ""} {
		_, _, err := runs.Start(agent, spec(agent, id, "{bin} exit 0", nil))
		if !errors.Is(err, runs.ErrInvalidID) {
			t.Errorf("Start(%q) = %v, want ErrInvalidID", id, err)
		}
	}
	ents, _ := os.ReadDir(agent)
	if len(ents) != 0 {
		t.Fatalf("Start with invalid ids created %s", ents[0].Name())
	}
}

func TestStartRefusesLiveID(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	pidf := filepath.Join(agent, "leaf.pid")
	r := start(t, agent, spec(agent, "svc", "{bin} sleep-forever {p}", map[string]any{"p": pidf}))
	waitPid(t, pidf)
	before := r.read(runs.RunFile)
	_, _, err := runs.Start(agent, spec(agent, "svc", "{bin} exit 0", nil))
	if !errors.Is(err, runs.ErrBusy) {
		t.Fatalf("second Start of a live id: %v, want ErrBusy", err)
	}
	if r.read(runs.RunFile) != before {
		t.Fatal("the refused start rewrote run.json")
	}
	if !testproc.Alive(testproc.ReadPid(pidf)) {
		t.Fatal("the refused start disturbed the live run")
	}
}

// Many concurrent starts of one id: exactly one wins; the others are busy
// and start nothing.
func TestStartSameIDConcurrently(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	const n = 8
	var (
		mu      sync.Mutex
		started []*testRun
		busy    int
		wg      sync.WaitGroup
	)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			meta, proc, err := runs.Start(agent, spec(agent, "one", "{bin} sleep-forever", nil))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				r := &testRun{t: t, agent: agent, dir: runs.Dir(meta.StateDir), meta: meta, proc: proc, done: make(chan struct{})}
				go func() { proc.Wait(); close(r.done) }()
				started = append(started, r)
			case errors.Is(err, runs.ErrBusy):
				busy++
			default:
				t.Errorf("Start: %v", err)
			}
		}()
	}
	wg.Wait()
	for _, r := range started {
		r.killAll()
	}
	if len(started) != 1 || busy != n-1 {
		t.Fatalf("%d starts succeeded, %d busy; want 1 and %d", len(started), busy, n-1)
	}
}

// Every process of a run gets its identity in the environment.
func TestRunEnvironment(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	sp := spec(agent, "env", "{bin} print-env PI_ACTORS_RUN_ID PI_ACTORS_ADDRESS PI_ACTORS_STATE_DIR PI_ACTORS_SESSION PI_ACTORS_DEPTH "+sessions.RemoteRunEnv+" PI_TEST_TWICE", nil)
	sp.Owner, sp.Depth = "sess-9", 3
	// The identity of the caller's run (here or on another node) is not
	// the new run's; a variable given twice has its last value (as
	// os/exec does).
	sp.Env = append(sp.Env, "PI_ACTORS_RUN_ID=inherited", "PI_ACTORS_DEPTH=7", sessions.RemoteRunEnv+"=caller@a", "PI_TEST_TWICE=first", "PI_TEST_TWICE=last")
	r := start(t, agent, sp)
	if res := r.wait(10 * time.Second); res.Status != runs.StatusDone {
		t.Fatalf("status %s: %+v", res.Status, res)
	}
	out := r.read(runs.StdoutLog)
	for _, want := range []string{
		"PI_ACTORS_RUN_ID=env\n", "PI_ACTORS_ADDRESS=run:env\n", "PI_ACTORS_STATE_DIR=" + string(r.dir) + "\n",
		"PI_ACTORS_SESSION=sess-9\n", "PI_ACTORS_DEPTH=3\n", sessions.RemoteRunEnv + "=\n", "PI_TEST_TWICE=last\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout.log lacks %q:\n%s", want, out)
		}
	}
}

// A failing leaf's real status is recorded: its exit code, or 128+n for a
// signal from outside (never success).
func TestFailureRecordsRealStatus(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	for _, c := range []struct {
		id, tmpl string
		code     int
	}{
		{"seven", "{bin} exit 7", 7},
		{"shot", "{bin} kill-self 9", 137},
		{"termed", "{bin} kill-self 15", 143},
	} {
		r := start(t, agent, spec(agent, c.id, c.tmpl, nil))
		res := r.wait(10 * time.Second)
		if res.Status != runs.StatusFailed || res.Code != c.code {
			t.Errorf("run:%s: status %s code %d, want failed %d", c.id, res.Status, res.Code, c.code)
		}
		in, err := runs.Load(r.dir)
		if err != nil || in.Status != runs.StatusFailed {
			t.Errorf("run:%s: Load status %v (%v), want failed", c.id, in, err)
		}
	}
}

// control.kill: SIGKILL to every group at once, the leaf that ignores
// SIGTERM and the grandchild another leaf forked included.
func TestControlKillTakesTheWholeTree(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	leafF, gcF := filepath.Join(agent, "leaf.pid"), filepath.Join(agent, "gc.pid")
	tmpl := map[string]any{"parallel": true, "template": []any{"{bin} ignore-term {a}", "{bin} fork-grandchild {b}"}}
	r := start(t, agent, spec(agent, "k", tmpl, map[string]any{"a": leafF, "b": gcF}))
	leaf, gc := waitPid(t, leafF), waitPid(t, gcF)
	id := r.send("control.kill", nil)
	res := r.wait(10 * time.Second)
	if res.Status != runs.StatusKilled || res.Reason != "control.kill" || !res.Killed {
		t.Fatalf("result %+v, want killed/control.kill", res)
	}
	assertGone(t, "TERM-ignoring leaf", leaf)
	assertGone(t, "grandchild", gc)
	// Handled (no follow-up for a deliberate kill) comes from the result's
	// reason.
	in, err := runs.Load(r.dir)
	if err != nil || in.Status != runs.StatusKilled || in.Handled == nil {
		t.Fatalf("Load: %+v %v", in, err)
	}
	if len(r.eventsNamed("run.kill")) != 1 {
		t.Errorf("events: %d run.kill, want 1", len(r.eventsNamed("run.kill")))
	}
	if !strings.Contains(r.read(runs.InboxFile), `"status":"handled"`) || !strings.Contains(r.read(runs.InboxFile), id) {
		t.Errorf("inbox record not marked handled:\n%s", r.read(runs.InboxFile))
	}
	// The leaves the kill stopped raise no follow-up either.
	for _, line := range strings.Split(strings.TrimSpace(r.read(runs.OutboxFile)), "\n") {
		if strings.Contains(line, `"delivery":"followup"`) || strings.Contains(line, `"delivery":"notify"`) {
			t.Errorf("outbox record of a killed leaf asks for a follow-up: %s", line)
		}
	}
}

// control.cancel: SIGTERM, kill_grace_ms, SIGKILL. A TERM-ignoring leaf
// lives through the grace and is then killed (137); a polite one ends at
// once (143).
func TestControlCancelGraceThenKill(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	pidf := filepath.Join(agent, "stubborn.pid")
	r := start(t, agent, spec(agent, "stubborn", "{bin} ignore-term {p}", map[string]any{"p": pidf}))
	leaf := waitPid(t, pidf)
	r.send("control.cancel", nil)
	res := r.wait(10 * time.Second)
	assertGone(t, "TERM-ignoring leaf", leaf)
	if res.Status != runs.StatusCancelled || res.Reason != "control.cancel" || res.Code != 137 {
		t.Fatalf("result %+v, want cancelled/control.cancel code 137", res)
	}
	ctl, done := r.eventsNamed("run.control"), r.eventsNamed("command.done")
	if len(ctl) != 1 || len(done) != 1 {
		t.Fatalf("events: %d run.control, %d command.done", len(ctl), len(done))
	}
	if d := eventTime(t, done[0]).Sub(eventTime(t, ctl[0])); d < 280*time.Millisecond {
		t.Errorf("leaf killed %s after the cancel, before the 300 ms grace", d)
	}
	if p := r.dir.Progress(); p == nil || p.Phase != runs.StatusCancelled {
		t.Errorf("progress %+v, want phase cancelled", p)
	}

	pidf2 := filepath.Join(agent, "polite.pid")
	r2 := start(t, agent, spec(agent, "polite", "{bin} sleep-forever {p}", map[string]any{"p": pidf2}))
	waitPid(t, pidf2)
	r2.send("control.cancel", nil)
	if res := r2.wait(10 * time.Second); res.Status != runs.StatusCancelled || res.Code != 143 {
		t.Fatalf("polite leaf: result %+v, want cancelled code 143", res)
	}
}

// control.restart: the attempt's processes go, a new attempt starts, the
// run stays live.
func TestControlRestartStartsANewAttempt(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	gcF := filepath.Join(agent, "gc.pid")
	r := start(t, agent, spec(agent, "r", "{bin} fork-grandchild {p}", map[string]any{"p": gcF}))
	old := waitPid(t, gcF)
	os.Remove(gcF)
	r.send("control.restart", nil)
	assertGone(t, "old attempt's grandchild", old)
	cur := waitPid(t, gcF)
	if cur == old || !testproc.Alive(cur) {
		t.Fatalf("new attempt's grandchild %d (old %d) not running", cur, old)
	}
	eventually(t, 10*time.Second, "progress attempt 2", func() bool {
		p := r.dir.Progress()
		return p != nil && p.Attempt == 2 && p.Phase == runs.StatusRunning
	})
	rs := r.eventsNamed("run.restart")
	if len(rs) != 1 || rs[0]["reason"] != "control.restart" {
		t.Fatalf("run.restart events: %v", rs)
	}
	if in, _ := runs.Load(r.dir); in == nil || in.Status != runs.StatusRunning {
		t.Fatalf("after restart: %+v", in)
	}
	r.send("control.kill", nil)
	res := r.wait(10 * time.Second)
	assertGone(t, "new attempt's grandchild", cur)
	if res.Status != runs.StatusKilled || res.Restarts != 1 {
		t.Fatalf("result %+v, want killed with restarts 1", res)
	}
}

// Without a kernel, a supervisor killed with -9 leaves its run exited
// (supervisor_lost) by derivation, and its leftover processes are still
// findable as members of its session — what the kernel kills.
func TestSupervisorLostIsExited(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	leafF, gcF := filepath.Join(agent, "leaf.pid"), filepath.Join(agent, "gc.pid")
	tmpl := map[string]any{"parallel": true, "template": []any{"{bin} sleep-forever {a}", "{bin} fork-grandchild {b}"}}
	r := start(t, agent, spec(agent, "lost", tmpl, map[string]any{"a": leafF, "b": gcF}))
	leaf, gc := waitPid(t, leafF), waitPid(t, gcF)
	// progress.json is first written 1 s after the start: wait for the
	// one that lists the leaves before killing the supervisor.
	eventually(t, 5*time.Second, "progress.json lists the leaves", func() bool {
		p := r.dir.Progress()
		return p != nil && len(p.Leaves) == 2
	})
	syscall.Kill(r.meta.Pid, syscall.SIGKILL)
	<-r.done
	in, err := runs.Load(r.dir)
	if err != nil {
		t.Fatal(err)
	}
	if in.Status != runs.StatusExited || in.Reason != "supervisor_lost" {
		t.Fatalf("status %s reason %s, want exited supervisor_lost", in.Status, in.Reason)
	}
	members := runs.SessionMembers(r.meta.Pid)
	for _, p := range []int{leaf, gc} {
		found := false
		for _, m := range members {
			found = found || m == p
		}
		if !found {
			t.Errorf("pid %d not among the dead supervisor's session members %v", p, members)
		}
	}
	// The recorded leaves carry their start times, so a kernel can tell
	// them from a reused pid.
	// (How many leaves progress.json lists: TestProgressListsEveryParallelLeaf.)
	if in.Progress == nil || len(in.Progress.Leaves) == 0 {
		t.Fatalf("progress.json leaves: %+v", in.Progress)
	}
	for _, l := range in.Progress.Leaves {
		if !runs.Alive(l.Pid, l.Start) || runs.Alive(l.Pid, l.Start+1) {
			t.Errorf("leaf %+v: Alive does not check the start time", l)
		}
	}
}

// The run's own consumer never gets control messages; every record it
// claims has an id (assigned on claim if it had none); malformed lines
// are kept, never dropped.
func TestClaimMessageSkipsControlAndAssignsIDs(t *testing.T) {
	dir := runs.Dir(t.TempDir())
	lines := `{"type":"control.kill","status":"queued","id":"k1"}
not json at all
{"type":"task.assign","body":"no id","status":"queued"}
{"type":"control.restart","status":"queued"}
{"type":"task.assign","body":"second","id":"t2"}
`
	if err := os.WriteFile(dir.Path(runs.InboxFile), []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	var got []mailbox.Record
	for {
		rec, err := runs.ClaimMessage(dir, "run:x")
		if err != nil {
			t.Fatal(err)
		}
		if rec == nil {
			break
		}
		got = append(got, rec)
	}
	if len(got) != 2 {
		t.Fatalf("claimed %d records, want the 2 tasks: %v", len(got), got)
	}
	for _, r := range got {
		if runs.IsControl(r.Type()) {
			t.Errorf("claimed a control message: %v", r)
		}
		if r.ID() == "" {
			t.Errorf("claimed a record without an id: %v", r)
		}
		if r.Status() != mailbox.StatusClaimed || r["claimed_by"] != "run:x" {
			t.Errorf("claim fields: %v", r)
		}
	}
	after, _ := os.ReadFile(dir.Path(runs.InboxFile))
	if !strings.Contains(string(after), "not json at all") {
		t.Errorf("the malformed line was dropped:\n%s", after)
	}
	if n := strings.Count(string(after), `"status":"queued"`); n != 2 {
		t.Errorf("%d queued records left, want the 2 control messages:\n%s", n, after)
	}
}

// progress.json lists every running leaf: when parallel leaves start
// together, the last write is the newest snapshot (the kernel kills a lost
// supervisor's leaf groups from it, and inspect shows activeSubagents).
// (Regression: snapshots taken under the lock were written after it, out
// of order; 16 leaves ran while progress.json listed 10-15 of them.)
func TestProgressListsEveryParallelLeaf(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	const n, rounds = 16, 3
	for round := 0; round < rounds; round++ {
		var branches []any
		values := map[string]any{}
		var files []string
		for i := 0; i < n; i++ {
			f := filepath.Join(agent, fmt.Sprintf("r%d-leaf%d.pid", round, i))
			branches = append(branches, fmt.Sprintf("{bin} sleep-forever {p%d}", i))
			values[fmt.Sprintf("p%d", i)] = f
			files = append(files, f)
		}
		r := start(t, agent, spec(agent, fmt.Sprintf("par%d", round), map[string]any{"parallel": true, "template": branches}, values))
		for _, f := range files {
			waitPid(t, f)
		}
		eventually(t, 10*time.Second, "all command.start events", func() bool { return len(r.eventsNamed("command.start")) == n })
		deadline := time.Now().Add(time.Second)
		for {
			p := r.dir.Progress()
			if p != nil && len(p.Leaves) == n && p.Active == n {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: progress.json lists %d leaves, activeSubagents %d; %d are running", round, len(p.Leaves), p.Active, n)
			}
			time.Sleep(10 * time.Millisecond)
		}
		runs.KillAll(runs.SessionMembers(r.meta.Pid), syscall.SIGKILL)
	}
}

// control.cancel of a TERM-ignoring leaf that started a process in a
// session of its own: that process gets SIGTERM with the stop, not after
// the leaf's grace — the stop takes one kill_grace_ms, not two.
func TestControlCancelTermsStraysWithTheLeaf(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	leafF, strayF, termF := filepath.Join(agent, "leaf.pid"), filepath.Join(agent, "stray.pid"), filepath.Join(agent, "stray.term")
	sp := spec(agent, "strays", `sh -c 'setsid "$0" trap-term "$2" "$3" & trap "" TERM; exec "$0" ignore-term "$1"' {bin} {leaf} {stray} {term}`,
		map[string]any{"leaf": leafF, "stray": strayF, "term": termF})
	sp.Limits.KillGraceMS = 1000
	r := start(t, agent, sp)
	leaf, stray := waitPid(t, leafF), waitPid(t, strayF)
	r.send("control.cancel", nil)
	if res := r.wait(10 * time.Second); res.Status != runs.StatusCancelled || res.Code != 137 {
		t.Fatalf("result %+v, want cancelled code 137 (the leaf ignores TERM)", res)
	}
	assertGone(t, "leaf", leaf)
	assertGone(t, "stray", stray)
	st, err := os.Stat(termF)
	if err != nil {
		t.Fatalf("the stray never got SIGTERM: %v", err)
	}
	done := r.eventsNamed("command.done")
	if len(done) != 1 {
		t.Fatalf("%d command.done events", len(done))
	}
	if at := eventTime(t, done[0]); !st.ModTime().Before(at) {
		t.Errorf("the stray got SIGTERM at %s, after the leaf was killed at %s (its grace came after the leaf's)", st.ModTime().Format(time.StampMicro), at.Format(time.StampMicro))
	}
}

// Retention's list (Expired) holds ended runs older than the limit in
// their default state dirs only: a custom state_dir is the caller's
// directory, never deleted behind their back.
func TestExpiredSkipsCustomStateDirs(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	custom := filepath.Join(t.TempDir(), "mine")
	sp := spec(agent, "custom", []any{"{bin}", "exit", "0"}, nil)
	sp.StateDir = custom
	a := start(t, agent, spec(agent, "plain", []any{"{bin}", "exit", "0"}, nil))
	b := start(t, agent, sp)
	a.wait(10 * time.Second)
	b.wait(10 * time.Second)
	old := time.Now().Add(-48 * time.Hour)
	entries := []runs.Entry{{Run: "plain", StateDir: string(a.dir), Status: runs.StatusDone, UpdatedAt: old},
		{Run: "custom", StateDir: custom, Status: runs.StatusDone, UpdatedAt: old}}
	got := runs.Expired(agent, entries, 24*time.Hour)
	if len(got) != 1 || got[0].Run != "plain" {
		t.Fatalf("Expired = %+v, want only run plain", got)
	}
}
