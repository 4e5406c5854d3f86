package workflows

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"
)

// Engine schedules one workflow: it starts each node's child run once its
// dependencies allow, at most max_concurrency at once (services aside),
// observes them, applies timeouts, retries with backoff, fail_fast or
// skipping, stops services once every other node ended, and records every
// change in workflow.json before acting on it.
type Engine struct {
	once sync.Once
	W    *Workflow
	St   *State
	Host Host
	// Dir is the workflow run's state directory (workflow.json).
	Dir string
	// Log receives one line per transition (the workflow run's stdout).
	Log io.Writer
	// Failed is called once for each node that failed for good.
	Failed func(n *NodeState)
	// Ended, when set, is called for every attempt of a node that ends
	// (done, killed, failed — retried after a backoff or for good) and
	// for every node skipped or cancelled: the workflow run's events
	// record them (the trace says why a node never ran).
	Ended func(n *NodeState)
	// Tick is how often children are observed (default 20 ms).
	Tick time.Duration
	// Paused, when set, reports how long the workflow's run was suspended
	// so far (its progress.json paused_ms): read when a timeout or a
	// retry delay falls due, and before a node's clock starts (the pause
	// so far belongs to the clocks that ran through it), so time spent
	// suspended counts for neither.
	Paused func() int64
	// Supervisor names the supervisor whose paused_ms Paused reads (its
	// pid and start time): a new one, after its run was resumed, counts
	// from 0 again.
	Supervisor string
	// LogFiles, when set, lists a stdout log's files oldest first (its
	// rotated ones, then itself: runs.LogFiles), so an upstream output
	// reaches back across a rotation (it read the current file only).
	LogFiles func(path string) []string

	cmds     chan command
	again    map[string]time.Duration // the next delay of a start to ask for again
	heldFrom map[string]time.Time     // since when a node's run id is held by another run
	lastStop map[string]time.Time     // when a stop was last sent
	dirty    bool
}

type command struct {
	retry string
	kill  string // a reason
	reply chan error
}

// ErrNotRetryable means control.retry named a node that has not ended
// badly (or is unknown).
var ErrNotRetryable = errors.New("node cannot be retried")

// stopResend bounds how often a stop is sent again to a run that has not
// ended yet (the kernel was down, say).
const stopResend = time.Second

// init sets the engine up once, whichever of Run, Retry (from another
// goroutine), Kill or Apply comes first.
func (e *Engine) init() {
	e.once.Do(func() {
		e.cmds = make(chan command)
		e.again = map[string]time.Duration{}
		e.heldFrom = map[string]time.Time{}
		e.lastStop = map[string]time.Time{}
		if e.Tick <= 0 {
			e.Tick = 20 * time.Millisecond
		}
		if e.Log == nil {
			e.Log = io.Discard
		}
	})
}

// Run schedules until the workflow ends (its state says how) or ctx ends
// (every child is killed and the workflow recorded killed).
func (e *Engine) Run(ctx context.Context) error {
	e.init()
	if e.Supervisor != e.St.PausedBy {
		// paused_ms of another supervisor: this one counts from 0.
		e.St.PausedBy, e.St.PausedSeen, e.dirty = e.Supervisor, 0, true
	}
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		e.step(ctx)
		if err := e.save(); err != nil {
			return err
		}
		if e.St.Ended() {
			return nil
		}
		t.Reset(e.Tick)
		select {
		case <-ctx.Done():
			e.killAll(context.WithoutCancel(ctx), "control.cancel")
			return errors.Join(e.save(), ctx.Err())
		case c := <-e.cmds:
			// Saved before the answer: the sender marks the message
			// handled on it, and a scheduler that died before the next
			// tick's save would lose the retry.
			err := e.apply(c)
			if err == nil {
				err = e.save()
			}
			c.reply <- err
		case <-t.C:
		}
	}
}

// Retry re-runs a failed node and its skipped dependents (control.retry);
// while Run runs, its goroutine applies it.
func (e *Engine) Retry(ctx context.Context, node string) error {
	return e.send(ctx, command{retry: node})
}

// Kill stops every running node and ends the workflow killed.
func (e *Engine) Kill(ctx context.Context, reason string) error {
	return e.send(ctx, command{kill: reason})
}

func (e *Engine) send(ctx context.Context, c command) error {
	e.init()
	c.reply = make(chan error, 1)
	select {
	case e.cmds <- c:
	case <-ctx.Done():
		return ctx.Err()
	}
	return <-c.reply
}

// Apply applies a retry before Run starts (a control.retry that woke a
// workflow that had ended).
func (e *Engine) Apply(node string) error {
	e.init()
	err := e.apply(command{retry: node})
	if err == nil {
		err = e.save()
	}
	return err
}

func (e *Engine) apply(c command) error {
	if c.kill != "" {
		e.killAll(context.Background(), c.kill)
		return nil
	}
	return e.retry(c.retry)
}

func (e *Engine) save() error {
	if !e.dirty {
		return nil
	}
	if err := e.St.Save(e.Dir); err != nil {
		return err
	}
	e.dirty = false
	return nil
}

// noteEnd hands an ended attempt (or a skipped node) to Ended.
func (e *Engine) noteEnd(n *NodeState) {
	if e.Ended != nil {
		e.Ended(n)
	}
}

func (e *Engine) logf(format string, args ...any) {
	fmt.Fprintf(e.Log, format+"\n", args...)
}

// step is one round: observe, decide, start, stop, finish.
func (e *Engine) step(ctx context.Context) {
	now := time.Now()
	// Every tick: a node's took= leaves out the time it was suspended
	// whether or not a clock of it falls due.
	e.syncPause()
	stops := map[bool][]string{} // gently (a service the nodes that needed it are done with) or not
	for i := range e.St.Nodes {
		n := &e.St.Nodes[i]
		if n.Status == NodeStarting || n.Status == NodeRunning {
			e.observe(n, now)
		}
		if n.Status == NodeRunning && n.Stopping == "" {
			if to := e.W.Node(n.ID).TimeoutMS; to > 0 && e.elapsed(n, now) > time.Duration(to)*time.Millisecond {
				n.Stopping, e.dirty = "timeout", true
				e.logf("node %s timed out after %d ms: stopping run:%s", n.ID, to, n.Run)
			}
		}
		if n.Status == NodeBackoff && !now.Before(n.NextAt) {
			n.Status, n.NextAt, e.dirty = NodePending, time.Time{}, true
		}
	}
	if e.St.Policy.FailFast && e.unexcused() {
		e.stopAll("fail_fast", now)
	}
	e.skipBlocked(now)
	e.stopServices(now)
	for i := range e.St.Nodes {
		n := &e.St.Nodes[i]
		if n.Stopping == "" || (n.Status != NodeRunning && n.Status != NodeStarting) {
			continue
		}
		if now.Sub(e.lastStop[n.ID]) >= stopResend {
			e.lastStop[n.ID] = now
			gently := n.Stopping == "services_done"
			stops[gently] = append(stops[gently], n.Run)
		}
		if n.Status == NodeStarting {
			// Stopped before its run was up: it is not asked for again (the
			// stop goes out in case an earlier request is still starting it).
			n.Status, n.Reason, n.Stopping, n.EndedAt, e.dirty = NodeCancelled, n.Stopping, "", now, true
			if n.Reason == "services_done" {
				// A service not up yet that no node needs any more: cancelled
				// without making the workflow killed, as a pending one is.
				n.Reason = reasonServiceUnneeded
			}
			e.logf("node %s cancelled (%s)", n.ID, n.Reason)
			e.noteEnd(n)
		}
	}
	e.start(ctx, now)
	for _, gently := range []bool{false, true} {
		if runs := stops[gently]; len(runs) > 0 {
			if err := e.Host.Stop(ctx, runs, gently); err != nil {
				e.logf("stop %v: %v (sent again in %s)", runs, err, stopResend)
			}
		}
	}
	e.finish(now)
}

// start asks for the child runs of every node that may start now: nodes
// recorded starting whose run does not exist yet, then ready nodes by
// priority, layer and position, within max_concurrency (services do not
// count). Each is recorded starting, with its attempt, before it is asked
// for.
func (e *Engine) start(ctx context.Context, now time.Time) {
	busy := 0
	var batch []*NodeState
	for i := range e.St.Nodes {
		n := &e.St.Nodes[i]
		if (n.Status == NodeStarting || n.Status == NodeRunning) && !n.Service {
			busy++
		}
		if n.Status == NodeStarting && !now.Before(n.NextAt) {
			batch = append(batch, n) // asked for before, not up yet
		}
	}
	ready := e.ready()
	if slices.ContainsFunc(ready, func(n *NodeState) bool { return n.Service || busy < e.St.Policy.MaxConcurrency }) {
		e.syncPause() // before their clocks start
	}
	for _, n := range ready {
		if !n.Service {
			if busy >= e.St.Policy.MaxConcurrency {
				continue
			}
			busy++
		}
		n.Status, n.Attempts, n.NextAt, n.Ready, n.ReadyAt, n.ReadyTimedOut, n.PausedMS = NodeStarting, n.Attempts+1, time.Time{}, false, time.Time{}, false, 0
		n.ExitCode, n.Error, n.Reason, n.Stopping, n.EndedAt = nil, "", "", "", time.Time{}
		batch = append(batch, n)
		e.dirty = true
	}
	if len(batch) == 0 {
		return
	}
	// Durable first: a scheduler that dies from here on finds these nodes
	// starting, with the attempt their runs carry.
	if err := e.save(); err != nil {
		e.logf("%v: starting nothing until it can be written", err)
		return
	}
	reqs := make([]StartRequest, len(batch))
	for i, n := range batch {
		node := e.W.Node(n.ID)
		reqs[i] = StartRequest{Node: n.ID, Attempt: n.Attempts, Run: n.Run, Params: e.W.SpawnParams(node, e.St.Run, e.upstream), Template: node.Spawn["template"]}
	}
	res := e.Host.Start(ctx, reqs)
	for i, n := range batch {
		r := StartResult{Err: errors.New("no answer"), Again: true}
		if i < len(res) {
			r = res[i]
		}
		e.started(n, r, time.Now())
	}
}

// started records the answer to a start.
func (e *Engine) started(n *NodeState, r StartResult, now time.Time) {
	e.dirty = true
	if !r.Held {
		delete(e.heldFrom, n.ID)
	} else if _, ok := e.heldFrom[n.ID]; !ok {
		e.heldFrom[n.ID] = now
	}
	switch {
	case r.Err == nil:
		delete(e.again, n.ID)
		n.Status, n.StartedAt, n.StateDir = NodeRunning, now, r.StateDir
		n.OutputFile = filepath.Join(r.StateDir, "stdout.log")
		e.logf("node %s running run:%s (attempt %d)", n.ID, n.Run, n.Attempts)
	case r.Held && now.Sub(e.heldFrom[n.ID]) >= HeldWait:
		delete(e.again, n.ID)
		delete(e.heldFrom, n.ID)
		e.failAttempt(n, 1, fmt.Sprintf("its run id is held by another live run for %s: %v", HeldWait, r.Err), "start_failed", now)
	case r.Again:
		d := max(e.again[n.ID], 100*time.Millisecond)
		e.again[n.ID] = min(2*d, 5*time.Second)
		n.NextAt = now.Add(d)
		e.logf("node %s: start of run:%s deferred %s: %v", n.ID, n.Run, d, r.Err)
	default:
		delete(e.again, n.ID)
		e.failAttempt(n, 1, r.Err.Error(), "start_failed", now)
	}
}

// ready lists the pending nodes whose dependencies allow a start, most
// urgent first.
func (e *Engine) ready() []*NodeState {
	var out []*NodeState
	for i := range e.St.Nodes {
		n := &e.St.Nodes[i]
		if n.Status == NodePending && e.depsMet(e.W.Node(n.ID)) {
			out = append(out, n)
		}
	}
	rank := func(n *NodeState) (int, int, int) {
		wn := e.W.Node(n.ID)
		p := 0
		for i, name := range priorities {
			if name == wn.Priority {
				p = i
			}
		}
		return p, wn.Layer, wn.Index
	}
	sort.SliceStable(out, func(i, j int) bool {
		pi, li, xi := rank(out[i])
		pj, lj, xj := rank(out[j])
		if pi != pj {
			return pi < pj
		}
		if li != lj {
			return li < lj
		}
		return xi < xj
	})
	return out
}

// depsMet reports whether every dependency of n meets its condition.
func (e *Engine) depsMet(n *Node) bool {
	for _, d := range n.Deps {
		s := e.St.Node(d.Node).Status
		switch d.Condition {
		case CondStarted:
			if s != NodeRunning && s != NodeDone {
				return false
			}
		case CondReady:
			if s != NodeDone && (s != NodeRunning || !e.St.Node(d.Node).Ready) {
				return false
			}
		default:
			if s != NodeDone {
				return false
			}
		}
	}
	return true
}

// upstream is what a node may use of a dependency.
func (e *Engine) upstream(id string) Upstream {
	n := e.St.Node(id)
	if n == nil || n.OutputFile == "" {
		return Upstream{}
	}
	files := []string{n.OutputFile}
	if e.LogFiles != nil {
		files = e.LogFiles(n.OutputFile)
	}
	return Upstream{Output: ReadOutput(files...), OutputFile: n.OutputFile}
}

// elapsed is how long a node's attempt has run, the time it spent
// suspended aside.
func (e *Engine) elapsed(n *NodeState, now time.Time) time.Duration {
	return now.Sub(n.StartedAt) - time.Duration(n.PausedMS)*time.Millisecond
}

// syncPause learns how long the workflow was suspended since it last
// looked, and gives that time back to every running attempt's timeout and
// every waiting retry or start. A paused_ms below the last one seen comes
// from a new supervisor (it counts from 0).
func (e *Engine) syncPause() {
	if e.Paused == nil {
		return
	}
	total := e.Paused()
	delta := total - e.St.PausedSeen
	if total < e.St.PausedSeen {
		delta = total
	}
	if total != e.St.PausedSeen {
		e.St.PausedSeen, e.dirty = total, true
	}
	if delta <= 0 {
		return
	}
	d := time.Duration(delta) * time.Millisecond
	for i := range e.St.Nodes {
		n := &e.St.Nodes[i]
		switch n.Status {
		case NodeRunning:
			n.PausedMS += delta
		case NodeStarting:
			n.PausedMS += delta
			if !n.NextAt.IsZero() {
				n.NextAt = n.NextAt.Add(d)
			}
		case NodeBackoff:
			n.NextAt = n.NextAt.Add(d)
		}
	}
	e.St.PausedMS += delta
	e.logf("workflow was suspended for %s: timeouts and retry delays go on with the time they had left", d.Round(time.Millisecond))
}
