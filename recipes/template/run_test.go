package template

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/internal/testproc"
)

// runGraph plans raw (a JSON graph) and runs it with helper processes
// available as "{h}" (this test binary in helper mode).
func runGraph(t *testing.T, raw string, values Values, r *Runner) *Result {
	t.Helper()
	node, err := ParseJSON([]byte(raw))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if values == nil {
		values = Values{}
	}
	values["h"] = helper()[0]
	plan, err := NewPlan(node, values, Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	if r == nil {
		r = &Runner{}
	}
	r.Env = helperEnv()
	if r.KillGrace == 0 {
		r.KillGrace = 200 * time.Millisecond
	}
	res := r.Run(context.Background(), plan, nil)
	t.Cleanup(func() { res.Stdout.Close() })
	return res
}

func stdout(t *testing.T, res *Result) string {
	t.Helper()
	b, err := res.Stdout.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func waitGone(t *testing.T, pidfile string) {
	t.Helper()
	pid := testproc.ReadPid(pidfile)
	if pid == 0 {
		t.Fatalf("no pid recorded in %s", pidfile)
	}
	deadline := time.Now().Add(3 * time.Second)
	for testproc.Alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d from %s survived", pid, pidfile)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitGoneIfStarted is waitGone for a leaf a timer may end before it wrote
// its pid (a loaded machine can take longer than the timer to start it). A
// leaf that survived would write its pid, so one that has not within 3 s
// never ran past the kill.
func waitGoneIfStarted(t *testing.T, pidfile string) {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Second); testproc.ReadPid(pidfile) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			return
		}
	}
	waitGone(t, pidfile)
}

func TestSequencePassesStdout(t *testing.T) {
	res := runGraph(t, `["echo hello", "{h} echo-stdin", "tr a-z A-Z"]`, nil, nil)
	if res.Code != 0 || stdout(t, res) != "HELLO\n" {
		t.Fatalf("code=%d out=%q", res.Code, stdout(t, res))
	}
	if len(res.Commands) != 3 {
		t.Fatalf("commands = %q", res.Commands)
	}
}

func TestContinueFailureClearsOutput(t *testing.T) {
	res := runGraph(t, `["echo a", "{h} exit 3", "{h} echo-stdin", "echo done"]`, nil, nil)
	if res.Code != 0 || stdout(t, res) != "done\n" {
		t.Fatalf("code=%d out=%q", res.Code, stdout(t, res))
	}
	if len(res.NonCritical) != 1 || res.NonCritical[0].Code != 3 || res.NonCritical[0].Path != "template[1]" {
		t.Fatalf("noncritical = %+v", res.NonCritical)
	}
}

func TestBranchScopePropagatesToRoot(t *testing.T) {
	res := runGraph(t, `["echo a", [{"failure":"branch","template":"{h} exit 4"}, "echo never"], "echo never2"]`, nil, nil)
	if res.Code != 4 || res.Failure == nil || res.Failure.Path != "template[1][0]" {
		t.Fatalf("code=%d failure=%+v", res.Code, res.Failure)
	}
	for _, c := range res.Commands {
		if strings.Contains(c, "never") {
			t.Fatalf("ran %q after a branch failure", c)
		}
	}
}

func TestRootFailureKillsParallelSiblings(t *testing.T) {
	dir := t.TempDir()
	pid := filepath.Join(dir, "sib.pid")
	start := time.Now()
	res := runGraph(t, `{"parallel":true,"template":[
		"{h} sleep-forever {pid}",
		{"failure":"root","template":["{h} exit 9"],"delay":100}]}`, Values{"pid": pid}, nil)
	if res.Code != 9 {
		t.Fatalf("code=%d", res.Code)
	}
	if time.Since(start) > 3*time.Second {
		t.Fatalf("root abort took %s", time.Since(start))
	}
	waitGoneIfStarted(t, pid)
}

func TestGroupTimeoutStopsEveryLeaf(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.pid"), filepath.Join(dir, "b.pid")
	res := runGraph(t, `{"timeout":300,"parallel":true,"template":[
		"{h} ignore-term {a}", ["{h} sleep-forever {b}"]]}`, Values{"a": a, "b": b}, nil)
	if res.Code != 124 || !res.Killed {
		t.Fatalf("code=%d killed=%v out=%q nc=%+v cmds=%q", res.Code, res.Killed, stdout(t, res), res.NonCritical, res.Commands)
	}
	waitGoneIfStarted(t, a)
	waitGoneIfStarted(t, b)
}

func TestGrandchildLeftBehindIsStopped(t *testing.T) {
	pid := filepath.Join(t.TempDir(), "gc.pid")
	res := runGraph(t, `"{h} fork-grandchild {pid} exit"`, Values{"pid": pid}, nil)
	if res.Code != 0 {
		t.Fatalf("code=%d", res.Code)
	}
	waitGone(t, pid)
}

func TestSignalDeathIsFailure(t *testing.T) {
	res := runGraph(t, `"{h} kill-self 15"`, nil, nil)
	if res.Code != 143 {
		t.Fatalf("code=%d, want 143", res.Code)
	}
}

func TestRetryWithRecover(t *testing.T) {
	dir := t.TempDir()
	count, rec := filepath.Join(dir, "count"), filepath.Join(dir, "rec")
	res := runGraph(t, `{"retry":3,"recover":"{h} echo-stdin","template":"{h} flaky {count} 3"}`,
		Values{"count": count, "rec": rec}, nil)
	if res.Code != 0 || stdout(t, res) != "attempt 3\n" {
		t.Fatalf("code=%d out=%q", res.Code, stdout(t, res))
	}
	if got := strings.Count(strings.Join(res.Commands, "\n"), "echo-stdin"); got != 2 {
		t.Fatalf("recover ran %d times, want 2 (between attempts only)", got)
	}
}

func TestLargeOutputSpillsAndFlows(t *testing.T) {
	// 6 MiB is past DefaultSpill, so the buffers spill to files.
	res := runGraph(t, `["{h} bytes {n}", "{h} echo-stdin", "wc -c"]`, Values{"n": "6291456"}, &Runner{TempDir: t.TempDir()})
	if res.Code != 0 || strings.TrimSpace(stdout(t, res)) != "6291456" {
		t.Fatalf("code=%d out=%q", res.Code, stdout(t, res))
	}
}

func TestSpillMakesItsDirectory(t *testing.T) {
	// The spill directory does not exist until an output spills.
	dir := filepath.Join(t.TempDir(), "state", "tmp")
	res := runGraph(t, `["{h} bytes {n}", "wc -c"]`, Values{"n": "5242880"}, &Runner{TempDir: dir})
	if res.Code != 0 || strings.TrimSpace(stdout(t, res)) != "5242880" {
		t.Fatalf("code=%d out=%q", res.Code, stdout(t, res))
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Fatalf("spill directory %s: %v", dir, err)
	}
	small := filepath.Join(t.TempDir(), "unused")
	if res := runGraph(t, `["{h} bytes 10", "wc -c"]`, nil, &Runner{TempDir: small}); res.Code != 0 {
		t.Fatalf("code=%d", res.Code)
	}
	if _, err := os.Stat(small); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a run that never spilled made %s: %v", small, err)
	}
}

func TestEventsCountActive(t *testing.T) {
	var mu sync.Mutex
	var evs []Event
	r := &Runner{OnEvent: func(e Event) { mu.Lock(); evs = append(evs, e); mu.Unlock() }}
	res := runGraph(t, `{"parallel":true,"template":["{h} exit 0","{h} exit 0"]}`, nil, r)
	if res.Code != 0 {
		t.Fatalf("code=%d", res.Code)
	}
	if len(evs) != 4 {
		t.Fatalf("events = %+v", evs)
	}
	if last := evs[len(evs)-1]; last.Type != "command.done" || last.Active != 0 {
		t.Fatalf("last event %+v", last)
	}
}

func TestCancelStopsComposition(t *testing.T) {
	pid := filepath.Join(t.TempDir(), "s.pid")
	raw := `["{h} ignore-term {pid}"]`
	n, err := ParseJSON([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := NewPlan(n, Values{"h": helper()[0], "pid": pid}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for testproc.ReadPid(pid) == 0 {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	res := (&Runner{Env: helperEnv(), KillGrace: 200 * time.Millisecond}).Run(ctx, plan, nil)
	defer res.Stdout.Close()
	if res.Code == 0 || !res.Killed {
		t.Fatalf("code=%d killed=%v", res.Code, res.Killed)
	}
	waitGone(t, pid)
}

// exitCause is a cancel cause that carries an exit code (the CLI cancels
// a foreground exec with the signal it received).
type exitCause int

func (c exitCause) Error() string { return "stopped" }
func (c exitCause) ExitCode() int { return int(c) }

// TestCancelStopsParallel: an aborted parallel node fails with its
// context's exit code — its stopped branch reported "aborted", not a
// timeout of a degraded join that succeeds.
func TestCancelStopsParallel(t *testing.T) {
	pid := filepath.Join(t.TempDir(), "s.pid")
	n, err := ParseJSON([]byte(`{"parallel":true,"template":["{h} sleep-forever {pid}","{h} exit 0"]}`))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := NewPlan(n, Values{"h": helper()[0], "pid": pid}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cause error
		code  int
	}{{exitCause(143), 143}, {context.Canceled, 130}} {
		os.Remove(pid)
		ctx, cancel := context.WithCancelCause(context.Background())
		quickDone := make(chan struct{})
		onEvent := func(e Event) {
			if e.Type == "command.done" && e.Path == "template.template[1]" {
				close(quickDone)
			}
		}
		go func() {
			<-quickDone // the quick branch is done: only the slow one is stopped
			for testproc.ReadPid(pid) == 0 {
				time.Sleep(5 * time.Millisecond)
			}
			cancel(tc.cause)
		}()
		res := (&Runner{Env: helperEnv(), KillGrace: 200 * time.Millisecond, OnEvent: onEvent}).Run(ctx, plan, nil)
		out := stdout(t, res)
		res.Stdout.Close()
		if res.Code != tc.code || !res.Killed || res.Failure == nil || res.Failure.Path != "template.template[0]" {
			t.Fatalf("cause %v: code=%d killed=%v failure=%+v", tc.cause, res.Code, res.Killed, res.Failure)
		}
		if len(res.NonCritical) != 0 {
			t.Errorf("cause %v: the aborted branch is listed as a non-critical failure: %+v", tc.cause, res.NonCritical)
		}
		if len(res.Joins) != 1 || res.Joins[0].Branches[0].Status != "aborted" || res.Joins[0].Branches[1].Status != "done" {
			t.Errorf("cause %v: joins=%+v", tc.cause, res.Joins)
		}
		if !strings.Contains(out, "status: aborted") {
			t.Errorf("cause %v: output %q", tc.cause, out)
		}
		waitGone(t, pid)
	}
}

// stallWriter stalls its first write (a log on a stalled disk), then takes
// everything at once.
type stallWriter struct {
	mu    sync.Mutex
	n     int
	stall time.Duration
}

func (w *stallWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	first := w.n == 0
	w.n += len(p)
	w.mu.Unlock()
	if first {
		time.Sleep(w.stall)
	}
	return len(p), nil
}

// TestSlowWriterLosesNothing: a leaf that exits while its output's writer
// is stalled past readerGrace keeps everything it wrote — the pipes are
// closed only when nothing moves through them (a holder that escaped the
// group), never under a reader that is still copying.
func TestSlowWriterLosesNothing(t *testing.T) {
	const size = 50000 // past one 32 KiB read, within the pipe's buffer
	live := &stallWriter{stall: readerGrace + 1500*time.Millisecond}
	res := runGraph(t, `"{h} bytes 50000"`, nil, &Runner{Stdout: live})
	if res.Code != 0 {
		t.Fatalf("code=%d", res.Code)
	}
	if got := len(stdout(t, res)); got != size {
		t.Errorf("the captured stdout holds %d bytes, want %d", got, size)
	}
	live.mu.Lock()
	defer live.mu.Unlock()
	if live.n != size {
		t.Errorf("the live copy got %d bytes, want %d", live.n, size)
	}
}
