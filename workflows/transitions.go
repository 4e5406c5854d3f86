package workflows

import (
	"context"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// observe reads the child run of a starting or running node and records
// what changed.
func (e *Engine) observe(n *NodeState, now time.Time) {
	obs := e.Host.Observe(Child{Node: n.ID, Run: n.Run, StateDir: n.StateDir, Attempt: n.Attempts})
	if obs.State == ChildMissing {
		if n.Status == NodeRunning {
			// The run of this attempt is gone (its directory was removed or
			// reused): the attempt is lost.
			e.failAttempt(n, 1, "run:"+n.Run+" of this attempt is gone", "run_lost", now)
		}
		return
	}
	if obs.StateDir != "" && n.StateDir != obs.StateDir {
		n.StateDir, n.OutputFile, e.dirty = obs.StateDir, filepath.Join(obs.StateDir, "stdout.log"), true
	}
	if n.Status == NodeStarting {
		// Asked for by an earlier scheduler (or an earlier try of this
		// one): it is up.
		delete(e.again, n.ID)
		n.Status, n.StartedAt, e.dirty = NodeRunning, now, true
		e.logf("node %s running run:%s (attempt %d, found)", n.ID, n.Run, n.Attempts)
	}
	if !obs.StartedAt.IsZero() && !n.StartedAt.Equal(obs.StartedAt) {
		n.StartedAt, e.dirty = obs.StartedAt, true // when its run started: its timeout counts from there
	}
	if obs.State == ChildRunning && obs.Ready != n.Ready {
		n.Ready, n.ReadyAt, e.dirty = obs.Ready, obs.ReadyAt, true
		if obs.Ready {
			e.logf("node %s ready (run:%s)", n.ID, n.Run)
		}
	}
	if obs.State == ChildRunning && obs.ReadyTimedOut != n.ReadyTimedOut {
		n.ReadyTimedOut, e.dirty = obs.ReadyTimedOut, true
		if obs.ReadyTimedOut {
			e.logf("node %s not ready within its ready_timeout (run:%s)", n.ID, n.Run)
		}
	}
	if obs.State == ChildEnded {
		e.ended(n, obs, now)
	}
}

// ended records the end of a node's run.
func (e *Engine) ended(n *NodeState, obs Observation, now time.Time) {
	e.dirty = true
	end := obs.EndedAt
	if end.IsZero() {
		end = now
	}
	took := end.Sub(n.StartedAt).Round(time.Millisecond)
	stopping := n.Stopping
	n.Stopping, n.EndedAt = "", end
	delete(e.lastStop, n.ID)
	switch {
	case stopping == "services_done":
		code := obs.Code
		n.Status, n.ExitCode, n.Reason = NodeDone, &code, reasonServiceStopped
		e.logf("node %s done (service stopped after %s)", n.ID, took)
		e.noteEnd(n)
	case stopping == "fail_fast" || stopping == "kill":
		code := obs.Code
		n.Status, n.ExitCode, n.Reason = NodeKilled, &code, stopping
		e.logf("node %s killed (%s)", n.ID, stopping)
		e.noteEnd(n)
	case stopping == "timeout":
		ms := e.W.Node(n.ID).TimeoutMS
		e.failAttempt(n, 124, fmt.Sprintf("timed out after %d ms (metadata.timeout_ms)", ms), "timeout", end)
	case obs.Status == "done" && obs.Code == 0:
		code := 0
		n.Status, n.ExitCode = NodeDone, &code
		e.logf("node %s done exit=0 in %s", n.ID, took)
		e.noteEnd(n)
	default:
		msg := obs.Error
		if msg == "" {
			msg = fmt.Sprintf("run:%s %s", n.Run, obs.Status)
			if obs.Reason != "" {
				msg += " (" + obs.Reason + ")"
			}
		}
		reason := obs.Reason
		if reason == "" {
			reason = obs.Status
		}
		e.failAttempt(n, obs.Code, msg, reason, end)
	}
}

// failAttempt records a failed attempt: retried after its backoff while
// retries are left (not once fail_fast stopped the workflow), else the
// node failed.
func (e *Engine) failAttempt(n *NodeState, code int, msg, reason string, now time.Time) {
	e.dirty = true
	n.ExitCode, n.Error, n.Reason, n.EndedAt = &code, msg, reason, now
	r := e.W.Node(n.ID).Retry
	used := n.Attempts - n.RetryBase
	stopped := e.St.Policy.FailFast && e.unexcused()
	if used <= r.Max && !stopped {
		e.syncPause() // before its retry's clock starts
		d := time.Duration(float64(r.BackoffMS)*math.Pow(2, float64(used-1))) * time.Millisecond
		d = min(d, time.Duration(MaxBackoffMS)*time.Millisecond)
		n.Status, n.NextAt = NodeBackoff, now.Add(d)
		e.logf("node %s failed exit=%d (attempt %d of %d): %s; retry in %s", n.ID, code, used, r.Max+1, msg, d)
		e.noteEnd(n)
		return
	}
	n.Status = NodeFailed
	if !slices.Contains(e.St.Failed, n.ID) {
		e.St.Failed = append(e.St.Failed, n.ID)
	}
	e.logf("node %s failed exit=%d after %d attempt(s): %s", n.ID, code, used, msg)
	e.noteEnd(n)
	if e.Failed != nil {
		e.Failed(n)
	}
}

// stopAll stops every running node for reason and cancels every node
// that has not started (fail_fast, a kill).
func (e *Engine) stopAll(reason string, now time.Time) {
	for i := range e.St.Nodes {
		n := &e.St.Nodes[i]
		switch n.Status {
		case NodeRunning, NodeStarting:
			if n.Stopping == "" || n.Stopping == "services_done" || n.Stopping == "timeout" && reason == "kill" {
				n.Stopping, e.dirty = reason, true
			}
		case NodePending, NodeBackoff:
			n.Status, n.Reason, n.NextAt, e.dirty = NodeCancelled, reason, time.Time{}, true
			e.logf("node %s cancelled (%s)", n.ID, reason)
			e.noteEnd(n) // the trace says why it never ran
		}
	}
}

// killAll stops the whole workflow now: every running node's run is
// killed (not waited for) and recorded killed, the others cancelled.
func (e *Engine) killAll(ctx context.Context, reason string) {
	now := time.Now()
	e.stopAll("kill", now)
	var stops []string
	for i := range e.St.Nodes {
		n := &e.St.Nodes[i]
		switch {
		case n.Stopping == "kill":
			stops = append(stops, n.Run)
			n.Status, n.Reason, n.Stopping, n.EndedAt = NodeKilled, reason, "", now
			e.noteEnd(n)
		case n.Status == NodeCancelled && n.Reason == "kill":
			n.Reason = reason
		}
	}
	if len(stops) > 0 {
		if err := e.Host.Stop(ctx, stops, false); err != nil {
			e.logf("stop %v: %v", stops, err)
		}
	}
	e.St.Status, e.St.Reason, e.St.EndedAt, e.dirty = StatusKilled, reason, now.UTC(), true
	e.logf("workflow killed (%s)", reason)
}

// skipBlocked skips the pending nodes a failed dependency blocks, and
// their dependents in turn (dependencies before dependents).
func (e *Engine) skipBlocked(now time.Time) {
	for _, wn := range e.W.topo() {
		n := e.St.Node(wn.ID)
		if n.Status != NodePending {
			continue
		}
		for _, d := range wn.Deps {
			ds := e.St.Node(d.Node)
			why := ds.Status
			switch {
			case ds.Status == NodeFailed || ds.Status == NodeSkipped || ds.Status == NodeCancelled || ds.Status == NodeKilled:
			case d.Condition == CondReady && ds.Status == NodeRunning && ds.ReadyTimedOut && !ds.Ready:
				why = "not ready within its ready_timeout"
			default:
				continue
			}
			n.Status, n.Reason, n.EndedAt, e.dirty = NodeSkipped, fmt.Sprintf("dependency %s %s", d.Node, why), now, true
			e.logf("node %s skipped: dependency %s %s", n.ID, d.Node, why)
			e.noteEnd(n)
			break
		}
	}
}

// Why a service ended with the nodes that needed it: stopped once they
// had all ended, or cancelled before it ran (or while it waited to run
// again) — not a stop of the workflow: it may still end done.
const (
	reasonServiceStopped  = "stopped: every node that needed it ended"
	reasonServiceUnneeded = "no node needs it any more"
)

// stopServices stops the services once every other node has ended (and
// cancels the services that never started).
func (e *Engine) stopServices(now time.Time) {
	for _, n := range e.St.Nodes {
		if !n.Service && !NodeEnded(n.Status) {
			return
		}
	}
	for i := range e.St.Nodes {
		n := &e.St.Nodes[i]
		if !n.Service {
			continue
		}
		switch n.Status {
		case NodeRunning, NodeStarting:
			if n.Stopping == "" {
				n.Stopping, e.dirty = "services_done", true
				e.logf("node %s: every node that needed it ended; stopping run:%s", n.ID, n.Run)
			}
		case NodePending, NodeBackoff:
			n.Status, n.Reason, n.EndedAt, e.dirty = NodeCancelled, reasonServiceUnneeded, now, true
			e.noteEnd(n)
		}
	}
}

// finish ends the workflow once every node has ended: failed when a node
// failed, killed when one was stopped or cancelled, failed when a node
// was skipped all the same, else done.
func (e *Engine) finish(now time.Time) {
	if e.St.Ended() {
		return
	}
	stopped := false
	var skipped []string
	for _, n := range e.St.Nodes {
		if !NodeEnded(n.Status) {
			return
		}
		if n.Status == NodeKilled || n.Status == NodeCancelled && n.Reason != reasonServiceUnneeded {
			stopped = true
		}
		if n.Status == NodeSkipped {
			skipped = append(skipped, n.ID)
		}
	}
	e.dirty = true
	e.St.EndedAt = now.UTC()
	switch {
	case len(e.St.Failed) > 0:
		e.St.Status, e.St.Reason = StatusFailed, "failed: "+strings.Join(e.St.Failed, ", ")
	case stopped:
		e.St.Status, e.St.Reason = StatusKilled, "stopped before every node ran"
	case len(skipped) > 0:
		// No node failed, yet some never ran (a dependency was not
		// ready within its ready_timeout).
		e.St.Status, e.St.Reason = StatusFailed, "skipped: "+strings.Join(skipped, ", ")
	default:
		e.St.Status, e.St.Reason = StatusDone, ""
	}
	e.logf("workflow %s: %d nodes (%s)", e.St.Status, len(e.St.Nodes), e.St.CountText())
}

// retry resets a node that ended badly, the dependents it kept from
// running and the nodes fail_fast stopped because of it: they run again,
// with a fresh retry budget.
func (e *Engine) retry(id string) error {
	n := e.St.Node(id)
	if n == nil {
		return fmt.Errorf("%w: no node %s in workflow run:%s", ErrNotRetryable, id, e.St.Run)
	}
	if !Retryable(n.Status) {
		return fmt.Errorf("%w: node %s is %s; only failed, killed, cancelled or skipped nodes run again", ErrNotRetryable, id, n.Status)
	}
	if b := RetryBlockers(e.W, e.St, id); len(b) > 0 {
		return fmt.Errorf("%w: node %s depends on %s, which ended badly: it would be skipped again; retry %s (its skipped dependents run again with it)", ErrNotRetryable, id, strings.Join(b, ", "), RetryFirst(e.W, e.St, id))
	}
	deps := e.W.Dependents(e.W.Node(id))
	again := map[string]bool{}
	for i := range e.St.Nodes {
		m := &e.St.Nodes[i]
		switch {
		case m.ID == id,
			deps[m.ID] && (m.Status == NodeSkipped || m.Status == NodeCancelled),
			m.Reason == "fail_fast" && (m.Status == NodeKilled || m.Status == NodeCancelled):
			again[m.ID] = true
		}
	}
	// The services what runs again needs, stopped once no node needed
	// them, start again too.
	for _, m := range slices.Collect(maps.Keys(again)) {
		for a := range e.W.Ancestors(e.W.Node(m)) {
			if as := e.St.Node(a); as.Service && (as.Reason == reasonServiceStopped || as.Reason == reasonServiceUnneeded) {
				again[a] = true
			}
		}
	}
	for i := range e.St.Nodes {
		if m := &e.St.Nodes[i]; again[m.ID] {
			m.Status, m.RetryBase = NodePending, m.Attempts
			m.ExitCode, m.Error, m.Reason, m.Stopping = nil, "", "", ""
			m.EndedAt, m.NextAt = time.Time{}, time.Time{}
			e.St.Failed = slices.DeleteFunc(e.St.Failed, func(f string) bool { return f == m.ID })
		}
	}
	// The failures left stand excused: the nodes asked to run again are
	// not stopped for them (fail_fast stops for a failure from now on).
	e.St.Excused = slices.Clone(e.St.Failed)
	e.St.Status, e.St.Reason, e.St.EndedAt, e.dirty = StatusRunning, "", time.Time{}, true
	e.logf("node %s: control.retry: it runs again with its skipped dependents", id)
	return nil
}

// RetryBlockers lists the dependencies of node id that a control.retry
// of it would leave ended badly (failed, skipped, cancelled or killed —
// not by fail_fast, whose nodes that retry runs again): the node would
// only be skipped again, so they are the ones to retry.
func RetryBlockers(w *Workflow, st *State, id string) []string {
	wn := w.Node(id)
	if wn == nil {
		return nil
	}
	var out []string
	for _, d := range wn.Deps {
		ds := st.Node(d.Node)
		if ds == nil {
			continue
		}
		switch ds.Status {
		case NodeFailed, NodeSkipped, NodeCancelled, NodeKilled:
			if ds.Reason == "fail_fast" && ds.Status != NodeFailed && ds.Status != NodeSkipped {
				continue
			}
			out = append(out, d.Node)
		}
	}
	return out
}

// RetryFirst is the node to retry so that node id runs again: id itself
// when nothing blocks it, else the first blocker, followed up through
// skipped ones to the one that ended badly itself (skipped dependents run
// again with it).
func RetryFirst(w *Workflow, st *State, id string) string {
	for range len(st.Nodes) {
		b := RetryBlockers(w, st, id)
		if len(b) == 0 {
			return id
		}
		id = b[0]
		if n := st.Node(id); n == nil || n.Status != NodeSkipped {
			return id
		}
	}
	return id
}

// unexcused reports whether a node failed for good since the last
// control.retry (fail_fast stops the workflow for it).
func (e *Engine) unexcused() bool {
	for _, f := range e.St.Failed {
		if !slices.Contains(e.St.Excused, f) {
			return true
		}
	}
	return false
}
