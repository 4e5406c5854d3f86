package workflows_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/workflows"
)

// run parses src and schedules it to its end with real processes; it
// returns the final state, the host and the nodes reported failed.
func run(t *testing.T, src string) (*workflows.State, *procHost, []string) {
	t.Helper()
	e, h, failed := engine(t, src)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := e.Run(ctx); err != nil {
		t.Fatalf("Run: %v", err)
	}
	return e.St, h, *failed
}

func engine(t *testing.T, src string) (*workflows.Engine, *procHost, *[]string) {
	t.Helper()
	w, err := parse(t, src)
	if err != nil {
		t.Fatal(err)
	}
	h := newProcHost(t)
	dir := t.TempDir()
	failed := &[]string{}
	var mu sync.Mutex
	e := &workflows.Engine{W: w, St: workflows.NewState(w, "wf", "i1", time.Now()), Host: h, Dir: dir,
		Failed: func(n *workflows.NodeState) { mu.Lock(); *failed = append(*failed, n.ID); mu.Unlock() }}
	return e, h, failed
}

func status(st *workflows.State) map[string]string {
	out := map[string]string{}
	for _, n := range st.Nodes {
		out[n.ID] = n.Status
	}
	return out
}

func wantStatus(t *testing.T, st *workflows.State, want map[string]string) {
	t.Helper()
	got := status(st)
	for id, s := range want {
		if got[id] != s {
			t.Errorf("node %s is %s; want %s (all: %v)", id, got[id], s, got)
		}
	}
}

// TestEngineConcurrencyAndOrder: at most max_concurrency nodes run at
// once (seen from the processes' start and end times), and a node starts
// only after every dependency ended.
func TestEngineConcurrencyAndOrder(t *testing.T) {
	st, h, _ := run(t, `{"policy":{"max_concurrency":2},"nodes":[
	  {"id":"n1","template":"sleep 150"},{"id":"n2","template":"sleep 150"},{"id":"n3","template":"sleep 150"},
	  {"id":"n4","template":"sleep 150"},{"id":"n5","template":"sleep 150"},
	  {"id":"sink","template":"exit 0","depends_on":["n1","n2","n3","n4","n5"]}]}`)
	if st.Status != workflows.StatusDone {
		t.Fatalf("workflow %s (%s); want done", st.Status, st.Reason)
	}
	if got := h.maxOverlap(); got != 2 {
		t.Errorf("at most %d nodes ran at once; want exactly max_concurrency 2", got)
	}
	sink := h.attempts("sink")[0]
	for _, id := range []string{"n1", "n2", "n3", "n4", "n5"} {
		if p := h.attempts(id)[0]; !p.ended.Before(sink.started) {
			t.Errorf("sink started at %v before its dependency %s ended at %v", sink.started, id, p.ended)
		}
	}
}

// TestEngineRetryPassesOnSecondAttempt: a flaky node fails once, waits its
// backoff, and passes; its dependent runs once.
func TestEngineRetryPassesOnSecondAttempt(t *testing.T) {
	file := filepath.Join(t.TempDir(), "count")
	st, h, failed := run(t, `{"nodes":[
	  {"id":"flaky","template":"flaky `+file+` 2","metadata":{"retry":{"max":2,"backoff_ms":100}}},
	  {"id":"after","template":"exit 0","depends_on":["flaky"]}]}`)
	wantStatus(t, st, map[string]string{"flaky": "done", "after": "done"})
	a := h.attempts("flaky")
	if len(a) != 2 || st.Node("flaky").Attempts != 2 {
		t.Fatalf("flaky ran %d times (state attempts %d); want 2", len(a), st.Node("flaky").Attempts)
	}
	if gap := a[1].started.Sub(a[0].ended); gap < 90*time.Millisecond {
		t.Errorf("the retry started %s after the failure; want the 100 ms backoff", gap)
	}
	if len(h.attempts("after")) != 1 || len(failed) != 0 {
		t.Errorf("after ran %d times, failed reported %v", len(h.attempts("after")), failed)
	}
}

// TestEngineFailFast: the first failure kills the running nodes and
// cancels the pending ones; the workflow fails naming the node.
func TestEngineFailFast(t *testing.T) {
	st, h, failed := run(t, `{"policy":{"fail_fast":true},"nodes":[
	  {"id":"bad","template":"sleep 100","metadata":{"priority":"high"}},
	  {"id":"bad2","template":"exit 3","depends_on":["bad"]},
	  {"id":"long","template":"sleep-forever"},
	  {"id":"later","template":"exit 0","depends_on":["long"]}]}`)
	wantStatus(t, st, map[string]string{"bad": "done", "bad2": "failed", "long": "killed", "later": "cancelled"})
	if st.Status != workflows.StatusFailed || !strings.Contains(st.Reason, "bad2") || !slices.Equal(failed, []string{"bad2"}) {
		t.Errorf("workflow %s reason %q, failed reported %v; want failed naming bad2, reported once", st.Status, st.Reason, failed)
	}
	if l := h.attempts("long"); len(l) != 1 || !l[0].killed || !l[0].done {
		t.Errorf("long: %d attempts, killed=%v; want its process killed", len(l), len(l) > 0 && l[0].killed)
	}
	if n := len(h.attempts("later")); n != 0 {
		t.Errorf("later ran %d times; want cancelled before it started", n)
	}
	if code := st.Node("bad2").ExitCode; code == nil || *code != 3 {
		t.Errorf("bad2 exit code %v; want 3", code)
	}
}

// TestEngineWithoutFailFast: only the failed node's dependents (and
// theirs) are skipped; the other branches run to their end.
func TestEngineWithoutFailFast(t *testing.T) {
	st, h, failed := run(t, `{"nodes":[
	  {"id":"bad","template":"exit 2"},
	  {"id":"d1","template":"exit 0","depends_on":["bad"]},
	  {"id":"d2","template":"exit 0","depends_on":["d1"]},
	  {"id":"ok","template":"sleep 200"},
	  {"id":"ok2","template":"exit 0","depends_on":["ok"]}]}`)
	wantStatus(t, st, map[string]string{"bad": "failed", "d1": "skipped", "d2": "skipped", "ok": "done", "ok2": "done"})
	if st.Status != workflows.StatusFailed || !slices.Equal(st.Failed, []string{"bad"}) || !slices.Equal(failed, []string{"bad"}) {
		t.Errorf("workflow %s failed=%v reported=%v", st.Status, st.Failed, failed)
	}
	if len(h.attempts("d1"))+len(h.attempts("d2")) != 0 {
		t.Error("a skipped node ran")
	}
	if !strings.Contains(st.Node("d2").Reason, "d1 skipped") {
		t.Errorf("d2 reason %q", st.Node("d2").Reason)
	}
}

// TestEngineTimeout: a node past metadata.timeout_ms is stopped and
// counts as a failed attempt with exit 124, retried as configured.
func TestEngineTimeout(t *testing.T) {
	st, h, _ := run(t, `{"nodes":[{"id":"hang","template":"sleep-forever","metadata":{"timeout_ms":150,"retry":{"max":1,"backoff_ms":10}}}]}`)
	n := st.Node("hang")
	if n.Status != workflows.NodeFailed || n.ExitCode == nil || *n.ExitCode != 124 || n.Reason != "timeout" || n.Attempts != 2 {
		t.Errorf("hang = %+v; want failed, exit 124, reason timeout, 2 attempts", n)
	}
	for _, p := range h.attempts("hang") {
		if !p.done || !p.killed {
			t.Errorf("attempt %d: done=%v killed=%v; want its process killed", p.attempt, p.done, p.killed)
		}
		if d := p.ended.Sub(p.started); d < 150*time.Millisecond || d > 5*time.Second {
			t.Errorf("attempt %d ran %s; want about the 150 ms timeout", p.attempt, d)
		}
	}
}

// TestEngineService: a service starts first, keeps running while its
// dependents run (it does not take a concurrency slot), and is stopped
// once every other node ended; the workflow is done.
func TestEngineService(t *testing.T) {
	st, h, _ := run(t, `{"policy":{"max_concurrency":1},"nodes":[
	  {"id":"db","template":"sleep-forever","service":true},
	  {"id":"test1","template":"sleep 100","depends_on":[{"node":"db","condition":"started"}]},
	  {"id":"test2","template":"sleep 100","depends_on":[{"node":"db","condition":"started"}]}]}`)
	if st.Status != workflows.StatusDone {
		t.Fatalf("workflow %s (%s); want done", st.Status, st.Reason)
	}
	wantStatus(t, st, map[string]string{"db": "done", "test1": "done", "test2": "done"})
	db := h.attempts("db")[0]
	for _, id := range []string{"test1", "test2"} {
		p := h.attempts(id)[0]
		if p.started.Before(db.started) || !db.ended.After(p.ended) {
			t.Errorf("%s ran %v–%v outside the service's %v–%v", id, p.started, p.ended, db.started, db.ended)
		}
	}
	if !db.killed {
		t.Error("the service was not stopped by the scheduler")
	}
	if got := h.maxOverlap("db"); got != 1 {
		t.Errorf("%d non-service nodes ran at once; want 1", got)
	}
}

// TestEngineRetryCommand: control.retry of a failed node re-runs it and
// its skipped dependents (once each); done nodes stay done.
func TestEngineRetryCommand(t *testing.T) {
	file := filepath.Join(t.TempDir(), "count")
	e, h, failed := engine(t, `{"nodes":[
	  {"id":"first","template":"exit 0"},
	  {"id":"flaky","template":"flaky `+file+` 2","depends_on":["first"]},
	  {"id":"after","template":"exit 0","depends_on":["flaky"]}]}`)
	ctx := context.Background()
	if err := e.Run(ctx); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, e.St, map[string]string{"first": "done", "flaky": "failed", "after": "skipped"})
	if err := e.Apply("first"); err == nil {
		t.Error("retry of a done node was accepted")
	}
	if err := e.Apply("nope"); err == nil {
		t.Error("retry of an unknown node was accepted")
	}
	if err := e.Apply("flaky"); err != nil {
		t.Fatal(err)
	}
	if err := e.Run(ctx); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, e.St, map[string]string{"first": "done", "flaky": "done", "after": "done"})
	if e.St.Status != workflows.StatusDone || len(e.St.Failed) != 0 {
		t.Errorf("workflow %s failed=%v; want done", e.St.Status, e.St.Failed)
	}
	if a, b, c := len(h.attempts("first")), len(h.attempts("flaky")), len(h.attempts("after")); a != 1 || b != 2 || c != 1 {
		t.Errorf("runs: first %d, flaky %d, after %d; want 1, 2, 1", a, b, c)
	}
	if len(*failed) != 1 {
		t.Errorf("failed reported %v; want flaky once", *failed)
	}
}

// TestEngineRetryUnderFailFast: with fail_fast, control.retry of one of
// two failed nodes runs it again; the other's failure, there before the
// retry, does not stop it, and still fails the workflow at its end.
func TestEngineRetryUnderFailFast(t *testing.T) {
	e, h, _ := engine(t, `{"policy":{"fail_fast":true},"nodes":[
	  {"id":"a","template":"exit 0"},{"id":"b","template":"exit 1"},
	  {"id":"after","template":"exit 0","depends_on":["a"]}]}`)
	// As a and b failing in one tick left it.
	one := 1
	for _, id := range []string{"a", "b"} {
		n := e.St.Node(id)
		n.Status, n.Attempts, n.ExitCode = workflows.NodeFailed, 1, &one
	}
	after := e.St.Node("after")
	after.Status, after.Reason = workflows.NodeSkipped, "dependency a failed"
	e.St.Failed, e.St.Status = []string{"a", "b"}, workflows.StatusFailed
	if err := e.Apply("a"); err != nil {
		t.Fatal(err)
	}
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, e.St, map[string]string{"a": "done", "b": "failed", "after": "done"})
	if n := len(h.attempts("a")); n != 1 {
		t.Errorf("a ran %d times after its retry; want once", n)
	}
	if e.St.Status != workflows.StatusFailed || !slices.Equal(e.St.Failed, []string{"b"}) {
		t.Errorf("workflow %s failed=%v; want failed by b", e.St.Status, e.St.Failed)
	}
	// A failure after the retry stops the workflow again: b retried
	// fails anew, and fail_fast holds for it.
	if err := e.Apply("b"); err != nil {
		t.Fatal(err)
	}
	if len(e.St.Excused) != 0 {
		t.Errorf("excused %v after every failed node was retried", e.St.Excused)
	}
}

// TestEngineRetryStartsItsService: control.retry of a node whose service
// was stopped once no node needed it starts the service again, and the
// node runs while it runs.
func TestEngineRetryStartsItsService(t *testing.T) {
	e, h, _ := engine(t, `{"nodes":[
	  {"id":"web","template":"sleep-forever","service":true},
	  {"id":"e2e","template":"sleep 100","depends_on":[{"node":"web","condition":"started"}]}]}`)
	// As the first run left it: e2e failed, then web was stopped.
	zero, one := 0, 1
	web, e2e := e.St.Node("web"), e.St.Node("e2e")
	web.Status, web.Attempts, web.ExitCode, web.Reason = workflows.NodeDone, 1, &zero, "stopped: every node that needed it ended"
	e2e.Status, e2e.Attempts, e2e.ExitCode = workflows.NodeFailed, 1, &one
	e.St.Failed, e.St.Status = []string{"e2e"}, workflows.StatusFailed
	if err := e.Apply("e2e"); err != nil {
		t.Fatal(err)
	}
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if e.St.Status != workflows.StatusDone {
		t.Fatalf("workflow %s (%s); want done", e.St.Status, e.St.Reason)
	}
	ws, es := h.attempts("web"), h.attempts("e2e")
	if len(ws) != 1 || len(es) != 1 {
		t.Fatalf("after the retry web ran %d times, e2e %d; want once each", len(ws), len(es))
	}
	if es[0].started.Before(ws[0].started) || !ws[0].ended.After(es[0].ended) {
		t.Errorf("e2e ran %v–%v outside its service's %v–%v", es[0].started, es[0].ended, ws[0].started, ws[0].ended)
	}
}

// TestEngineServiceWaitingAtTheEnd: a service waiting to run again (its
// backoff) when the last node that needed it ends done is cancelled, and
// the workflow is done, not killed.
func TestEngineServiceWaitingAtTheEnd(t *testing.T) {
	e, _, _ := engine(t, `{"nodes":[
	  {"id":"web","template":"sleep-forever","service":true,"metadata":{"retry":{"max":3,"backoff_ms":60000}}},
	  {"id":"e2e","template":"exit 0","depends_on":[{"node":"web","condition":"started"}]}]}`)
	zero, one := 0, 1
	web, e2e := e.St.Node("web"), e.St.Node("e2e")
	web.Status, web.Attempts, web.ExitCode, web.NextAt = workflows.NodeBackoff, 1, &one, time.Now().Add(time.Minute)
	e2e.Status, e2e.Attempts, e2e.ExitCode = workflows.NodeDone, 1, &zero
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, e.St, map[string]string{"web": "cancelled", "e2e": "done"})
	if e.St.Status != workflows.StatusDone {
		t.Errorf("workflow %s (%s); want done", e.St.Status, e.St.Reason)
	}
}

// TestEngineServiceStartingAtTheEnd: the same for a service whose run is
// not up yet (starting): cancelled, the workflow done, not killed.
func TestEngineServiceStartingAtTheEnd(t *testing.T) {
	e, _, _ := engine(t, `{"nodes":[
	  {"id":"web","template":"sleep-forever","service":true},
	  {"id":"x","template":"exit 0"}]}`)
	zero := 0
	web, x := e.St.Node("web"), e.St.Node("x")
	web.Status, web.Attempts, web.NextAt = workflows.NodeStarting, 1, time.Now().Add(time.Minute)
	x.Status, x.Attempts, x.ExitCode = workflows.NodeDone, 1, &zero
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, e.St, map[string]string{"web": "cancelled", "x": "done"})
	if e.St.Status != workflows.StatusDone {
		t.Errorf("workflow %s (%s); want done", e.St.Status, e.St.Reason)
	}
}

// TestEnginePauseBelongsToTheClocksItStopped: time the workflow spent
// suspended is given back to the nodes that ran through it, not to one
// started after it (whose timeout then holds), nor counted twice or lost
// when a new supervisor counts paused_ms from 0.
func TestEnginePauseBelongsToTheClocksItStopped(t *testing.T) {
	e, h, _ := engine(t, `{"nodes":[
	  {"id":"first","template":"sleep 300"},
	  {"id":"b","template":"sleep-forever","depends_on":["first"],"metadata":{"timeout_ms":500}}]}`)
	var paused atomic.Int64
	e.Paused, e.Supervisor = paused.Load, "s1"
	go func() {
		time.Sleep(100 * time.Millisecond)
		paused.Store(5000) // suspended 5 s while first ran
	}()
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	b := h.attempts("b")[0]
	if d := b.ended.Sub(b.started); d > 3*time.Second {
		t.Errorf("b ran %s; want about its 500 ms timeout (first's pause credited to it)", d)
	}
	if n := e.St.Node("b"); n.Reason != "timeout" {
		t.Errorf("b = %+v; want failed by its timeout", n)
	}

	// A resumed run's new supervisor counts from 0: its 3 s are new
	// pause, not 3 s less the old supervisor's 1 s.
	e, h, _ = engine(t, `{"nodes":[{"id":"hang","template":"sleep-forever","metadata":{"timeout_ms":500}}]}`)
	e.St.PausedSeen, e.St.PausedBy = 1000, "s1"
	e.Supervisor = "s2"
	paused.Store(0)
	e.Paused = paused.Load
	go func() {
		time.Sleep(200 * time.Millisecond)
		paused.Store(3000) // suspended 3 s while hang ran
	}()
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	hang := h.attempts("hang")[0]
	if d := hang.ended.Sub(hang.started); d < 3*time.Second || d > 6*time.Second {
		t.Errorf("hang ran %s; want its 500 ms timeout plus the 3 s suspended", d)
	}
}

// TestEngineResume: a scheduler that starts on a saved state never starts
// a finished node again, finds the run of a node recorded starting (its
// attempt), and goes on from there.
func TestEngineResume(t *testing.T) {
	e, h, _ := engine(t, `{"nodes":[
	  {"id":"done","template":"exit 0"},
	  {"id":"asked","template":"sleep 100"},
	  {"id":"next","template":"exit 0","depends_on":["done","asked"]}]}`)
	// As a crashed scheduler left it: done ran; asked was asked for
	// (attempt 1) and its run is up, but the answer was never recorded.
	code := 0
	d := e.St.Node("done")
	d.Status, d.Attempts, d.ExitCode = workflows.NodeDone, 1, &code
	a := e.St.Node("asked")
	a.Status, a.Attempts = workflows.NodeStarting, 1
	h.Start(context.Background(), []workflows.StartRequest{{Node: "asked", Attempt: 1, Run: a.Run, Params: map[string]any{"template": "sleep 100"}}})
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, e.St, map[string]string{"done": "done", "asked": "done", "next": "done"})
	if x, y, z := len(h.attempts("done")), len(h.attempts("asked")), len(h.attempts("next")); x != 0 || y != 1 || z != 1 {
		t.Errorf("runs: done %d, asked %d, next %d; want 0, 1, 1", x, y, z)
	}
	// The state file holds the end, written whole.
	saved, err := workflows.Load(e.Dir)
	if err != nil || saved.Status != workflows.StatusDone || saved.Node("next").Status != workflows.NodeDone {
		t.Errorf("saved state %+v, %v", saved, err)
	}
}

// TestEngineKill: cancelling Run kills every running node and records the
// workflow killed.
func TestEngineKill(t *testing.T) {
	e, h, _ := engine(t, `{"nodes":[{"id":"a","template":"sleep-forever"},{"id":"b","template":"exit 0","depends_on":["a"]}]}`)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for len(h.attempts("a")) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err == nil {
		t.Error("Run returned no error for a cancelled context")
	}
	wantStatus(t, e.St, map[string]string{"a": "killed", "b": "cancelled"})
	if e.St.Status != workflows.StatusKilled {
		t.Errorf("workflow %s; want killed", e.St.Status)
	}
	p := h.attempts("a")[0]
	for !func() bool { h.mu.Lock(); defer h.mu.Unlock(); return p.done }() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !p.killed {
		t.Error("a's process was not killed")
	}
}

// Time the workflow spent suspended (its run's paused_ms, read through
// Engine.Paused when a timeout falls due) does not count toward a node's
// timeout: a node that runs 1.5 s with 5 s reported suspended while it
// ran is within its 1 s; without the pause it times out.
func TestEngineTimeoutSkipsSuspendedTime(t *testing.T) {
	src := `{"nodes":[{"id":"a","template":"sleep 1500","metadata":{"timeout_ms":1000}}]}`
	e, _, _ := engine(t, src)
	var reads atomic.Int64
	began := time.Now()
	e.Paused = func() int64 {
		reads.Add(1)
		if time.Since(began) < 300*time.Millisecond {
			return 0 // a starts first
		}
		return 5000
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := e.Run(ctx); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, e.St, map[string]string{"a": workflows.NodeDone})
	if reads.Load() == 0 || e.St.PausedMS != 5000 || e.St.Node("a").PausedMS != 5000 {
		t.Errorf("paused read %d times, workflow paused_ms=%d node paused_ms=%d; want 5000 each", reads.Load(), e.St.PausedMS, e.St.Node("a").PausedMS)
	}

	e2, _, _ := engine(t, src)
	e2.Paused = func() int64 { return 0 }
	if err := e2.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if n := e2.St.Node("a"); n.Status != workflows.NodeFailed || n.Reason != "timeout" {
		t.Errorf("without a pause: node %s (%s); want failed by its timeout", n.Status, n.Reason)
	}
}

// gatedHost holds the start of node gate's later attempts until release
// is closed: the scheduler is stuck inside Start, as when a kernel is slow.
type gatedHost struct {
	*procHost
	gate    string
	release chan struct{}
}

func (g *gatedHost) Start(ctx context.Context, reqs []workflows.StartRequest) []workflows.StartResult {
	for _, r := range reqs {
		if r.Node == g.gate && r.Attempt > 1 {
			<-g.release
		}
	}
	return g.procHost.Start(ctx, reqs)
}

// TestEngineRetryIsSavedBeforeItIsAnswered: a control.retry the running
// scheduler accepted is in workflow.json when Retry returns — the inbox
// marks the message handled then, so a scheduler that dies before its
// next save must not lose it.
func TestEngineRetryIsSavedBeforeItIsAnswered(t *testing.T) {
	e, h, _ := engine(t, `{"nodes":[{"id":"bad","template":"exit 1"},{"id":"long","template":"sleep-forever"}]}`)
	g := &gatedHost{procHost: h, gate: "bad", release: make(chan struct{})}
	e.Host = g
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	defer close(g.release)
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, err := workflows.Load(e.Dir)
		if err == nil && st.Node("bad").Status == workflows.NodeFailed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("node bad did not fail within 20 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := e.Retry(ctx, "bad"); err != nil {
		t.Fatal(err)
	}
	st, err := workflows.Load(e.Dir)
	if err != nil {
		t.Fatal(err)
	}
	// pending, or starting when the next tick already saved its start
	if s := st.Node("bad").Status; s != workflows.NodePending && s != workflows.NodeStarting {
		t.Errorf("workflow.json says node bad is %s once Retry returned; want pending or starting (the retry saved)", s)
	}
}

// heldHost answers a node's start as a run id another live run holds
// (busy), whatever the attempt.
type heldHost struct {
	*procHost
	node string
}

func (h heldHost) Start(ctx context.Context, reqs []workflows.StartRequest) []workflows.StartResult {
	out := make([]workflows.StartResult, len(reqs))
	for i, r := range reqs {
		if r.Node == h.node {
			out[i] = workflows.StartResult{Err: errors.New("run:wf-b is already running"), Again: true, Held: true}
			continue
		}
		out[i] = h.procHost.Start(ctx, reqs[i:i+1])[0]
	}
	return out
}

// A node whose run id another live run holds fails (start_failed) after
// HeldWait instead of waiting in starting for as long as that run lives.
func TestEngineHeldRunIDFails(t *testing.T) {
	defer func(d time.Duration) { workflows.HeldWait = d }(workflows.HeldWait)
	workflows.HeldWait = 300 * time.Millisecond
	e, h, failed := engine(t, `{"nodes":[{"id":"a","template":"exit 0"},{"id":"b","template":"exit 0","depends_on":["a"]}]}`)
	e.Host = heldHost{procHost: h, node: "b"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.Run(ctx); err != nil {
		t.Fatalf("Run: %v", err)
	}
	wantStatus(t, e.St, map[string]string{"a": "done", "b": "failed"})
	if n := e.St.Node("b"); !strings.Contains(n.Error, "held by another live run") || n.Reason != "start_failed" {
		t.Errorf("b: reason %q error %q", n.Reason, n.Error)
	}
	if len(*failed) != 1 || (*failed)[0] != "b" {
		t.Errorf("failed reported %v, want [b]", *failed)
	}
}
