package actors_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/internal/testproc"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// eventsView keeps the rows a runs stream reported, by run id.
type eventsView struct {
	mu     sync.Mutex
	rows   map[string]verbs.RunRow
	gone   map[string]bool
	frames int
	first  *verbs.EventsFrame
	kernel *verbs.KernelFigures
	close  func() // ends the stream and waits for it
}

func (v *eventsView) apply(f *verbs.EventsFrame) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.first == nil {
		v.first = f
	}
	v.frames++
	for _, r := range f.Runs {
		v.rows[r.Run] = r
	}
	for _, d := range f.Gone {
		v.gone[d] = true
	}
	if f.Kernel != nil {
		v.kernel = f.Kernel
	}
	return nil
}

func (v *eventsView) row(id string) (verbs.RunRow, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	r, ok := v.rows[id]
	return r, ok
}

// openEvents reads the kernel's runs stream until the test ends or the
// view's close.
func openEvents(t *testing.T, agent string, req *verbs.Events) *eventsView {
	t.Helper()
	v := &eventsView{rows: map[string]verbs.RunRow{}, gone: map[string]bool{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	env := &verbs.Env{AgentDir: agent, Cwd: agent, Environ: append(os.Environ(), testproc.EnvVar+"=1")}
	go func() { done <- verbs.StreamEvents(ctx, env, req, v.apply) }()
	var once sync.Once
	v.close = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("events stream: %v", err)
			}
		})
	}
	t.Cleanup(v.close)
	eventually(t, 10*time.Second, "the first frame", func() bool {
		v.mu.Lock()
		defer v.mu.Unlock()
		return v.first != nil
	})
	return v
}

// The runs stream: a first frame with the runs that exist, then starts,
// output, CPU and RSS samples, terminal transitions and pruned runs as
// they happen.
func TestEventsStream(t *testing.T) {
	agent := newAgent(t)
	k := startKernel(t, agent, settings(nil))
	k.spawn("s1", "before", "sleep-forever", nil)
	k.spawn("s1", "ended", "exit 3", nil)
	eventually(t, 10*time.Second, "run:ended to end", func() bool {
		in, err := runs.Load(runs.StateDirFor(agent, "ended"))
		return err == nil && in.Status == runs.StatusFailed
	})

	v := openEvents(t, agent, &verbs.Events{IntervalMS: 50, UsageMS: 250})
	if !v.first.Snapshot {
		t.Fatal("the first frame is not marked snapshot")
	}
	if r, ok := v.row("before"); !ok || r.Status != runs.StatusRunning || r.Owner != "s1" || r.Pid == 0 {
		t.Fatalf("snapshot row of run:before: %+v (found %v)", r, ok)
	}
	if r, ok := v.row("ended"); !ok || r.Status != runs.StatusFailed || r.EndedAt.IsZero() {
		t.Fatalf("snapshot row of run:ended: %+v (found %v)", r, ok)
	}

	// A run started now, printing a line, then sleeping.
	resp := k.call("spawn", "s2", map[string]any{"as": "run:talker", "template": []any{"{bin} print-env PI_ACTORS_RUN_ID", "{bin} sleep-forever"}, "values": map[string]any{"bin": os.Args[0]}})
	if resp.Error != nil {
		t.Fatal(resp.Error)
	}
	eventually(t, 10*time.Second, "run:talker's output line", func() bool {
		r, ok := v.row("talker")
		return ok && r.Status == runs.StatusRunning && r.LastLine == "PI_ACTORS_RUN_ID=talker" && r.Owner == "s2"
	})
	eventually(t, 10*time.Second, "RSS samples and the kernel's figures", func() bool {
		r, _ := v.row("talker")
		v.mu.Lock()
		defer v.mu.Unlock()
		return r.RSSBytes > 0 && v.kernel != nil && v.kernel.LiveRuns == 2 && v.kernel.Streams == 1 && v.kernel.RSSBytes > 0
	})

	// Terminal transitions.
	if resp := k.call("message", "s1", map[string]any{"to": "run:before", "type": "control.kill"}); resp.Error != nil {
		t.Fatal(resp.Error)
	}
	eventually(t, 10*time.Second, "run:before killed", func() bool {
		r, _ := v.row("before")
		return r.Status == runs.StatusKilled && r.Reason == "control.kill" && r.CPUPercent == 0
	})

	// A pruned run goes (the index is looked at every few seconds).
	if resp := k.call("message", "s1", map[string]any{"to": "run:ended", "type": "control.prune"}); resp.Error != nil {
		t.Fatal(resp.Error)
	}
	dir := string(runs.StateDirFor(agent, "ended"))
	eventually(t, 15*time.Second, "run:ended gone", func() bool {
		v.mu.Lock()
		defer v.mu.Unlock()
		return v.gone[dir]
	})
}

// A parent run's child knows its parent.
func TestEventsParent(t *testing.T) {
	agent := newAgent(t)
	k := startKernel(t, agent, settings(nil))
	v := openEvents(t, agent, &verbs.Events{IntervalMS: 50})
	resp := callConn(t, agent, wireSpawn(agent, "child", "parent-run"))
	if resp.Error != nil {
		t.Fatal(resp.Error)
	}
	eventually(t, 10*time.Second, "run:child with its parent", func() bool {
		r, ok := v.row("child")
		return ok && r.Parent == "parent-run"
	})
	k.waitIdle()
}

// wireSpawn is a spawn request made from inside run:parent (a leaf's
// environment names its run).
func wireSpawn(agent, id, parent string) wire.Request {
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "PI_ACTORS_") {
			env = append(env, e)
		}
	}
	env = append(env, testproc.EnvVar+"=1", "PI_ACTORS_RUN_ID="+parent)
	return wire.Request{Op: "spawn", Session: "s1", Cwd: agent, Env: env, Params: rawParams(spawnParams(id, "exit 0", nil))}
}

// runWatch reads how the kernel follows run directories.
func (k *kernel) runWatch() verbs.RunWatch {
	k.t.Helper()
	var st verbs.KernelStatus
	if r := k.call("status", "", nil); r.Error != nil || json.Unmarshal(r.Result, &st) != nil || st.RunWatch == nil {
		k.t.Fatalf("kernel status without run_watch: %+v", r)
	}
	return *st.RunWatch
}

// A run printing a line every millisecond does not wake the kernel for
// each while no runs stream is open; while one is, its output is followed
// (and the stream shows the latest line); once it closes, not any more.
func TestChattyRunDoesNotWakeTheKernel(t *testing.T) {
	agent := newAgent(t)
	k := startKernel(t, agent, settings(nil))
	k.spawn("s1", "ticker", "tick 1ms", nil)
	out := runs.StateDirFor(agent, "ticker").Path(runs.StdoutLog)
	lines := func() int {
		b, _ := os.ReadFile(out)
		return bytes.Count(b, []byte("\n"))
	}
	// printed waits for n more lines and says how many inotify events
	// the kernel had meanwhile.
	printed := func(n int) int64 {
		t.Helper()
		from, before := lines(), k.runWatch().Events
		eventually(t, 20*time.Second, "the ticker's lines", func() bool { return lines() >= from+n })
		return k.runWatch().Events - before
	}
	// 300 lines: an event each when writes are watched (a lagging reader
	// may merge a few); otherwise only the state files written meanwhile
	// (progress.json at most every 250 ms).
	const lines300, split = 300, 60
	printed(50) // past its start (run.json, events, the pid files)
	if got := printed(lines300); got > split {
		t.Fatalf("%d inotify events while the run printed 300 lines and no stream was open", got)
	}
	if w := k.runWatch(); w.Inotify != 1 || w.Polled != 0 {
		t.Fatalf("run_watch %+v, want the one run watched by inotify", w)
	}

	v := openEvents(t, agent, &verbs.Events{IntervalMS: 50, UsageMS: 250})
	first, _ := v.row("ticker")
	if got := printed(lines300); got < split {
		t.Fatalf("%d inotify events while the run printed 300 lines with a stream open", got)
	}
	eventually(t, 10*time.Second, "a newer last line in the stream", func() bool {
		r, _ := v.row("ticker")
		return strings.HasPrefix(r.LastLine, "tick ") && r.LastLine != first.LastLine
	})
	v.close()
	// The kernel sees the stream's end when its connection closes.
	eventually(t, 20*time.Second, "the output no longer followed after the stream closed", func() bool {
		return printed(lines300) <= split
	})
}
