package runs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/internal/testproc"
	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/runs"
)

// freePort returns a TCP port nothing listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	p, err := testproc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return strconv.Itoa(p)
}

func health(t *testing.T, p runs.HealthParams) *runs.Health {
	t.Helper()
	h, err := runs.ParseHealth(p)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// healthState is progress.json's health record now (zero when absent).
func (r *testRun) healthState() runs.HealthState {
	if p := r.dir.Progress(); p != nil && p.Health != nil {
		return *p.Health
	}
	return runs.HealthState{}
}

func (r *testRun) waitReadyState(d time.Duration, state string) runs.HealthState {
	r.t.Helper()
	eventually(r.t, d, "ready_state "+state, func() bool { return r.healthState().ReadyState == state })
	return r.healthState()
}

// outboxEvents returns the outbox records of one event.
func (r *testRun) outboxEvents(event string) []mailbox.Record {
	lines, _ := mailbox.Read(r.dir.Path(runs.OutboxFile))
	var out []mailbox.Record
	for _, l := range lines {
		if l.Err == nil && l.Value["event"] == event {
			out = append(out, l.Value)
		}
	}
	return out
}

// A web server that listens only after a delay: the run becomes ready
// after it answers, never before (its own listening timestamp proves
// it); the readiness is an event, a follow-up and progress.json's
// health record.
func TestReadyHTTPAfterTheServerListens(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	port := freePort(t)
	sp := spec(agent, "web", "{bin} serve-http 800ms {port}", map[string]any{"port": port})
	sp.Health = health(t, runs.HealthParams{Ready: "http://127.0.0.1:" + port + "/health"})
	t0 := time.Now()
	r := start(t, agent, sp)
	if st := r.healthState(); st.Ready {
		t.Fatalf("ready at once: %+v", st)
	}
	st := r.waitReadyState(20*time.Second, runs.ReadyOK)
	var listened int64
	for _, l := range strings.Split(r.read(runs.StdoutLog), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "listening" {
			listened, _ = strconv.ParseInt(f[2], 10, 64)
		}
	}
	if listened == 0 {
		t.Fatalf("no listening line in stdout: %q", r.read(runs.StdoutLog))
	}
	if !st.Ready || st.ReadyAt.UnixMilli() < listened || st.ReadyAt.Sub(t0) < 800*time.Millisecond {
		t.Errorf("ready_at %s (listened at %d ms, started %s): ready before the server listened", st.ReadyAt, listened, t0)
	}
	if ev := r.eventsNamed("run.ready"); len(ev) != 1 || ev[0]["probe"] != "http://127.0.0.1:"+port+"/health" {
		t.Errorf("run.ready events %v", ev)
	}
	if fu := r.outboxEvents("run.ready"); len(fu) != 1 || fu[0]["delivery"] != "followup" {
		t.Errorf("run.ready outbox %v, want one follow-up", fu)
	}
	in, err := runs.Load(r.dir)
	if err != nil {
		t.Fatal(err)
	}
	if ok, at := in.Ready(); !ok || !at.Equal(st.ReadyAt) {
		t.Errorf("Info.Ready() = %v %v", ok, at)
	}
}

// A tcp probe passes once something accepts connections.
func TestReadyTCP(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	port := freePort(t)
	sp := spec(agent, "db", "{bin} listen-tcp 300ms {port}", map[string]any{"port": port})
	sp.Health = health(t, runs.HealthParams{Ready: "tcp:127.0.0.1:" + port})
	r := start(t, agent, sp)
	st := r.waitReadyState(20*time.Second, runs.ReadyOK)
	if st.ReadyChecks < 2 {
		t.Errorf("ready after %d checks; the listener came 300 ms late, so the first must have failed", st.ReadyChecks)
	}
}

// A log probe passes on a matching line of the run's output (stdout or
// stderr), not on the supervisor's own lines.
func TestReadyLogLine(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	sp := spec(agent, "logger", "{bin} say-after 300ms {text}", map[string]any{"text": "server up on :9999"})
	sp.Health = health(t, runs.HealthParams{Ready: `log:up on :\d+$`})
	r := start(t, agent, sp)
	st := r.waitReadyState(20*time.Second, runs.ReadyOK)
	if !strings.Contains(r.read(runs.StdoutLog), "server up on :9999") {
		t.Errorf("the line did not reach stdout.log: %q", r.read(runs.StdoutLog))
	}
	if st.ReadyAt.Sub(r.meta.CreatedAt) < 300*time.Millisecond {
		t.Errorf("ready %s after the start, before the line was printed", st.ReadyAt.Sub(r.meta.CreatedAt))
	}
}

// An exec probe is a command template: the run's values resolve in it,
// and it passes when it exits 0.
func TestReadyExec(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	flag := filepath.Join(agent, "flag")
	sp := spec(agent, "worker", "{bin} touch-after 300ms {flag}", map[string]any{"flag": flag})
	sp.Health = health(t, runs.HealthParams{Ready: "exec:{bin} exists {flag}"})
	r := start(t, agent, sp)
	st := r.waitReadyState(20*time.Second, runs.ReadyOK)
	if _, err := os.Stat(flag); err != nil || st.ReadyChecks < 2 {
		t.Errorf("ready after %d checks, flag: %v", st.ReadyChecks, err)
	}
}

// A probe that never passes: timed_out with its last error after
// ready_timeout, a warning follow-up, and the run keeps going.
func TestReadyTimeoutKeepsTheRunGoing(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	port := freePort(t)
	sp := spec(agent, "slow", "{bin} sleep-forever", nil)
	sp.Health = health(t, runs.HealthParams{Ready: "tcp:127.0.0.1:" + port, ReadyTimeout: "600ms"})
	r := start(t, agent, sp)
	st := r.waitReadyState(20*time.Second, runs.ReadyTimedOut)
	if st.Ready || !strings.Contains(st.ReadyError, "refused") {
		t.Errorf("timed out state %+v, want not ready with the connect error", st)
	}
	if st.ReadySince.Sub(r.meta.CreatedAt) < 600*time.Millisecond {
		t.Errorf("timed out %s after the start, before ready_timeout", st.ReadySince.Sub(r.meta.CreatedAt))
	}
	if fu := r.outboxEvents("run.ready_timeout"); len(fu) != 1 || fu[0]["delivery"] != "followup" || fu[0]["level"] != "warning" {
		t.Errorf("run.ready_timeout outbox %v", fu)
	}
	if in, _ := runs.Load(r.dir); in == nil || in.Status != runs.StatusRunning {
		t.Errorf("the run stopped: %+v", in)
	}
}

// An exec probe that hangs is killed (its whole group) when its try's
// time is up.
func TestExecProbeKilledOnTimeout(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	pf := filepath.Join(agent, "probe.pid")
	sp := spec(agent, "hang", "{bin} sleep-forever", map[string]any{"pf": pf})
	// first: the pid file keeps the first try's grandchild; the next try
	// comes 5 s after the timeout and is still running when read.
	sp.Health = health(t, runs.HealthParams{Ready: "exec:{bin} fork-grandchild {pf} first", ReadyTimeout: "800ms"})
	r := start(t, agent, sp)
	st := r.waitReadyState(20*time.Second, runs.ReadyTimedOut)
	if !strings.Contains(st.ReadyError, "killed") {
		t.Errorf("ready_error %q, want the probe killed", st.ReadyError)
	}
	// The grandchild shares the probe's group: both are gone. The timed-out
	// state is written once the try's group is gone, so the file holds its
	// grandchild now — or nothing, when a loaded machine let the 800 ms
	// pass before the probe forked (a later try's grandchild, written 5 s
	// on, is alive while that try runs: CI read one).
	pid := testproc.ReadPid(pf)
	if pid == 0 {
		t.Log("the probe was killed before it forked its grandchild")
		return
	}
	assertGone(t, "exec probe's grandchild", pid)
}

// A liveness probe restarts a hung process (SIGSTOPped: it holds its
// port but answers nothing) through the restart policy: restarts counts
// it, the new attempt is ready again.
func TestLivenessRestartsAHungProcess(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	port := freePort(t)
	pf := filepath.Join(agent, "server.pid")
	sp := spec(agent, "api", "{bin} serve-http 0s {port} {pf}", map[string]any{"port": port, "pf": pf})
	url := "http://127.0.0.1:" + port + "/"
	sp.Health = health(t, runs.HealthParams{Ready: url, Liveness: url, LivenessEvery: "200ms", LivenessFailures: 2})
	sp.Restart = policy("on-failure", func(r *runs.Restart) { r.BackoffMS = 20 })
	r := start(t, agent, sp)
	r.waitReadyState(20*time.Second, runs.ReadyOK)
	first := waitPid(t, pf)
	os.Remove(pf)
	syscall.Kill(first, syscall.SIGSTOP)
	second := waitPid(t, pf)
	if second == first {
		t.Fatalf("the same server pid %d after the restart", first)
	}
	assertGone(t, "the hung server", first)
	eventually(t, 20*time.Second, "ready again", func() bool {
		st := r.healthState()
		return st.Ready && st.LastRestart == "liveness"
	})
	un := r.eventsNamed("run.unhealthy")
	if len(un) == 0 || un[0]["reason"] != "liveness" || un[0]["restart"] != true {
		t.Errorf("run.unhealthy events %v", un)
	}
	if rs := r.eventsNamed("run.restart"); len(rs) == 0 || rs[0]["reason"] != "liveness" {
		t.Errorf("run.restart events %v", rs)
	}
	if fails := r.eventsNamed("run.liveness"); len(fails) < 2 {
		t.Errorf("%d run.liveness failures, want 2 before the restart", len(fails))
	}
	if fu := r.outboxEvents("run.unhealthy"); len(fu) == 0 || fu[0]["delivery"] != "followup" {
		t.Errorf("run.unhealthy outbox %v", fu)
	}
	// The running phase is written lazily: the backoff's progress (0
	// restarts made) can be read first.
	eventually(t, 5*time.Second, "progress with restarts >= 1", func() bool {
		p := r.dir.Progress()
		return p != nil && p.Restarts >= 1
	})
	eventually(t, 5*time.Second, "the second run.ready record", func() bool { return len(r.outboxEvents("run.ready")) >= 2 })
	if ready := r.outboxEvents("run.ready"); ready[1]["delivery"] != "log" {
		t.Errorf("run.ready outbox %v: the second readiness is logged, not a follow-up", ready)
	}
}

// max_rss: a process tree that outgrows it is restarted through the
// policy; with restart=never the run ends failed, reason max_rss.
func TestMaxRSSRestarts(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	count := filepath.Join(agent, "starts")
	// The leaf that passes max_rss counts its own starts (a second leaf
	// counting them could be killed with the tree before it wrote).
	sp := spec(agent, "hog", "{bin} alloc 96 {pid} {count}", map[string]any{"count": count, "pid": filepath.Join(agent, "hog.pid")})
	sp.Health = health(t, runs.HealthParams{MaxRSS: "48M"})
	sp.Restart = policy("on-failure", func(r *runs.Restart) { r.BackoffMS, r.Burst = 20, 3 })
	r := start(t, agent, sp)
	res := r.wait(60 * time.Second)
	if res.Status != runs.StatusFailed || res.Reason != "start_limit" || res.Restarts != 2 {
		t.Errorf("result %+v, want failed start_limit after 2 restarts", res)
	}
	un := r.eventsNamed("run.unhealthy")
	if len(un) != 3 || un[0]["reason"] != "max_rss" || !strings.Contains(fmt.Sprint(un[0]["error"]), "max_rss 48.0MiB") {
		t.Errorf("run.unhealthy %v, want 3 max_rss", un)
	}
	data, _ := os.ReadFile(count)
	if n := strings.Count(string(data), "\n"); n != 3 {
		t.Errorf("%d starts, want 3", n)
	}

	sp = spec(agent, "hog2", "{bin} alloc 96", nil)
	sp.Health = health(t, runs.HealthParams{MaxRSS: "48M"})
	sp.Restart = policy("never", nil)
	r = start(t, agent, sp)
	res = r.wait(60 * time.Second)
	if res.Status != runs.StatusFailed || res.Reason != "max_rss" || res.Restarts != 0 || !strings.Contains(res.Error, "passed max_rss") {
		t.Errorf("never: result %+v, want failed max_rss", res)
	}
}

// watch=: a matching change restarts the run once per burst; .git/ and
// the state directory are ignored (their changes, made in the same burst,
// are not among the files the restart names).
func TestWatchRestartsOncePerBurst(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	project := filepath.Join(agent, "project")
	for _, d := range []string{"src/pkg", ".git/objects"} {
		if err := os.MkdirAll(filepath.Join(project, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	count := filepath.Join(agent, "starts")
	sp := spec(agent, "dev", "{bin} count-starts {count}", map[string]any{"count": count})
	sp.Cwd = project
	sp.StateDir = filepath.Join(project, ".state", "dev")
	sp.Health = health(t, runs.HealthParams{Watch: []string{"**/*.txt"}})
	r := start(t, agent, sp)
	starts := func() int {
		data, _ := os.ReadFile(count)
		return strings.Count(string(data), "\n")
	}
	eventually(t, 10*time.Second, "first start", func() bool { return starts() == 1 })
	eventually(t, 10*time.Second, "watch set up", func() bool { return len(r.eventsNamed("run.watch")) == 1 })
	write := func(rel string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(project, rel), []byte(rel), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// One burst: ignored places first, then five matching files (one in a
	// directory created during the burst).
	write(".git/objects/x.txt")
	write(".state/dev/x.txt")
	write("notes.md")
	for i := range 4 {
		write(fmt.Sprintf("src/pkg/f%d.txt", i))
	}
	os.MkdirAll(filepath.Join(project, "src/new"), 0o755)
	write("a.txt")
	eventually(t, 20*time.Second, "a restart", func() bool { return starts() == 2 })
	// A second change after the burst: one more restart, so the burst was
	// exactly one.
	write("src/new/late.txt")
	eventually(t, 20*time.Second, "a second restart", func() bool { return starts() == 3 })
	rs := r.eventsNamed("run.restart")
	if len(rs) != 2 {
		t.Fatalf("%d restarts, want 2: %v", len(rs), rs)
	}
	if rs[0]["reason"] != "watch" || fmt.Sprint(rs[0]["files"]) != "[a.txt src/pkg/f0.txt src/pkg/f1.txt src/pkg/f2.txt src/pkg/f3.txt]" {
		t.Errorf("first restart %v", rs[0])
	}
	if fmt.Sprint(rs[1]["files"]) != "[src/new/late.txt]" {
		t.Errorf("second restart %v (src/new was created after the watch started)", rs[1])
	}
	eventually(t, 5*time.Second, "restarts in progress", func() bool {
		p := r.dir.Progress()
		return p != nil && p.Restarts == 2 && p.Health != nil && p.Health.LastRestart == "watch"
	})
}
