package actors

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/runs"
)

// runsActor is the parent of every run actor: it spawns one per live run
// and supervises them (a panic in one restarts only that one).
type runsActor struct{ k *Kernel }

// attachRun asks the runs actor to supervise a live run.
type attachRun struct {
	dir  runs.Dir
	meta *runs.Meta
	proc *os.Process // set when this kernel started the supervisor
	slot *liveSlot   // the spawn's live-run slot, handed over to live
}

type attached struct{ pid *actor.PID }

func (a *runsActor) Receive(ctx actor.Context) {
	if m, ok := ctx.Message().(*attachRun); ok {
		props := actor.PropsFromProducer(func() actor.Actor { return &runActor{k: a.k, dir: m.dir, meta: m.meta, proc: m.proc} })
		pid := ctx.SpawnPrefix(props, "run:"+m.meta.Run+"#")
		// Counted live before the answer goes back (the actor's Started
		// runs asynchronously).
		a.k.addLive(&liveRun{id: m.meta.Run, owner: m.meta.OwnerID, dir: m.dir, pid: pid}, m.slot)
		ctx.Respond(&attached{pid: pid})
	}
}

// runActor (address run:<id>) follows one live run: it learns at once when
// the supervisor exits (pidfd), queues follow-ups for the owning session
// (terminal transitions and outbox records), keeps the index current and,
// when a supervisor died without a result, cleans up what it left.
type runActor struct {
	k        *Kernel
	dir      runs.Dir
	meta     *runs.Meta
	proc     *os.Process
	notified notified
	saved    notified // what notified.json holds (no rewrite when unchanged)
	finished bool
	seen     int64             // outbox size at the last scan
	outbox   *mailbox.Follower // where the last scan of the outbox ended
}

type (
	supervisorExited struct{}
	outboxChanged    struct{}
)

// notified is notified.json: what has been queued as follow-ups already,
// so a restarted kernel delivers each exactly once.
type notified struct {
	Instance    string `json:"instance"` // the run instance it is about (createdAt)
	OutboxLines int    `json:"outbox_lines"`
	Terminal    string `json:"terminal,omitempty"`
}

func instanceOf(m *runs.Meta) string { return m.CreatedAt.UTC().Format(time.RFC3339Nano) }

// loadNotified reads notified.json for this instance; a record about an
// earlier run in the same state dir counts as nothing notified.
func loadNotified(dir runs.Dir, m *runs.Meta) notified {
	var n notified
	if dir.ReadJSON(runs.NotifiedFile, &n) != nil || n.Instance != instanceOf(m) {
		return notified{Instance: instanceOf(m)}
	}
	return n
}

func (a *runActor) Receive(ctx actor.Context) {
	switch ctx.Message().(type) {
	case *actor.Started:
		a.notified = loadNotified(a.dir, a.meta)
		a.saved = a.notified
		a.k.watchDir(a.dir, ctx.Self())
		self, root := ctx.Self(), a.k.system.Root
		a.k.exits.Watch(a.meta.Pid, a.meta.PidStart, func() { root.Send(self, &supervisorExited{}) })
		a.scanOutbox()
	case *outboxChanged:
		a.scanOutbox()
	case *supervisorExited:
		if !a.finished {
			a.finished = true
			a.finish()
			ctx.Stop(ctx.Self())
		}
	case *actor.Stopped:
		a.k.unwatchDir(a.dir, ctx.Self())
		a.k.removeLive(a.dir, ctx.Self())
	}
}

// finish handles the end of the supervisor process.
func (a *runActor) finish() {
	if a.proc != nil {
		a.proc.Wait() // our child: reap it
	}
	// Killed by the kernel: its result is being written; wait for it
	// rather than treat the run as lost.
	a.k.awaitKill(a.dir, 10*time.Second)
	in, err := runs.Load(a.dir)
	if err != nil {
		a.k.log.Warn("run vanished", "dir", a.dir, "err", err)
		return
	}
	if !sameInstance(in.Meta, a.meta) {
		// The state dir already holds a newer run (the id was reused right
		// after this one ended): this actor's run is over; the new one has
		// its own actor.
		a.k.log.Info("run dir reused", "run", a.meta.Run, "dir", a.dir)
		return
	}
	if in.Result == nil && in.Status != runs.StatusArchived {
		if a.k.resumeLost(in) {
			return // a workflow goes on under a new supervisor
		}
		a.k.markLost(in, "supervisor_lost")
		if in, err = runs.Load(a.dir); err != nil {
			return
		}
	}
	if in.Meta.Workflow != nil {
		// Nothing of a workflow that ended outlives it, and its
		// workflow.json says how it ended (before its follow-up) — unless
		// a control.retry sent as it ended makes it go on.
		if a.k.endOrRetry(in) {
			return
		}
	}
	a.scanOutbox()
	if err := a.k.index.Record(runs.EntryOf(in)); err != nil {
		a.k.log.Warn("index", "err", err)
	}
	a.k.terminal(in, &a.notified)
	a.saveNotified()
}

// sameInstance reports whether two run.json records describe the same
// run instance (a state dir can be reused by a later run).
func sameInstance(a, b *runs.Meta) bool {
	return a.Pid == b.Pid && a.PidStart == b.PidStart && a.CreatedAt.Equal(b.CreatedAt)
}

func (a *runActor) saveNotified() {
	if a.notified == a.saved {
		return
	}
	if cur, err := a.dir.Meta(); err != nil || !sameInstance(cur, a.meta) {
		return // the dir belongs to a newer run now
	}
	if err := a.dir.WriteJSON(runs.NotifiedFile, a.notified); err != nil {
		a.k.log.Warn("write notified.json", "dir", a.dir, "err", err)
		return
	}
	a.saved = a.notified
}

// scanOutbox queues new notify/followup outbox records for the owner.
// While the run is live (finished not set) a last line still being
// written waits for its end. Each scan reads only what the outbox gained.
func (a *runActor) scanOutbox() {
	st, err := os.Stat(a.dir.Path(runs.OutboxFile))
	if err != nil || st.Size() == a.seen {
		return
	}
	a.seen = st.Size()
	if a.outbox == nil {
		a.outbox = outboxFollower(a.dir)
	}
	if a.k.deliverOutbox(a.outbox, a.meta, &a.notified, a.finished) {
		a.saveNotified()
	}
}

// outboxFollower reads a run's outbox from its start, lines undecoded
// (ParseOutbox decodes each once).
func outboxFollower(dir runs.Dir) *mailbox.Follower {
	f := mailbox.NewFollower(dir.Path(runs.OutboxFile))
	f.Lazy = true
	return f
}

// deliverOutbox queues for a run's owner the outbox records with delivery
// notify or followup that f gives (what the outbox gained since f's last
// call) from line n.OutboxLines on, and counts the lines read in n (the
// caller saves it to notified.json); it reports whether n changed.
// ended: the run is over, so a torn last line is final (counted, never
// delivered); otherwise it is still being written and waits. Each
// follow-up's id is its run instance and line, so a repeat (a kernel that
// died before notified.json was written, an outbox replaced and read
// again) adds nothing.
func (k *Kernel) deliverOutbox(f *mailbox.Follower, m *runs.Meta, n *notified, ended bool) bool {
	lines, _, err := f.Next()
	if err != nil {
		k.log.Warn("read outbox", "file", f.Path, "err", err)
		return false
	}
	total := f.Lines()
	if ended {
		if st, err := os.Stat(f.Path); err == nil && st.Size() > f.Offset() {
			total++ // the torn last line
		}
	}
	if total <= n.OutboxLines {
		return false
	}
	for _, l := range lines {
		i := l.N - 1
		if i < n.OutboxLines || m.OwnerID == "" {
			continue
		}
		rec, err := mailbox.ParseOutbox(l.Raw, m.Run, i)
		if err != nil {
			continue
		}
		if rec.Delivery != "notify" && rec.Delivery != "followup" {
			continue
		}
		if rec.Event == "command.done" && (m.Workflow != nil || m.WorkflowNode != nil) {
			continue // a workflow reports its nodes itself
		}
		k.enqueue(queueKey(m), outboxFollowup(m, rec, i))
	}
	n.OutboxLines = total
	return true
}

// outboxBehind reports whether a run's outbox may hold lines notified.json
// does not count (a cheap count of its newlines, no decoding).
func outboxBehind(dir runs.Dir, n notified) bool {
	c, err := mailbox.CountLines(dir.Path(runs.OutboxFile))
	return err == nil && c > n.OutboxLines
}

// markLost records a run whose supervisor is gone without a result: every
// process left in its session and its recorded leaf groups is killed, and
// result.json says exited with the reason.
func (k *Kernel) markLost(in *runs.Info, reason string) {
	m := in.Meta
	killed := k.killLeftovers(in)
	status, why := runs.StatusExited, reason
	if in.Status == runs.StatusKilled || in.Status == runs.StatusCancelled {
		status, why = in.Status, in.Reason
	}
	res := &runs.Result{Status: status, Code: 1, Reason: why, Error: fmt.Sprintf("the run's supervisor ended without a result (%s); %d leftover process(es) killed", reason, killed), CompletedAt: time.Now().UTC()}
	if why == "control.kill" {
		// Killed on purpose (by the kernel, which writes this same result).
		res = runs.KilledResult(in.Dir)
	}
	// The event first, as the supervisor does: once result.json exists the
	// run reads as over, and its events must already say how it ended.
	runs.AppendEvent(in.Dir, map[string]any{"event": "run.exited", "reason": reason, "killed_leftovers": killed})
	if err := in.Dir.WriteJSON(runs.ResultFile, res.Identify(in.Meta)); err != nil {
		k.log.Warn("write result", "dir", in.Dir, "err", err)
	}
	k.log.Info("run lost its supervisor", "run", m.Run, "reason", reason, "killed", killed)
}

// killLeftovers kills what a run whose supervisor is gone left: every
// process in its session (unless the supervisor's pid was reused: then
// the session is another process's), its recorded leaf groups, and every process
// whose environment names its state directory (one that moved to a
// session of its own: the subreaper that kept it a descendant is gone).
func (k *Kernel) killLeftovers(in *runs.Info) int {
	killed := 0
	if m := in.Meta; m.Pid > 0 && runs.OwnSession(m.Pid, m.PidStart) {
		// A pid another process reused names that process's session.
		members := runs.SessionMembers(m.Pid)
		runs.KillAll(members, syscall.SIGKILL)
		killed += len(members)
	}
	// Leaf groups a leaf moved out of the supervisor's session (from
	// progress.json and, for the newest, events.jsonl).
	for _, l := range runs.LiveLeaves(in) {
		syscall.Kill(-l.Pid, syscall.SIGKILL)
		killed++
	}
	if sd := in.Meta.StateDir; sd != "" {
		strays := runs.EnvMembers(runs.Dir(sd))
		runs.KillAll(strays, syscall.SIGKILL)
		killed += len(strays)
	}
	return killed
}

// terminal queues the follow-up of a terminal transition, exactly once:
// only for owned runs, only done/failed/killed/exited, never for a run
// stopped on purpose (terminal-handled.json).
func (k *Kernel) terminal(in *runs.Info, n *notified) {
	if runs.Terminal(in.Status) && in.Status != runs.StatusArchived {
		k.captureRun(in)
	}
	// A workflow node's run reports through its workflow (one follow-up
	// when the workflow ends, one per failed node).
	if n.Terminal != "" || in.Meta.OwnerID == "" || in.Handled != nil || in.Meta.WorkflowNode != nil {
		return
	}
	switch in.Status {
	case runs.StatusDone, runs.StatusFailed, runs.StatusKilled, runs.StatusExited:
	default:
		return
	}
	f := terminalFollowup(k.cfg.AgentDir, in)
	k.addGraphHints(&f, in.Meta.Cwd)
	k.enqueue(queueKey(in.Meta), f)
	n.Terminal = in.Status
}

func shortList(items []string, n int) string {
	if len(items) > n {
		items = append(items[:n:n], fmt.Sprintf("(+%d more)", len(items)-n))
	}
	return strings.Join(items, ", ")
}
