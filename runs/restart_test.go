package runs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/runs"
)

func (r *testRun) delays() []int {
	var out []int
	for _, e := range r.eventsNamed("run.backoff") {
		d, _ := e["delay_ms"].(float64)
		out = append(out, int(d))
	}
	return out
}

// policy returns a restart policy with no jitter (delays are exact).
func policy(p string, edit func(*runs.Restart)) *runs.Restart {
	r := runs.DefaultRestart()
	r.Policy, r.Jitter = p, 0
	if edit != nil {
		edit(&r)
	}
	return &r
}

// script is a leaf that counts its attempts in a file and behaves by
// attempt number: sh -c {script} sh {count}.
func script(body string) string {
	return `n=$(( $(cat "$1" 2>/dev/null || echo 0) + 1 )); echo $n > "$1"; ` + body
}

// on-failure: a service that crashes once runs on after one backoff; the
// events say so and the result counts the restart.
func TestRestartOnFailureRecovers(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	sp := spec(agent, "svc", "{bin} flaky {f} 2", map[string]any{"f": filepath.Join(agent, "count")})
	sp.Restart = policy("on-failure", func(r *runs.Restart) { r.BackoffMS = 20 })
	r := start(t, agent, sp)
	res := r.wait(10 * time.Second)
	if res.Status != runs.StatusDone || res.Restarts != 1 {
		t.Fatalf("result %+v, want done with 1 restart", res)
	}
	if d := r.delays(); len(d) != 1 || d[0] != 20 {
		t.Errorf("backoff delays %v, want [20]", d)
	}
	rs := r.eventsNamed("run.restart")
	if len(rs) != 1 || rs[0]["reason"] != "policy" {
		t.Errorf("run.restart events %v", rs)
	}
	if p := r.dir.Progress(); p == nil || p.Phase != runs.StatusDone || p.Attempt != 2 {
		t.Errorf("progress %+v, want phase done attempt 2", p)
	}
}

// The delay doubles with each quick failure, is capped by max_backoff_ms,
// and the start limit (burst) ends the run as failed, reason start_limit.
func TestRestartBackoffGrowsToCapThenLimit(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	sp := spec(agent, "crash", "{bin} exit 3", nil)
	sp.Restart = policy("on-failure", func(r *runs.Restart) { r.BackoffMS, r.MaxBackoffMS, r.Burst = 20, 50, 5 })
	r := start(t, agent, sp)
	res := r.wait(10 * time.Second)
	if res.Status != runs.StatusFailed || res.Reason != "start_limit" || res.Code != 3 || res.Restarts != 4 {
		t.Fatalf("result %+v, want failed start_limit code 3 after 4 restarts", res)
	}
	if d := fmt.Sprint(r.delays()); d != "[20 40 50 50]" {
		t.Errorf("backoff delays %s, want [20 40 50 50]", d)
	}
	if n := len(r.eventsNamed("command.start")); n != 5 {
		t.Errorf("%d starts, want burst = 5", n)
	}
	if in, _ := runs.Load(r.dir); in == nil || in.Status != runs.StatusFailed || in.Reason != "start_limit" {
		t.Errorf("Load: %+v", in)
	}
}

// Burst 2 in a large window: two starts, then the limit.
func TestRestartStartLimitBurst(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	count := filepath.Join(agent, "count")
	sp := spec(agent, "crash", "{bin} flaky {f} 99", map[string]any{"f": count})
	sp.Restart = policy("always", func(r *runs.Restart) { r.BackoffMS, r.Burst, r.WindowMS = 10, 2, 600000 })
	r := start(t, agent, sp)
	res := r.wait(10 * time.Second)
	if res.Status != runs.StatusFailed || res.Reason != "start_limit" || res.Restarts != 1 {
		t.Fatalf("result %+v, want failed start_limit with 1 restart", res)
	}
	if data, _ := os.ReadFile(count); strings.Count(string(data), "x") != 2 {
		t.Errorf("the command ran %d times, want 2", strings.Count(string(data), "x"))
	}
	if !strings.Contains(res.Error, "restart limit") {
		t.Errorf("error %q does not explain the limit", res.Error)
	}
}

// Starts older than window_ms no longer count toward the burst: restarts
// spaced wider than the window never hit the limit.
func TestRestartWindowForgetsOldStarts(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	sp := spec(agent, "slow", "{bin} flaky {f} 4", map[string]any{"f": filepath.Join(agent, "count")})
	sp.Restart = policy("on-failure", func(r *runs.Restart) { r.BackoffMS, r.MaxBackoffMS, r.Burst, r.WindowMS = 150, 150, 2, 100 })
	r := start(t, agent, sp)
	res := r.wait(10 * time.Second)
	if res.Status != runs.StatusDone || res.Restarts != 3 {
		t.Fatalf("result %+v, want done after 3 restarts (the window forgets each old start)", res)
	}
}

// After reset_after_ms of stable running the backoff starts over: delays
// 20, 40, then (attempt 3 ran 1.2 s > 1 s) 20, 40 again.
func TestRestartBackoffResetsAfterStableRun(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	body := script(`case $n in 3) sleep 1.2; exit 1;; 5) exit 0;; *) exit 1;; esac`)
	sp := spec(agent, "reset", "sh -c {script} sh {f}", map[string]any{"script": body, "f": filepath.Join(agent, "count")})
	sp.Restart = policy("on-failure", func(r *runs.Restart) {
		r.BackoffMS, r.MaxBackoffMS, r.ResetAfterMS, r.Burst = 20, 10000, 1000, 10
	})
	r := start(t, agent, sp)
	res := r.wait(20 * time.Second)
	if res.Status != runs.StatusDone || res.Restarts != 4 {
		t.Fatalf("result %+v, want done after 4 restarts", res)
	}
	if d := fmt.Sprint(r.delays()); d != "[20 40 20 40]" {
		t.Errorf("backoff delays %s, want [20 40 20 40] (reset after the stable attempt 3)", d)
	}
}

// Jitter spreads the delay within ±jitter of the base.
func TestRestartJitterBounds(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	sp := spec(agent, "jit", "{bin} exit 1", nil)
	sp.Restart = policy("on-failure", func(r *runs.Restart) { r.BackoffMS, r.Jitter, r.Burst = 100, 0.5, 4 })
	r := start(t, agent, sp)
	r.wait(10 * time.Second)
	d := r.delays()
	if len(d) != 3 {
		t.Fatalf("delays %v, want 3", d)
	}
	for i, base := range []int{100, 200, 400} {
		if d[i] < base/2 || d[i] > base*3/2 {
			t.Errorf("delay %d = %d ms, outside %d±50%%", i, d[i], base)
		}
	}
}

// While the policy waits the run is in backoff (Load and progress.json
// say so) and still live; control.kill during the wait ends it at once.
// No restart was made and nothing was killed: restarts 0, and the code is
// the last attempt's.
func TestRestartBackoffIsObservableAndKillable(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	sp := spec(agent, "wait", "{bin} exit 4", nil)
	sp.Restart = policy("on-failure", func(r *runs.Restart) { r.BackoffMS = 60000 })
	r := start(t, agent, sp)
	eventually(t, 10*time.Second, "status backoff", func() bool {
		in, err := runs.Load(r.dir)
		return err == nil && in.Status == runs.StatusBackoff
	})
	in, _ := runs.Load(r.dir)
	if !in.Live() || in.Progress == nil || in.Progress.Phase != runs.StatusBackoff || in.Progress.NextStart == "" || in.Progress.Restarts != 0 {
		t.Fatalf("in backoff: live=%v progress %+v", in.Live(), in.Progress)
	}
	next, err := time.Parse(time.RFC3339Nano, in.Progress.NextStart)
	if err != nil || time.Until(next) < 30*time.Second {
		t.Errorf("next_start_at %q, want about a minute ahead", in.Progress.NextStart)
	}
	r.send("control.kill", nil)
	res := r.wait(10 * time.Second)
	if res.Status != runs.StatusKilled || res.Restarts != 0 || res.Code != 4 || res.Killed {
		t.Fatalf("result %+v, want killed, code 4 (the attempt's), 0 restarts, nothing killed", res)
	}
	if n := len(r.eventsNamed("command.start")); n != 1 {
		t.Errorf("%d starts, want 1 (killed during the backoff)", n)
	}
}

// control.restart during the backoff starts the next attempt at once.
func TestRestartControlSkipsBackoff(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	sp := spec(agent, "skip", "{bin} flaky {f} 2", map[string]any{"f": filepath.Join(agent, "count")})
	sp.Restart = policy("on-failure", func(r *runs.Restart) { r.BackoffMS = 60000 })
	r := start(t, agent, sp)
	eventually(t, 10*time.Second, "status backoff", func() bool {
		in, err := runs.Load(r.dir)
		return err == nil && in.Status == runs.StatusBackoff
	})
	r.send("control.restart", nil)
	if res := r.wait(10 * time.Second); res.Status != runs.StatusDone {
		t.Fatalf("result %+v, want done (attempt 2 succeeds)", res)
	}
}

// always restarts after a success too; never (and no policy) runs once.
func TestRestartAlwaysAndNever(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	count := filepath.Join(agent, "count-always")
	sp := spec(agent, "always", "{bin} flaky {f} 1", map[string]any{"f": count})
	sp.Restart = policy("always", func(r *runs.Restart) { r.BackoffMS, r.Burst = 10, 3 })
	r := start(t, agent, sp)
	res := r.wait(10 * time.Second)
	if res.Reason != "start_limit" || res.Code != 0 || res.Restarts != 2 {
		t.Fatalf("always: result %+v, want the limit after 3 successful starts", res)
	}
	for _, e := range r.eventsNamed("run.backoff") {
		if e["code"] != float64(0) {
			t.Errorf("always: backoff after code %v, want 0", e["code"])
		}
	}

	for _, p := range []*runs.Restart{policy("never", nil), nil} {
		name := "none"
		if p != nil {
			name = p.Policy
		}
		count := filepath.Join(agent, "count-"+name)
		sp := spec(agent, name, "{bin} flaky {f} 2", map[string]any{"f": count})
		sp.Restart = p
		r := start(t, agent, sp)
		res := r.wait(10 * time.Second)
		if res.Status != runs.StatusFailed || res.Restarts != 0 || len(r.eventsNamed("run.backoff")) != 0 {
			t.Errorf("%s: result %+v, %d backoffs; want failed once", name, res, len(r.eventsNamed("run.backoff")))
		}
		if data, _ := os.ReadFile(count); strings.Count(string(data), "x") != 1 {
			t.Errorf("%s: ran %d times, want 1", name, strings.Count(string(data), "x"))
		}
	}
}
