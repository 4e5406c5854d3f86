package verbs

import (
	"bytes"
	"context"
	"io"
	"os"
	"time"

	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// Events asks the kernel for its runs stream (the kernel operation
// "events", which `pi-actors top` reads): a first frame with every live
// run and the newest ended ones, then a frame whenever runs change —
// status transitions, restarts, new output, CPU and RSS samples — at most
// once per interval. Nothing polls the run directories: the kernel learns
// of changes from inotify and from its run actors.
type Events struct {
	// Ended is how many ended runs the first frame carries, newest first
	// (default 200).
	Ended Int `json:"ended,omitempty"`
	// IntervalMS is the least time between two frames (default 250, at
	// least 50).
	IntervalMS Int `json:"interval_ms,omitempty"`
	// UsageMS is how often CPU and RSS are sampled (default 2000, at least
	// 250).
	UsageMS Int `json:"usage_ms,omitempty"`
}

// Defaults of Events.
const (
	DefaultEventsEnded    = 200
	DefaultEventsInterval = 250 * time.Millisecond
	DefaultEventsUsage    = 2 * time.Second
)

// Settings returns the request's values with defaults and bounds applied.
func (e *Events) Settings() (ended int, interval, usage time.Duration) {
	ended, interval, usage = int(e.Ended), time.Duration(e.IntervalMS)*time.Millisecond, time.Duration(e.UsageMS)*time.Millisecond
	if ended <= 0 {
		ended = DefaultEventsEnded
	}
	if interval <= 0 {
		interval = DefaultEventsInterval
	}
	if usage <= 0 {
		usage = DefaultEventsUsage
	}
	return min(ended, 5000), max(interval, 50*time.Millisecond), max(usage, 250*time.Millisecond)
}

// EventsFrame is one message of the runs stream.
type EventsFrame struct {
	// Snapshot marks the first frame: Runs is every run the stream
	// follows; later frames carry only runs that changed.
	Snapshot bool     `json:"snapshot,omitempty"`
	Runs     []RunRow `json:"runs,omitempty"`
	// Gone are the state dirs of runs no longer listed (pruned).
	Gone []string `json:"gone,omitempty"`
	// Kernel is the kernel's own figures, with every usage sample.
	Kernel *KernelFigures `json:"kernel,omitempty"`
	TS     time.Time      `json:"ts"`
}

// KernelFigures are the kernel's own costs as the stream reports them.
type KernelFigures struct {
	Pid        int     `json:"pid"`
	LiveRuns   int     `json:"live_runs"`
	CPUPercent float64 `json:"cpu_percent"`
	RSSBytes   uint64  `json:"rss_bytes"`
	Streams    int     `json:"streams"`
}

// StreamEvents reads the kernel's runs stream (starting the kernel if
// needed) until ctx ends or the kernel goes away, calling emit for each
// frame.
func StreamEvents(ctx context.Context, env *Env, req *Events, emit func(*EventsFrame) error) error {
	return env.stream(ctx, "events", "", req, func(resp *wire.Response) (bool, error) {
		var f EventsFrame
		if err := resp.Decode(&f); err != nil {
			return true, err
		}
		return false, emit(&f)
	})
}

// lastLineWindow is how much of a log's end LastLine reads.
const lastLineWindow = 4 << 10

// LastLine returns the last non-empty line of whichever of the run's logs
// was written last, reading at most 4 KiB of it: cheap enough to call on
// every output change of thousands of runs.
func LastLine(d runs.Dir) (stream, line string) {
	newest := time.Time{}
	for _, l := range []struct{ stream, name string }{{"stdout", runs.StdoutLog}, {"stderr", runs.StderrLog}} {
		f, err := os.Open(d.Path(l.name))
		if err != nil {
			continue
		}
		st, err := f.Stat()
		if err != nil || st.Size() == 0 || !st.ModTime().After(newest) {
			f.Close()
			continue
		}
		off := max(0, st.Size()-lastLineWindow)
		buf := make([]byte, st.Size()-off)
		k, err := f.ReadAt(buf, off)
		f.Close()
		if err != nil && err != io.EOF {
			continue
		}
		text := bytes.TrimRight(buf[:k], " \t\r\n")
		if i := bytes.LastIndexByte(text, '\n'); i >= 0 {
			text = text[i+1:]
		} else if off > 0 {
			continue // a line longer than the window: keep the other log's
		}
		if s := string(bytes.TrimSpace(text)); s != "" {
			newest, stream, line = st.ModTime(), l.stream, s
		}
	}
	return stream, line
}

// QueuedFollowup is one record of a session's follow-up queue as the
// kernel operation "followups_peek" shows it (top): the follow-up and
// whether it is still queued or already delivered. Peeking drains
// nothing.
type QueuedFollowup struct {
	Status   string   `json:"status"`
	Followup Followup `json:"followup"`
}

// PeekFollowups lists the newest n records of the session's follow-up
// queue, oldest first, without delivering any.
func PeekFollowups(env *Env, n int) ([]QueuedFollowup, error) {
	var out struct {
		Followups []QueuedFollowup `json:"followups"`
	}
	if err := env.Call("followups_peek", map[string]int{"lines": n}, &out); err != nil {
		return nil, err
	}
	return out.Followups, nil
}
