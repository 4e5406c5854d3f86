package actors

import (
	"maps"
	"path/filepath"
	"slices"
	"time"

	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/sessions"
	"github.com/pi-actors/pi-actors/workflows"
)

// rebuild restores the kernel's view after a (re)start: every indexed run
// that is not terminal gets a run actor again — a live supervisor (pid and
// start time match) is re-attached; a dead one is marked exited and its
// leftovers are killed — and terminal runs whose follow-ups were never
// queued (they ended while no kernel ran) get them now, once: their
// outbox records past notified.json's count, then the transition.
func (k *Kernel) rebuild() {
	entries, err := k.index.Rebuild()
	if err != nil {
		k.log.Warn("rebuild index", "err", err)
		return
	}
	attachedN, lostN, outboxN := 0, 0, 0
	liveNodes := map[string]bool{} // workflow runs with a node run live
	var ended []*runs.Info         // workflow runs that recorded their end
	for _, e := range entries {
		dir := runs.Dir(e.StateDir)
		in, err := runs.Load(dir)
		if err != nil {
			continue
		}
		if in.Result == nil && in.Status != runs.StatusArchived {
			// A control.kill the last kernel accepted and died applying
			// (its tree frozen, not killed; or killed, not recorded): it
			// is finished now, and the run reads as ended below.
			if id := runs.QueuedKill(dir); id != "" {
				runs.KillTree(in, id)
				if err := runs.RecordKill(in, id); err != nil {
					k.log.Warn("finish kill", "run", in.Meta.Run, "err", err)
				} else if now, err := runs.Load(dir); err == nil {
					in = now
				}
			}
		}
		if in.Result == nil && in.Status != runs.StatusArchived {
			// Live: re-attach. Dead without a result: the run actor sees
			// the exit at once, kills the leftovers and records exited.
			fut := k.system.Root.RequestFuture(k.runs, &attachRun{dir: dir, meta: in.Meta}, 5*time.Second)
			fut.Result()
			attachedN++
			if n := in.Meta.WorkflowNode; n != nil && in.Live() {
				liveNodes[n.Workflow] = true
			}
			continue
		}
		if in.Meta.Workflow != nil {
			// A control.retry queued as it ended, whose end no kernel
			// handled: a new scheduler applies it (the run goes on).
			if k.resumeQueuedRetry(in) {
				attachedN++
				continue
			}
			// A workflow run that ended while no kernel ran: nothing of it
			// outlives it, and workflow.json says how it ended.
			if st, err := workflows.Load(string(dir)); err == nil && st != nil && !st.Ended() {
				k.endWorkflow(in)
			} else if in.Status != runs.StatusArchived {
				ended = append(ended, in)
			}
		}
		n := loadNotified(dir, in.Meta)
		if in.Meta.OwnerID == "" || time.Since(e.UpdatedAt) >= 7*24*time.Hour {
			continue
		}
		// As a run actor does when its run ends: the outbox records no
		// kernel read (sent while none ran, or after the last read of
		// one that died), then the terminal transition.
		changed := false
		if in.Status != runs.StatusArchived && outboxBehind(dir, n) {
			lines := n.OutboxLines
			changed = k.deliverOutbox(outboxFollower(dir), in.Meta, &n, true)
			outboxN += n.OutboxLines - lines
		}
		if n.Terminal == "" && in.Handled == nil {
			k.terminal(in, &n)
			if n.Terminal != "" {
				lostN++
				changed = true
			}
		}
		if changed {
			if err := dir.WriteJSON(runs.NotifiedFile, n); err != nil {
				k.log.Warn("write notified.json", "dir", dir, "err", err)
			}
		}
	}
	// A workflow whose scheduler recorded its end while no kernel ran sent
	// its node runs' stops to no kernel: those still live are killed now.
	for _, in := range ended {
		if liveNodes[in.Meta.Run] {
			k.endWorkflow(in)
		}
	}
	k.log.Info("rebuilt", "runs", len(entries), "reattached", attachedN, "late_followups", lostN, "late_outbox_lines", outboxN)
}

// cleanTemp removes stale temp entries (24 h) on start. Kept for good:
// the sessions' causal records, the capture spools (captures not yet in
// their store), the graph hints (a store's project roots: dropping them
// costs a store open), and the coordinator's logs — its dead letters and
// the ids of tool messages — each trimmed to its newest logKeep records.
func (k *Kernel) cleanTemp() {
	logs := map[string]int{DeadLettersFile: logKeepBytes, filepath.Base(k.toolLog()): toolLogTrimBytes / 2} // the most bytes kept
	keep := []string{filepath.Base(sessions.TraceDir(k.cfg.AgentDir)), spoolKind, hintsKind}
	if n := runs.CleanTemp(k.tmp, 24*time.Hour, append(keep, slices.Collect(maps.Keys(logs))...)...); n > 0 {
		k.log.Info("removed stale temp entries", "count", n)
	}
	for name, maxBytes := range logs {
		if n, err := keepNewest(filepath.Join(k.tmp, name), logKeep, maxBytes); err != nil {
			k.log.Warn("trim a log", "file", name, "err", err)
		} else if n > 0 {
			k.log.Info("trimmed a log to its newest records", "file", name, "dropped", n, "kept", logKeep)
		}
	}
	if n := k.pruneHints(); n > 0 {
		k.log.Info("removed the graph hints of stores that are gone", "count", n)
	}
	// State directories a killed kernel left half made (never a run's:
	// we hold the kernel lock, so no start is under way).
	if n := runs.CleanStaging(k.cfg.AgentDir, 0); n > 0 {
		k.log.Info("removed unfinished state dirs", "count", n)
	}
}

// retentionLoop prunes terminal runs older than the retention period,
// never a live run, once at start and then hourly; it also compacts the
// index.
func (k *Kernel) retentionLoop() {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		k.retain()
		select {
		case <-t.C:
		case <-k.stopped:
			return
		}
	}
}

func (k *Kernel) retain() {
	entries, err := k.index.Entries()
	if err != nil {
		return
	}
	maxAge := time.Duration(k.conf().Runs.RetentionDays) * 24 * time.Hour
	for _, e := range runs.Expired(k.cfg.AgentDir, entries, maxAge) {
		in, err := runs.Load(runs.Dir(e.StateDir))
		if err != nil {
			continue
		}
		if _, err := runs.Prune(in, false); err == nil {
			k.index.Record(runs.Entry{Run: e.Run, StateDir: e.StateDir, Removed: true})
			k.log.Info("pruned expired run", "run", e.Run, "age", time.Since(e.UpdatedAt).Round(time.Hour))
		}
	}
	k.index.Compact()
}

// logKeep is how many records the coordinator's own logs keep (its dead
// letters, the ids of tool messages): as many as a room's timeline;
// logKeepBytes is the most of its dead letters kept (the id log keeps
// toolLogTrimBytes/2).
const (
	logKeep      = 10_000
	logKeepBytes = 16 << 20
)

// keepNewest drops all but the newest keep records of a JSONL log, and
// the oldest of those past maxBytes (under its lock; nothing is written
// when it holds no more), returning how many it dropped.
func keepNewest(path string, keep, maxBytes int) (int, error) {
	dropped := 0
	err := mailbox.RewriteLazy(path, func(lines []mailbox.Line) ([]mailbox.Line, error) {
		out := newestRecords(lines, keep, maxBytes)
		dropped = len(lines) - len(out)
		return out, nil
	})
	return dropped, err
}

// newestRecords is lines without their oldest records past the newest
// keep, or past maxBytes of them; a malformed line is never dropped (it
// is not ours to judge; mailbox keeps them).
func newestRecords(lines []mailbox.Line, keep, maxBytes int) []mailbox.Line {
	n, size, cut := 0, 0, -1
	for i := len(lines) - 1; i >= 0; i-- {
		n++
		size += len(lines[i].Raw) + 1
		if n > keep || size > maxBytes {
			cut = i
			break
		}
	}
	if cut < 0 {
		return lines
	}
	out := make([]mailbox.Line, 0, len(lines)-cut)
	for i := range lines[:cut+1] {
		l := &lines[i]
		if l.Value == nil && l.Err == nil {
			l.Decode() // undecoded (RewriteLazy)
		}
		if l.Err != nil {
			out = append(out, *l)
		}
	}
	return append(out, lines[cut+1:]...)
}
