package actors

import (
	"fmt"
	"syscall"
	"time"

	"github.com/pi-actors/pi-actors/internal/fsutil"
	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/sessions"
	"github.com/pi-actors/pi-actors/verbs"
	"github.com/pi-actors/pi-actors/verbs/wire"
	"github.com/pi-actors/pi-actors/workflows"
)

// Suspending a session (seed 001): the kernel holds the session's
// messages (hold.go) and follow-ups from the moment it decides, writes the
// session record (the durable fact every supervisor of the session acts
// on: package runs), rings each live run's supervisor and waits, bounded,
// until each confirms in its progress.json, then writes the snapshot.
// Resuming writes the record resuming, rings and waits again, hands on
// the held messages in order, marks the record active and lets the
// follow-ups go. Both are idempotent; one runs at a time.

func init() {
	extraOps["session"] = (*Kernel).sessionOp
}

// confirmWait bounds the wait for the supervisors of a session's runs to
// confirm a suspend or a resume (one that has not still applies it within
// a second: it looks at the record once a second).
const confirmWait = 5 * time.Second

// sessionOp answers `session suspend|resume`: the caller's session, or
// session=, when the caller is that session or has none.
func (k *Kernel) sessionOp(req wire.Request) (any, error) {
	p, err := decodeParams[*verbs.Session](req)
	if err != nil {
		return nil, err
	}
	target := p.Session
	if target == "" {
		target = req.Session
	}
	if target == "" {
		return nil, &wire.Error{Code: "no_session", Exit: 64, Message: "session " + p.Action + " needs a session: yours ($PI_ACTORS_SESSION) or session=<id>", Hint: "pi-actors session list"}
	}
	if err := verbs.CheckOwner("session", target); err != nil {
		return nil, err
	}
	if req.Session != "" && req.Session != target {
		return nil, verbs.SessionDenied(p.Action, target, req.Session)
	}
	by := "operator"
	if req.Session != "" {
		by = "session:" + req.Session
	}
	switch p.Action {
	case "suspend":
		return k.suspendSession(target, by, causeOf(req))
	case "resume":
		return k.resumeSession(target, by, causeOf(req))
	}
	return nil, usageErr("the kernel suspends and resumes sessions; session %s reads the files (pi-actors session %s)", p.Action, p.Action)
}

// liveRunsOf loads the live runs a session owns.
func (k *Kernel) liveRunsOf(session string) []*runs.Info {
	k.mu.Lock()
	var dirs []runs.Dir
	for _, lr := range k.live {
		if lr.owner == session {
			dirs = append(dirs, lr.dir)
		}
	}
	k.mu.Unlock()
	var out []*runs.Info
	for _, d := range dirs {
		if in, err := runs.Load(d); err == nil && in.Live() && in.Meta.OwnerID == session {
			out = append(out, in)
		}
	}
	return out
}

// sessionKnown reports whether any run, live or ended, belongs to the
// session.
func (k *Kernel) sessionKnown(session string) bool {
	list, err := k.index.List("all")
	if err != nil {
		return false
	}
	for _, in := range list {
		if in.Meta.OwnerID == session {
			return true
		}
	}
	return false
}

// suspendSession suspends a session (see the top of this file).
func (k *Kernel) suspendSession(id, by string, cause *wire.Cause) (*verbs.SessionResult, error) {
	k.sessOps.Lock()
	defer k.sessOps.Unlock()
	return k.suspendLocked(id, by, cause)
}

// suspendLocked is suspendSession with k.sessOps held.
func (k *Kernel) suspendLocked(id, by string, cause *wire.Cause) (*verbs.SessionResult, error) {
	start := time.Now()
	rec, err := sessions.Load(k.cfg.AgentDir, id)
	if err != nil {
		return nil, err
	}
	live := k.liveRunsOf(id)
	if rec == nil && len(live) == 0 && !k.sessionKnown(id) {
		return nil, &wire.Error{Code: "not_found", Exit: 66, Message: fmt.Sprintf("session %s has no runs: nothing to suspend", id), Hint: "pi-actors session list"}
	}
	if rec == nil {
		rec = &sessions.Record{Session: id}
	}
	res := &verbs.SessionResult{Session: id, State: sessions.StateSuspended, Runs: len(live)}
	if rec.State == sessions.StateSuspended {
		res.Already = true
	} else {
		now := time.Now().UTC()
		k.holds.set(id, sessions.StateSuspended) // held from now on
		prev := *rec
		rec.State, rec.Since, rec.SuspendedAt, rec.By, rec.Runs = sessions.StateSuspended, now, now, by, len(live)
		rec.Suspends++
		if err := rec.Save(k.cfg.AgentDir); err != nil {
			k.holds.mu.Lock()
			k.holds.clearLocked(id)
			k.holds.mu.Unlock()
			*rec = prev
			return nil, err
		}
	}
	done, pending := k.ring(live, true)
	res.Confirmed, res.Pending, res.SuspendedAt = len(live)-len(pending), pending, rec.SuspendedAt
	if !res.Already || rec.Snapshot == "" {
		path := sessions.Path(k.cfg.AgentDir, id, sessions.SnapshotSuffix)
		if err := fsutil.WriteJSON(path, k.snapshot(rec, live, done), 0o600); err != nil {
			k.log.Warn("session snapshot", "session", id, "err", err)
		} else {
			rec.Snapshot = path
			if err := rec.Save(k.cfg.AgentDir); err != nil {
				k.log.Warn("session record", "session", id, "err", err)
			}
		}
	}
	res.Snapshot = rec.Snapshot
	res.TookMS = ms(time.Since(start))
	if !res.Already {
		k.trace.add(id, sessions.Item{ID: fmt.Sprintf("suspend:%s@%d", id, rec.SuspendedAt.UnixMilli()), Kind: sessions.KindSuspend,
			Cause: cause, Detail: fmt.Sprintf("%d live runs, by %s", len(live), by)})
		k.log.Info("session suspended", "session", id, "by", by, "runs", len(live), "pending", len(pending), "took_ms", res.TookMS)
	}
	return res, nil
}

// resumeSession resumes a session (see the top of this file).
func (k *Kernel) resumeSession(id, by string, cause *wire.Cause) (*verbs.SessionResult, error) {
	k.sessOps.Lock()
	defer k.sessOps.Unlock()
	start := time.Now()
	rec, err := sessions.Load(k.cfg.AgentDir, id)
	if err != nil {
		return nil, err
	}
	if !rec.Held() {
		if rec == nil && len(k.liveRunsOf(id)) == 0 && !k.sessionKnown(id) {
			// A mistyped name is not a session that is already active.
			return nil, &wire.Error{Code: "not_found", Exit: 66, Message: fmt.Sprintf("session %s is not known here: no record, no runs", id), Hint: "pi-actors session list"}
		}
		return &verbs.SessionResult{Session: id, State: sessions.StateActive, Already: true, TookMS: ms(time.Since(start))}, nil
	}
	k.holds.set(id, sessions.StateResuming)
	// Who resumes is on the record before the runs are rung: each run's
	// resume event names them.
	rec.State, rec.Since, rec.By = sessions.StateResuming, time.Now().UTC(), by
	if err := rec.Save(k.cfg.AgentDir); err != nil {
		return nil, err
	}
	live := k.liveRunsOf(id)
	_, pending := k.ring(live, false)
	released := k.release(id) // the hold ends here
	now := time.Now().UTC()
	paused := now.Sub(rec.SuspendedAt)
	rec.State, rec.Since, rec.ResumedAt, rec.By = sessions.StateActive, now, now, by
	rec.PausedMS += paused.Milliseconds()
	if err := rec.Save(k.cfg.AgentDir); err != nil {
		k.log.Warn("session record", "session", id, "err", err)
	}
	k.system.Root.Send(k.sess, &notifySession{session: id}) // the held follow-ups go
	k.trace.add(id, sessions.Item{ID: fmt.Sprintf("resume:%s@%d", id, now.UnixMilli()), Kind: sessions.KindResume,
		Cause: cause, Detail: fmt.Sprintf("%d live runs, %d held messages released, suspended %s, by %s", len(live), released, paused.Round(time.Millisecond), by)})
	k.log.Info("session resumed", "session", id, "by", by, "runs", len(live), "released", released, "paused_ms", paused.Milliseconds())
	return &verbs.SessionResult{Session: id, State: sessions.StateActive, Runs: len(live), Confirmed: len(live) - len(pending), Pending: pending,
		Released: released, SuspendedAt: rec.SuspendedAt, PausedMS: paused.Milliseconds(), TookMS: ms(time.Since(start))}, nil
}

// ring tells the supervisors of runs to look at their session record
// (SIGUSR1, the doorbell) and waits, bounded by confirmWait, until each
// run's progress.json says suspended (or not), or the run ended. It
// returns the runs that confirmed and the ids of those that did not.
func (k *Kernel) ring(list []*runs.Info, suspended bool) (map[string]bool, []string) {
	for _, in := range list {
		if runs.Alive(in.Meta.Pid, in.Meta.PidStart) {
			syscall.Kill(in.Meta.Pid, syscall.SIGUSR1)
		}
	}
	done := map[string]bool{}
	waiting := list
	deadline := time.Now().Add(confirmWait)
	for step := time.Millisecond; len(waiting) > 0; step = min(2*step, 20*time.Millisecond) {
		next := waiting[:0:0]
		for _, in := range waiting {
			p := in.Dir.Progress()
			if (p != nil && !p.SuspendedAt.IsZero() == suspended) || in.Dir.Exists(runs.ResultFile) {
				done[in.Meta.Run] = true
				continue
			}
			next = append(next, in)
		}
		waiting = next
		if len(waiting) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(step)
	}
	var pending []string
	for _, in := range waiting {
		pending = append(pending, in.Meta.Run)
	}
	return done, pending
}

// snapshot describes a suspended session: its runs as they were, the
// messages queued for them, its workflows' node states.
func (k *Kernel) snapshot(rec *sessions.Record, live []*runs.Info, done map[string]bool) *sessions.Snapshot {
	s := &sessions.Snapshot{Session: rec.Session, SuspendedAt: rec.SuspendedAt, By: rec.By, Runs: []sessions.SnapshotRun{}, Pending: []sessions.PendingMsg{}}
	for _, in := range live {
		m := in.Meta
		r := sessions.SnapshotRun{Run: m.Run, Status: in.Status, StateDir: string(in.Dir), Pid: m.Pid, Parent: m.Parent, Suspended: done[m.Run]}
		if in.Progress != nil {
			r.Restarts = in.Progress.Restarts
		}
		if wn := m.WorkflowNode; wn != nil {
			r.Workflow, r.Node, r.Attempt = wn.Workflow, wn.Node, wn.Attempt
		}
		if !r.Suspended {
			r.Error = "its supervisor had not confirmed when the snapshot was written"
		}
		s.Runs = append(s.Runs, r)
		s.Pending = append(s.Pending, pendingOf(in, maxPendingPerRun)...)
		if m.Workflow != nil {
			if st, err := workflows.Load(string(in.Dir)); err == nil {
				f := sessions.SnapshotFlow{Run: m.Run, Status: st.Status, Nodes: map[string]string{}, File: in.Dir.Path(workflows.StateFile)}
				for _, n := range st.Nodes {
					f.Nodes[n.ID] = n.Status
				}
				s.Workflows = append(s.Workflows, f)
			}
		}
	}
	return s
}

// maxPendingPerRun bounds the pending messages a snapshot lists per run.
const maxPendingPerRun = 200

// pendingOf lists the messages queued for a run's consumer.
func pendingOf(in *runs.Info, max int) []sessions.PendingMsg {
	lines, err := mailbox.Read(in.Dir.Path(runs.InboxFile))
	if err != nil {
		return nil
	}
	var out []sessions.PendingMsg
	for _, l := range lines {
		if l.Err != nil {
			continue
		}
		r := mailbox.Record(l.Value)
		if r.Status() != mailbox.StatusQueued {
			continue
		}
		from, _ := r["from"].(string)
		at, _ := r["queued_at"].(string)
		out = append(out, sessions.PendingMsg{Run: in.Meta.Run, ID: r.ID(), Type: r.Type(), From: from, QueuedAt: at})
		if len(out) == max {
			break
		}
	}
	return out
}

// restoreSessions takes up the session records at start: a suspended
// session's messages and follow-ups are held again (its runs' supervisors
// are rung, in case one missed the record), a resuming one is resumed.
func (k *Kernel) restoreSessions() {
	recs, err := sessions.List(k.cfg.AgentDir)
	if err != nil {
		k.log.Warn("session records", "err", err)
		return
	}
	for _, r := range recs {
		switch r.State {
		case sessions.StateSuspended:
			k.holds.set(r.Session, r.State)
			for _, in := range k.liveRunsOf(r.Session) {
				syscall.Kill(in.Meta.Pid, syscall.SIGUSR1)
			}
			k.log.Info("session stays suspended", "session", r.Session)
		case sessions.StateResuming:
			k.holds.set(r.Session, r.State)
			go func() {
				if _, err := k.resumeSession(r.Session, r.By, nil); err != nil {
					k.log.Warn("finish resume", "session", r.Session, "err", err)
				}
				k.trace.flush()
			}()
		}
	}
}

// autoSuspend suspends, every so often, each session with live runs that
// had no CLI/MCP/pi activity (sessions.LastActivity, else its newest live
// run's start) for [sessions] auto_suspend_after.
func (k *Kernel) autoSuspend() {
	after := k.cfg.Settings.Sessions.AutoSuspend()
	if after <= 0 {
		return
	}
	t := time.NewTicker(min(max(after/4, 100*time.Millisecond), 30*time.Second))
	defer t.Stop()
	for {
		select {
		case <-k.stopped:
			return
		case <-t.C:
		}
		owners := map[string]bool{} // sessions with live runs
		k.mu.Lock()
		for _, lr := range k.live {
			if lr.owner != "" {
				owners[lr.owner] = true
			}
		}
		k.mu.Unlock()
		for owner := range owners {
			if err := k.suspendIdle(owner, after); err != nil {
				k.log.Warn("auto suspend", "session", owner, "err", err)
			}
			k.trace.flush()
		}
	}
}

// lastActive is when a session was last used: its CLI/MCP/pi activity,
// a resume (an operator's too: it starts the idle time again), or its
// newest live run's start.
func (k *Kernel) lastActive(owner string) time.Time {
	last := sessions.LastActivity(k.cfg.AgentDir, owner)
	if rec, err := sessions.Load(k.cfg.AgentDir, owner); err == nil && rec != nil && rec.ResumedAt.After(last) {
		last = rec.ResumedAt
	}
	for _, in := range k.liveRunsOf(owner) {
		if in.Meta.CreatedAt.After(last) {
			last = in.Meta.CreatedAt
		}
	}
	return last
}

// suspendIdle suspends a session idle for after, looked at again under
// the sessions' lock: a resume or a use between the first look and the
// lock (it suspended a session an operator had just resumed) keeps it
// active.
func (k *Kernel) suspendIdle(owner string, after time.Duration) error {
	k.sessOps.Lock()
	defer k.sessOps.Unlock()
	if k.held(owner) || time.Since(k.lastActive(owner)) < after {
		return nil
	}
	_, err := k.suspendLocked(owner, "auto_suspend_after", nil)
	return err
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
