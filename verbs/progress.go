package verbs

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/pi-actors/pi-actors/runs"
)

// ProgressBar draws a progress bar for a verb that can take seconds (a
// batch spawn of many runs, an ingest, an index rebuild) on
// Env.Progress, which front doors set only to a terminal's stderr: never
// on stdout, never in a pipe. It appears only once the work has taken
// progressDelay, redraws at most every progressEvery, and Done erases it.
// Every method is a no-op on a nil bar, so a verb calls them without
// checking whether a bar is shown.
type ProgressBar struct {
	mu    sync.Mutex
	w     io.Writer
	label string
	total int
	done  int
	width int
	start time.Time
	drawn time.Time
	shown bool
}

// Progress timing.
const (
	progressDelay = 500 * time.Millisecond
	progressEvery = 100 * time.Millisecond
)

// StartProgress returns a bar for total steps of work, or nil when the
// caller shows none (no terminal, or nothing to count).
func (env *Env) StartProgress(label string, total int) *ProgressBar {
	if env == nil || env.Progress == nil || total <= 0 {
		return nil
	}
	width := env.Width
	if width <= 0 {
		width = 80
	}
	return &ProgressBar{w: env.Progress, label: label, total: total, width: width, start: time.Now()}
}

// Add records n more steps done.
func (p *ProgressBar) Add(n int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done = min(p.total, p.done+n)
	now := time.Now()
	if now.Sub(p.start) < progressDelay || (now.Sub(p.drawn) < progressEvery && p.done < p.total) {
		return
	}
	p.drawn, p.shown = now, true
	io.WriteString(p.w, "\r\x1b[K"+p.line(now))
}

// Done erases the bar.
func (p *ProgressBar) Done() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		io.WriteString(p.w, "\r\x1b[K")
		p.shown = false
	}
}

// line renders `label [=====>    ] 37/200 3s`, fitted to the width.
func (p *ProgressBar) line(now time.Time) string {
	tail := fmt.Sprintf(" %d/%d %s", p.done, p.total, ShortDuration(now.Sub(p.start)))
	bar := min(30, p.width-len([]rune(p.label))-len(tail)-4)
	if bar < 5 {
		return cutRunes(p.label+tail, p.width-1)
	}
	fill := bar * p.done / p.total
	arrow := ""
	if fill < bar {
		arrow = ">"
	}
	return p.label + " [" + strings.Repeat("=", fill) + arrow + strings.Repeat(" ", bar-fill-len(arrow)) + "]" + tail
}

// batchChunk is how many items of a batch spawn go to the kernel in one
// request when a progress bar is shown.
const batchChunk = 32

// RunBatchShowing is RunBatch with a progress bar: when env shows
// progress, a spawn batch larger than one chunk goes to the kernel a
// chunk at a time (each item's outcome is the same either way; a message
// batch always goes whole, so a batch kill stops every run at once).
func RunBatchShowing(env *Env, spec *Spec, reqs []Request) ([]*Outcome, []error, error) {
	bar := env.StartProgress(spec.Name+" "+fmt.Sprint(len(reqs)), len(reqs))
	if bar == nil || spec.Name != "spawn" || len(reqs) <= batchChunk {
		return RunBatch(env, spec, reqs)
	}
	defer bar.Done()
	outs := make([]*Outcome, 0, len(reqs))
	errs := make([]error, 0, len(reqs))
	for i := 0; i < len(reqs); i += batchChunk {
		o, e, err := RunBatch(env, spec, reqs[i:min(i+batchChunk, len(reqs))])
		if err != nil && i == 0 {
			return nil, nil, err
		}
		if err != nil {
			// The kernel went away mid-batch: the rest fail with it.
			for range reqs[i:] {
				outs, errs = append(outs, nil), append(errs, err)
			}
			return outs, errs, nil
		}
		outs, errs = append(outs, o...), append(errs, e...)
		bar.Add(len(o))
	}
	return outs, errs, nil
}

// runIndex is the agent root's runs index; a rebuild (the first listing
// after the index was lost, over thousands of run dirs) shows a progress
// bar on a terminal.
func (env *Env) runIndex() *runs.Index {
	x := runs.NewIndex(env.AgentDir)
	if env.Progress == nil {
		return x
	}
	var bar *ProgressBar
	x.Progress = func(done, total int) {
		if done == 0 {
			bar = env.StartProgress("index rebuild", total)
			return
		}
		bar.Add(1)
		if done == total {
			bar.Done()
		}
	}
	return x
}
