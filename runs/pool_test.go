package runs_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/internal/testproc"
	"github.com/pi-actors/pi-actors/runs"
)

// A run handed to a waiting supervisor (Pool) runs as one started for it:
// the pid in run.json is the waiting process's, the leaf gets the run's
// environment and working directory, not the kernel's, and the next
// supervisor waits in its place. Closing the pool leaves no process.
func TestPoolHandsOverRun(t *testing.T) {
	// Waiting supervisors are started with this process's environment:
	// they must be this binary's supervise entry, not its tests.
	t.Setenv(testproc.EnvVar, "1")
	t.Setenv("PI_POOL_TEST", "kernel")
	agent := t.TempDir()
	pool, waiting := readyPool(t)

	cwd := t.TempDir()
	sp := spec(agent, "pooled", []any{"{bin} print-env PI_POOL_TEST PI_ACTORS_RUN_ID", "pwd"}, nil)
	sp.Cwd, sp.Pool = cwd, pool
	sp.Env = append(sp.Env, "PI_POOL_TEST=run")
	r := start(t, agent, sp)
	if r.meta.Pid != waiting {
		t.Fatalf("run.json pid %d, the waiting supervisor was %d", r.meta.Pid, waiting)
	}
	if res := r.wait(10 * time.Second); res.Status != runs.StatusDone {
		t.Fatalf("result %+v; stderr: %s", res, r.read(runs.StderrLog))
	}
	out := r.read(runs.StdoutLog)
	for _, want := range []string{"PI_POOL_TEST=run", "PI_ACTORS_RUN_ID=pooled", cwd} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	// A replacement waits for the next run.
	if next := waitingSupervisors(t, 1); next[0] == waiting {
		t.Fatalf("no new supervisor waits (still %d)", next[0])
	}
	pool.Close()
	for deadline := time.Now().Add(10 * time.Second); len(waitingPids()) > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waiting supervisors left after Close: %v", waitingPids())
		}
	}
}

// readyPool starts a pool of one waiting supervisor (this binary's
// supervise entry) and returns it once the pool holds it, with its pid.
// The process shows in /proc before the pool has it (it is still being
// started): a spawn before then starts its own supervisor.
func readyPool(t *testing.T) (*runs.Pool, int) {
	t.Helper()
	pool := runs.NewPool([]string{bin(), "supervise"}, 1)
	t.Cleanup(pool.Close)
	waiting := waitingSupervisors(t, 1)
	for deadline := time.Now().Add(10 * time.Second); pool.Idle() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the pool holds no waiting supervisor")
		}
	}
	return pool, waiting[0]
}

// tasks counts the threads of pid still in /proc.
func tasks(pid int) int {
	ents, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	return len(ents)
}

// waitingSupervisors waits until n supervisors of this test process wait
// for a run and returns their pids.
func waitingSupervisors(t *testing.T, n int) []int {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if pids := waitingPids(); len(pids) >= n {
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d waiting supervisors, want %d", len(waitingPids()), n)
		}
	}
}

// waitingPids lists this process's children that are supervisors waiting
// for a run (`<this binary> supervise -`), zombies left out.
func waitingPids() []int {
	var out []int
	for _, c := range runs.Children(os.Getpid()) {
		args, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(c), "cmdline"))
		if err != nil || !strings.HasSuffix(string(args), "\x00supervise\x00-\x00") {
			continue
		}
		if st, err := runs.Stat(c); err == nil && st.State != "Z" {
			out = append(out, c)
		}
	}
	return out
}

// A waiting supervisor that died is not handed a run: the spawn starts a
// supervisor of its own, and the pool starts no more.
func TestPoolDeadSupervisor(t *testing.T) {
	t.Setenv(testproc.EnvVar, "1")
	agent := t.TempDir()
	pool := runs.NewPool([]string{bin(), "supervise"}, 1)
	defer pool.Close()
	dead := waitingSupervisors(t, 1)[0]
	syscall.Kill(dead, syscall.SIGKILL)
	// Dead: its main thread a zombie and its other threads gone (until
	// they are, they hold its end of the readiness pipe).
	for deadline := time.Now().Add(10 * time.Second); runs.Alive(dead, 0) || tasks(dead) > 1; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the waiting supervisor did not die")
		}
	}
	sp := spec(agent, "fallback", "{bin} exit 0", nil)
	sp.Pool = pool
	r := start(t, agent, sp)
	if r.meta.Pid == dead {
		t.Fatal("the run was handed to a dead supervisor")
	}
	if res := r.wait(10 * time.Second); res.Status != runs.StatusDone {
		t.Fatalf("result %+v", res)
	}
	time.Sleep(100 * time.Millisecond)
	if pids := waitingPids(); len(pids) != 0 {
		t.Fatalf("the pool started more after one died waiting: %v", pids)
	}
}

// A TERM that reaches a waiting supervisor after it has its run but before
// Supervise handles signals is not lost: the run stops as a terminated
// supervisor's does (exited, supervisor_terminated, so its owner hears of
// it) rather than running on with its stop swallowed, and its leaf does
// not outlive it.
func TestPoolTermDuringHandover(t *testing.T) {
	t.Setenv(testproc.EnvVar, "1")
	t.Setenv("PI_RUNS_TEST_TERM_AT_HANDOVER", "1")
	agent := t.TempDir()
	pool, waiting := readyPool(t)
	pidFile := filepath.Join(t.TempDir(), "leaf.pid")
	sp := spec(agent, "termed", "{bin} sleep-forever {p}", map[string]any{"p": pidFile})
	sp.Pool = pool
	r := start(t, agent, sp)
	if r.meta.Pid != waiting {
		t.Fatalf("run.json pid %d, the waiting supervisor was %d", r.meta.Pid, waiting)
	}
	res := r.wait(15 * time.Second)
	if res.Status != runs.StatusExited || res.Reason != "supervisor_terminated" {
		t.Fatalf("result %+v, want exited (supervisor_terminated); stderr: %s", res, r.read(runs.StderrLog))
	}
	if b, err := os.ReadFile(pidFile); err == nil {
		if pid, _ := strconv.Atoi(strings.TrimSpace(string(b))); pid > 0 && runs.Alive(pid, 0) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("leaf %d outlived its stopped run", pid)
		}
	}
}
