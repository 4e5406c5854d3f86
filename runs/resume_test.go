package runs_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/internal/testproc"
	"github.com/pi-actors/pi-actors/runs"
)

// TestRestartOnAbnormal: on-abnormal restarts an attempt a signal ended
// (kill -9 of the leaf) but not one that exited with its own status.
func TestRestartOnAbnormal(t *testing.T) {
	t.Parallel()
	p := &runs.Restart{Policy: "on-abnormal"}
	for _, code := range []int{0, 1, 2, 124, 128, 130, 137, 143, 255} {
		if p.Wants(code, false) {
			t.Errorf("on-abnormal Wants(%d, own exit) = true; want false", code)
		}
	}
	for _, code := range []int{124, 137, 143} {
		if !p.Wants(code, true) {
			t.Errorf("on-abnormal Wants(%d, signal or timeout) = false; want true", code)
		}
	}
	agent := t.TempDir()
	count := filepath.Join(agent, "count")
	// The first attempt kills itself (SIGKILL), the second exits 1.
	sp := spec(agent, "abnormal", "sh -c 'n=$(cat {f} 2>/dev/null | wc -l); echo x >> {f}; [ $n -eq 0 ] && kill -9 $$; exit 1'", map[string]any{"f": count})
	sp.Restart = policy("on-abnormal", func(r *runs.Restart) { r.BackoffMS = 10 })
	r := start(t, agent, sp)
	res := r.wait(10 * time.Second)
	if res.Status != runs.StatusFailed || res.Code != 1 || res.Restarts != 1 {
		t.Errorf("result %+v; want failed with code 1 after one restart", res)
	}
	if data, _ := os.ReadFile(count); strings.Count(string(data), "x") != 2 {
		t.Errorf("ran %d times; want 2", strings.Count(string(data), "x"))
	}
}

// TestRestartOnAbnormalOwnExit: on-abnormal does not restart a program
// that exited 255, 130 or 124 itself — its own status, not a signal or a
// timeout — and does restart one its timeout stopped (124).
func TestRestartOnAbnormalOwnExit(t *testing.T) {
	t.Parallel()
	for _, code := range []int{255, 130, 124} {
		agent := t.TempDir()
		count := filepath.Join(agent, "count")
		sp := spec(agent, "own", "sh -c 'echo x >> {f}; exit {code}'", map[string]any{"f": count, "code": code})
		sp.Restart = policy("on-abnormal", func(r *runs.Restart) { r.BackoffMS = 10 })
		r := start(t, agent, sp)
		res := r.wait(10 * time.Second)
		if res.Status != runs.StatusFailed || res.Code != code || res.Restarts != 0 {
			t.Errorf("exit %d: result %+v; want failed with code %d, no restart", code, res, code)
		}
		if data, _ := os.ReadFile(count); strings.Count(string(data), "x") != 1 {
			t.Errorf("exit %d: ran %d times; want 1", code, strings.Count(string(data), "x"))
		}
	}
	// A timeout stops the first attempt; the second is quick.
	agent := t.TempDir()
	count := filepath.Join(agent, "count")
	sp := spec(agent, "timeout", "sh -c 'n=$(cat {f} 2>/dev/null | wc -l); echo x >> {f}; [ $n -eq 0 ] && exec sleep 30; exit 3'", map[string]any{"f": count})
	sp.Template = map[string]any{"template": sp.Template, "timeout": 300}
	sp.Restart = policy("on-abnormal", func(r *runs.Restart) { r.BackoffMS = 10 })
	r := start(t, agent, sp)
	res := r.wait(10 * time.Second)
	if res.Status != runs.StatusFailed || res.Code != 3 || res.Restarts != 1 {
		t.Errorf("timeout: result %+v; want failed with code 3 after one restart", res)
	}
}

// TestResumeKeepsTheStateDir: Resume starts a new supervisor on a run
// whose supervisor was lost, keeping its files (inbox, logs, the run's own
// state), removing an old result, counting the resume; it refuses a run
// whose supervisor is alive.
func TestResumeKeepsTheStateDir(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	pidF := filepath.Join(agent, "leaf.pid")
	sp := spec(agent, "resumed", "{bin} sleep-forever {p}", map[string]any{"p": pidF})
	r := start(t, agent, sp)
	waitPid(t, pidF)
	if _, _, err := runs.Resume(r.dir, sp.Supervisor, sp.Env, "test"); !errors.Is(err, runs.ErrBusy) {
		t.Fatalf("Resume of a live run = %v; want ErrBusy", err)
	}
	os.WriteFile(r.dir.Path("mine.json"), []byte(`{"kept":true}`), 0o600)
	r.send("note", "kept")
	leaf := testproc.ReadPid(pidF)
	runs.KillAll(runs.SessionMembers(r.meta.Pid), syscall.SIGKILL)
	<-r.done
	assertGone(t, "leaf", leaf)
	os.Remove(pidF)
	meta, proc, err := runs.Resume(r.dir, sp.Supervisor, sp.Env, "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		runs.KillAll(runs.SessionMembers(meta.Pid), syscall.SIGKILL)
		proc.Wait()
	})
	waitPid(t, pidF)
	in, err := runs.Load(r.dir)
	if err != nil {
		t.Fatal(err)
	}
	if in.Status != runs.StatusRunning || in.Meta.Resumes != 1 || !in.Meta.CreatedAt.Equal(r.meta.CreatedAt) || in.Meta.Pid != meta.Pid {
		t.Errorf("resumed run: status %s resumes %d createdAt %v (was %v) pid %d; want running, 1, the same createdAt, the new supervisor",
			in.Status, in.Meta.Resumes, in.Meta.CreatedAt, r.meta.CreatedAt, in.Meta.Pid)
	}
	if !r.dir.Exists("mine.json") || !strings.Contains(r.read(runs.InboxFile), `"type":"note"`) {
		t.Error("the run's files were not kept")
	}
	if len(r.eventsNamed("run.resume")) != 1 {
		t.Error("no run.resume event")
	}
}
