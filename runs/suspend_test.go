package runs_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/sessions"
)

// sessionSpec is spec with the supervisor told where the agent root is
// (it reads its session's record there).
func sessionSpec(agent, id string, tmpl any, values map[string]any) runs.Spec {
	sp := spec(agent, id, tmpl, values)
	// Appended last, it is the supervisor's agent root whatever the
	// environment of the test says.
	sp.Env = append(sp.Env, "PI_CODING_AGENT_DIR="+agent)
	return sp
}

// setSession writes session s1's record in state and rings each run's
// supervisor, as the kernel does.
func setSession(t *testing.T, agent, state string, rs ...*testRun) {
	t.Helper()
	rec := &sessions.Record{Session: "s1", State: state, Since: time.Now().UTC(), By: "test"}
	if err := rec.Save(agent); err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		syscall.Kill(r.meta.Pid, syscall.SIGUSR1)
	}
}

func status(t *testing.T, r *testRun) string {
	t.Helper()
	in, err := runs.Load(r.dir)
	if err != nil {
		t.Fatal(err)
	}
	return in.Status
}

func cpuTicks(t *testing.T, pid int) uint64 {
	t.Helper()
	st, err := runs.Stat(pid)
	if err != nil {
		t.Fatalf("stat %d: %v", pid, err)
	}
	return st.CPU
}

// A suspended run's processes are stopped (state T, and a busy loop's CPU
// time does not grow), the run reads suspended with suspended_at; resumed,
// it runs on and progress.json counts the time it was suspended.
func TestSuspendStopsTheTreeAndResumeContinuesIt(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	pidf := filepath.Join(agent, "busy.pid")
	r := start(t, agent, sessionSpec(agent, "busy", "{bin} busy-loop {p}", map[string]any{"p": pidf}))
	pid := waitPid(t, pidf)
	eventually(t, 5*time.Second, "the loop uses CPU", func() bool { return cpuTicks(t, pid) > 5 })

	setSession(t, agent, sessions.StateSuspended, r)
	eventually(t, 5*time.Second, "status suspended", func() bool { return status(t, r) == runs.StatusSuspended })
	in, _ := runs.Load(r.dir)
	if !in.Live() || in.Progress.SuspendedAt.IsZero() {
		t.Fatalf("suspended run: live=%v progress %+v", in.Live(), in.Progress)
	}
	eventually(t, 5*time.Second, "the loop stopped", func() bool { st, _ := runs.Stat(pid); return st.State == "T" })
	before := cpuTicks(t, pid)
	time.Sleep(700 * time.Millisecond)
	if after := cpuTicks(t, pid); after != before {
		t.Fatalf("CPU time of the suspended busy loop grew from %d to %d ticks", before, after)
	}
	if ev := r.eventsNamed("run.suspend"); len(ev) != 1 {
		t.Fatalf("run.suspend events %v", ev)
	}

	setSession(t, agent, sessions.StateActive, r)
	eventually(t, 5*time.Second, "status running", func() bool { return status(t, r) == runs.StatusRunning })
	resumed := cpuTicks(t, pid)
	eventually(t, 5*time.Second, "the loop runs again", func() bool { return cpuTicks(t, pid) > resumed+5 })
	if p := r.dir.Progress(); p == nil || p.PausedMS < 600 || !p.SuspendedAt.IsZero() {
		t.Errorf("progress after resume %+v, want paused_ms >= 600 and no suspended_at", p)
	}
	r.send("control.kill", nil)
	if res := r.wait(10 * time.Second); res.Status != runs.StatusKilled {
		t.Fatalf("result %+v", res)
	}
}

// The restart policy does not fire while the run is suspended: a backoff
// in progress stops with the run and goes on with the time it had left.
func TestSuspendHoldsTheRestartPolicy(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	sp := sessionSpec(agent, "crashy", "{bin} flaky {f} 2", map[string]any{"f": filepath.Join(agent, "count")})
	sp.Restart = policy("on-failure", func(r *runs.Restart) { r.BackoffMS = 600 })
	r := start(t, agent, sp)
	eventually(t, 10*time.Second, "status backoff", func() bool { return status(t, r) == runs.StatusBackoff })
	setSession(t, agent, sessions.StateSuspended, r)
	eventually(t, 5*time.Second, "status suspended", func() bool { return status(t, r) == runs.StatusSuspended })
	suspended := time.Now()
	time.Sleep(1200 * time.Millisecond) // twice the backoff
	if n := len(r.eventsNamed("command.start")); n != 1 {
		t.Fatalf("%d starts while suspended, want 1: the policy fired", n)
	}
	setSession(t, agent, sessions.StateActive, r)
	resumed := time.Now()
	if res := r.wait(10 * time.Second); res.Status != runs.StatusDone || res.Restarts != 1 {
		t.Fatalf("result %+v, want done after one restart", res)
	}
	starts := r.eventsNamed("command.start")
	second := eventTime(t, starts[1])
	if second.Before(resumed) {
		t.Errorf("the restart started at %v, before the resume at %v (suspended at %v)", second, resumed, suspended)
	}
	if p := r.dir.Progress(); p == nil || p.PausedMS < 1000 {
		t.Errorf("progress %+v, want paused_ms >= 1000", p)
	}
}

// A template timeout stops counting while the run is suspended: the step
// times out once its time ran (not suspended), not by the wall clock.
func TestSuspendPausesTemplateTimeouts(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	tmpl := map[string]any{"template": "{bin} sleep-forever", "timeout": 800}
	r := start(t, agent, sessionSpec(agent, "slow", tmpl, nil))
	eventually(t, 5*time.Second, "the leaf started", func() bool { return len(r.eventsNamed("command.start")) == 1 })
	begun := time.Now()
	setSession(t, agent, sessions.StateSuspended, r)
	eventually(t, 5*time.Second, "status suspended", func() bool { return status(t, r) == runs.StatusSuspended })
	time.Sleep(1500 * time.Millisecond)
	if r.dir.Result() != nil {
		t.Fatalf("the run ended while suspended: %+v", r.dir.Result())
	}
	setSession(t, agent, sessions.StateActive, r)
	res := r.wait(10 * time.Second)
	if res.Code != 124 {
		t.Fatalf("result %+v, want the timeout's 124", res)
	}
	if took := time.Since(begun); took < 2200*time.Millisecond {
		t.Errorf("timed out %s after the start: the suspended time counted", took)
	}
}

// A run started while its session is suspended starts suspended (no
// leaf until the resume); control.kill ends a suspended run at once.
func TestSuspendedSessionStartsSuspendedAndKillWorks(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	setSession(t, agent, sessions.StateSuspended)
	r := start(t, agent, sessionSpec(agent, "late", "{bin} sleep-forever", nil))
	eventually(t, 5*time.Second, "status suspended", func() bool { return status(t, r) == runs.StatusSuspended })
	time.Sleep(300 * time.Millisecond)
	if n := len(r.eventsNamed("command.start")); n != 0 {
		t.Fatalf("%d leaves started in a suspended session", n)
	}
	r.send("control.kill", nil)
	if res := r.wait(10 * time.Second); res.Status != runs.StatusKilled {
		t.Fatalf("result %+v, want killed", res)
	}
	os.Remove(sessions.Path(agent, "s1", sessions.RecordSuffix))
}

// control.cancel of a suspended run continues it so it can handle
// SIGTERM, and it stays continued until it ends: the session's record,
// still suspended (and rewritten meanwhile, as the kernel's snapshot
// does), is not applied to it again. The session's other run stays
// stopped.
func TestCancelOfASuspendedRunLetsItHandleTerm(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	mark := filepath.Join(agent, "term.log")
	sp := sessionSpec(agent, "trap", "{bin} trap-term {p} {m}", map[string]any{"p": filepath.Join(agent, "trap.pid"), "m": mark})
	sp.Limits.KillGraceMS = 3000
	r := start(t, agent, sp)
	other := start(t, agent, sessionSpec(agent, "other", "{bin} sleep-forever {p}", map[string]any{"p": filepath.Join(agent, "other.pid")}))
	waitPid(t, filepath.Join(agent, "trap.pid"))
	otherPid := waitPid(t, filepath.Join(agent, "other.pid"))

	setSession(t, agent, sessions.StateSuspended, r, other)
	eventually(t, 5*time.Second, "both suspended", func() bool {
		return status(t, r) == runs.StatusSuspended && status(t, other) == runs.StatusSuspended
	})
	setSession(t, agent, sessions.StateSuspended) // a new version of the record, no ring
	begun := time.Now()
	r.send("control.cancel", nil)
	res := r.wait(10 * time.Second)
	if took := time.Since(begun); res.Status != runs.StatusCancelled || res.Code != 0 || took > 2*time.Second {
		t.Fatalf("result %+v after %s, want cancelled with the TERM handler's exit 0, before the 3 s grace", res, took)
	}
	if data, _ := os.ReadFile(mark); string(data) != "got-term\n" {
		t.Fatalf("term.log %q: the run never handled SIGTERM", data)
	}
	resumed := false
	for _, ev := range r.events() {
		switch {
		case ev["event"] == "run.resume" && ev["by"] == "stop:cancel":
			resumed = true
		case ev["event"] == "run.suspend" && resumed:
			t.Fatalf("suspended again after the stop continued it: %v", ev)
		}
	}
	if !resumed {
		t.Fatal("no run.resume by stop:cancel")
	}
	if st, _ := runs.Stat(otherPid); st.State != "T" || status(t, other) != runs.StatusSuspended {
		t.Fatalf("the session's other run: process state %q, status %s; want stopped, suspended", st.State, status(t, other))
	}
	other.send("control.kill", nil)
	other.wait(10 * time.Second)
	os.Remove(sessions.Path(agent, "s1", sessions.RecordSuffix))
}
