package actors

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/recipes"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// controlWait bounds how long a control message waits to be applied by
// the run's supervisor before the answer says it is still pending.
const controlWait = 3 * time.Second

// message sends one envelope: durable first (appended to the target's
// JSONL under a lock with a unique id), then delivered or applied.
// later, when not nil, takes the part of a control.kill that can wait (its
// result and the inbox update): a batch kills every run first.
func (k *Kernel) message(req wire.Request, m *verbs.Message, later func(func())) (any, error) {
	env, err := m.Envelope()
	if err != nil {
		return nil, err
	}
	to, err := mailbox.Parse(env.To)
	if err != nil {
		return nil, err
	}
	if d, held, err := k.holdMessage(req, env, to); held || err != nil {
		return d, err // to a run of a suspended session: held until it resumes
	}
	return k.route(req, env, to, later)
}

// route sends an envelope its way by the kind of its destination.
func (k *Kernel) route(req wire.Request, env mailbox.Envelope, to mailbox.Address, later func(func())) (any, error) {
	switch to.Kind {
	case "run":
		return k.messageRun(req, env, to.ID, later)
	case "coordinator", "session":
		return k.messageUp(req, env, to)
	case mailbox.KindKnowledge:
		return k.messageKnowledge(req, env)
	case "room":
		return k.messageRoom(req, env, to)
	case "branch":
		return k.messageBranch(req, env, to)
	case "tool":
		return k.messageTool(req, env, to)
	}
	return nil, usageErr("message currently supports run:<id>, branch:<run>/<branch>, room:<run>, tool:<name>, coordinator, session:<id> and knowledge destinations; unsupported destination: %s", env.To)
}

// expired reports whether env's deadline (or ttl, from now) has passed.
func expired(env mailbox.Envelope, now time.Time) bool {
	exp, _ := env.ExpiredAt(now, now)
	return exp
}

// storedID reports whether a caller-chosen id is in an inbox already.
func storedID(inbox, id string) (bool, error) {
	if id == "" {
		return false, nil
	}
	rec, err := mailbox.NewInbox(inbox).Find(id)
	return rec != nil, err
}

var runtimeControl = map[string]bool{"control.kill": true, "control.cancel": true, "control.restart": true}

// controlTypes are the control.* message types a run may be sent: the
// kernel's and the supervisor's (kill, cancel, restart, archive, prune;
// retry for workflows) and the packaged recipes' vocabulary (stop for the
// locker; reply and revise for the checkpoint recipes).
var controlTypes = []string{"control.kill", "control.cancel", "control.restart", "control.archive", "control.prune", "control.retry",
	"control.stop", "control.reply", "control.revise"}

// checkControlType refuses a control.* type that is none of controlTypes
// and that the run's recipe does not declare in mailbox.accepts (by name
// or with a control.* pattern): a mistyped control message would sit
// queued for ever, read by no one.
func checkControlType(in *runs.Info, typ string) error {
	if !strings.HasPrefix(typ, "control.") || slices.Contains(controlTypes, typ) {
		return nil
	}
	if mb := mailboxOf(in.Meta.Mailbox); in.Meta.Mailbox != nil && mb != nil && len(mb.Accepts) > 0 && mb.Allows(typ) {
		return nil
	}
	return &wire.Error{Code: "invalid_envelope", Exit: 65,
		Message: fmt.Sprintf("type=%s is no control message a run knows (run:%s's recipe does not accept it either)", typ, in.Meta.Run),
		Hint:    "type=" + strings.Join(controlTypes, "|") + ", or a type of your own outside control.*"}
}

func (k *Kernel) messageRun(req wire.Request, env mailbox.Envelope, id string, later func(func())) (*verbs.Delivery, error) {
	in, err := k.access(req, env, id)
	if err != nil {
		return nil, err
	}
	if err := checkControlType(in, env.Type); err != nil {
		return nil, err
	}
	if env.Type == "control.retry" && in.Meta.Workflow != nil && !in.Live() {
		// Refused before it is stored: the resume it needs would fail
		// (it answered 70 and left the message queued for ever).
		if err := resumeLimit(in); err != nil {
			return nil, err
		}
	}
	switch env.Type {
	case "control.archive", "control.prune": // each says what it does with an archived run
	default:
		if err := refuseArchived(in, env); err != nil {
			return nil, err
		}
	}
	if err := checkWorkflowControl(in, env); err != nil {
		return nil, err
	}
	dir := in.Dir
	// A retry of a stored id is a duplicate even past its deadline: only
	// a new message is dead-lettered.
	if now := time.Now(); expired(env, now) {
		if stored, err := storedID(dir.Path(runs.InboxFile), env.ID); err != nil || !stored {
			if err != nil {
				return nil, err
			}
			return expiredOnArrival(env, "", "", string(dir), id)
		}
	}
	out := &verbs.Delivery{To: env.To, Type: env.Type, Run: id, StateDir: string(dir), Persisted: verbs.Ptr(true)}
	switch env.Type {
	case "control.archive", "control.prune":
		switch {
		case in.Status == runs.StatusArchived && env.Type == "control.archive":
			return nil, &wire.Error{Code: "conflict", Exit: 75, Message: fmt.Sprintf("run:%s is archived already (in %s)", id, in.Archived.ArchiveDir), Hint: "prune it to delete it: message to=run:" + id + " type=control.prune"}
		case !runs.Terminal(in.Status):
			return nil, &wire.Error{Code: "conflict", Exit: 75, Message: fmt.Sprintf("only terminal runs can be archived or pruned: run:%s is %s", id, in.Status), Hint: "stop it first: message to=run:" + id + " type=control.kill"}
		}
		if env.Type == "control.archive" {
			dest, err := runs.Archive(in)
			if err != nil {
				return nil, err
			}
			out.Archived, out.ArchiveDir, out.Status = true, dest, runs.StatusArchived
		} else {
			kept, err := runs.Prune(in, preserveArtifacts(env.Body))
			if err != nil {
				return nil, err
			}
			out.Pruned, out.PreservedArtifacts = true, kept
		}
		k.index.Record(runs.Entry{Run: id, StateDir: string(dir), Status: runs.StatusArchived, OwnerID: in.Meta.OwnerID, Recipe: in.Meta.Recipe, Removed: env.Type == "control.prune"})
		out.Delivered, out.Consumer, out.Reason = verbs.Ptr(true), "run-control", "control_applied"
		return out, nil
	}
	// One step under the state directory's lock: the message, its wake
	// record and (but for a kill, which records its own) the run.message
	// event.
	killing := env.Type == "control.kill" && in.Live()
	var rec mailbox.Record
	var dup bool
	err = mailbox.Update(dir.Path(runs.InboxFile), func(tx *mailbox.Tx) error {
		if rec, dup, err = mailbox.NewInbox(dir.Path(runs.InboxFile)).AppendIn(tx, env); err != nil || dup {
			return err
		}
		// The doorbell is advisory (watchers watch the inbox too): a wake
		// that cannot be written (a full disk) does not fail a message
		// already stored — the caller would retry a stored message.
		wake := mailbox.Wake{Actor: "run:" + id, Reason: mailbox.WakeRunMessage, StateDir: string(dir), Metadata: map[string]any{"inbox_id": rec.ID(), "type": env.Type}}
		mailbox.AppendWakes(tx, dir.Path(runs.WakeFile), wake)
		if !killing {
			// Best effort, as before: the message is durable already.
			runs.AppendEventIn(tx, dir, map[string]any{"event": "run.message", "inbox_id": rec.ID(), "type": env.Type})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("persist message: %w", err)
	}
	inboxID := rec.ID()
	out.InboxID = inboxID
	if dup {
		// A retried send: the first one is in the inbox (and was
		// applied); nothing is written or rung again.
		out.Duplicate, out.Sent, out.Reason = true, true, "duplicate"
		return out, nil
	}
	if killing {
		// control.kill is the kernel's own: durable in the inbox, it is
		// applied at once — SIGKILL the whole tree, no supervisor round
		// trip (it works on a hung supervisor too) — and recorded after
		// (in a batch, after every run of the batch is killed).
		k.runCache.Delete(id)
		ks, done := k.beginKill(dir)
		if done == nil {
			// Another kill of this run is under way (a workflow's nodes
			// are killed by its kill and by its end): one kill, one
			// run.kill event. Once its tree is killed, this one is
			// handled with it.
			select {
			case <-ks.tree:
				if ks.killed {
					if err := runs.RecordKilledAlready(dir, inboxID); err != nil {
						return nil, fmt.Errorf("record control.kill of run:%s: %w", id, err)
					}
					out.Delivered, out.Consumer, out.Reason, out.Stopped = verbs.Ptr(true), "run-control", "control_applied", true
					return out, nil
				}
				// That kill found the run gone: so does this one.
			case <-time.After(controlWait):
			}
			if cur, err := runs.Load(dir); err == nil {
				in = cur
			}
			runs.AppendEvent(dir, map[string]any{"event": "run.message", "inbox_id": inboxID, "type": env.Type})
		} else {
			alive := runs.KillTree(in, inboxID)
			ks.killed = alive
			close(ks.tree)
			if alive {
				record := func() {
					defer done()
					if err := runs.RecordKill(in, inboxID); err != nil {
						k.log.Warn("record kill", "run", id, "err", err)
						out.Warnings = []string{fmt.Sprintf("run:%s was killed, but its result could not be recorded: %v", id, err)}
					}
				}
				if later != nil {
					later(record)
				} else {
					record()
				}
				if in.Meta.Workflow != nil {
					k.killWorkflow(req, in, later) // its scheduler is dead: now its nodes
				}
				out.Delivered, out.Consumer, out.Reason, out.Stopped = verbs.Ptr(true), "run-control", "control_applied", true
				return out, nil
			}
			done() // its supervisor is already gone: the run actor settles it
			// As it is now: a kill that ended it a moment ago wrote its
			// result, and this one is answered run_not_running, not left
			// queued for a supervisor that is gone.
			if cur, err := runs.Load(dir); err == nil {
				in = cur
			}
			runs.AppendEvent(dir, map[string]any{"event": "run.message", "inbox_id": inboxID, "type": env.Type})
			if in.Meta.Workflow != nil {
				k.killWorkflow(req, in, later)
			}
		}
	}
	if rw := in.Meta.Mailbox; rw != nil && !runtimeControl[env.Type] {
		if mb := mailboxOf(rw); mb != nil && !mb.Allows(env.Type) {
			out.Warnings = []string{fmt.Sprintf("message type %s is not declared in mailbox.accepts for run:%s", env.Type, id)}
		}
	}
	if env.Type == "control.kill" && in.Meta.Workflow != nil && !killing {
		k.killWorkflow(req, in, later) // an ended workflow may have left live nodes
	}
	if !in.Live() && (env.Type == "control.retry" && in.Meta.Workflow != nil || env.Type == "control.restart") {
		// A run that has just ended is settled by its actor first (its
		// result read, its follow-up queued): a resume that removed the
		// result under it had the actor take the new attempt for a lost
		// one and kill it.
		if !k.awaitFinished(dir, finishWait) {
			return nil, &wire.Error{Code: "busy", Exit: 75, Message: fmt.Sprintf("run:%s is still ending (its end is being recorded); nothing was restarted", id),
				Hint: "retry in a moment: pi-actors restart " + id}
		}
		if cur, err := runs.Load(dir); err == nil {
			in = cur
		}
	}
	if !in.Live() {
		if env.Type == "control.retry" && in.Meta.Workflow != nil {
			// The workflow ended: a new scheduler applies the retry.
			if err := k.resumeEnded(in); err != nil {
				return nil, fmt.Errorf("resume workflow run:%s for control.retry: %w", id, err)
			}
			out.Delivered, out.Queued, out.Consumer, out.Reason, out.Status = verbs.Ptr(false), verbs.Ptr(true), "workflow-scheduler", "workflow_resumed", runs.StatusRunning
			if k.held(in.Meta.OwnerID) {
				// Its session is suspended: the new scheduler waits for
				// the resume, and the retry with it.
				out.Status = runs.StatusSuspended
			}
			return out, nil
		}
		if env.Type == "control.restart" {
			return k.restartEnded(req, in, out)
		}
		out.Delivered, out.Queued, out.Reason, out.Status = verbs.Ptr(false), verbs.Ptr(true), "run_not_running", in.Status
		return out, nil
	}
	if !runtimeControl[env.Type] {
		// For the run's own consumer, which watches the state dir; the
		// supervisor acts only on control messages, so it is not rung.
		out.Delivered, out.Queued, out.Consumer, out.Reason = verbs.Ptr(false), verbs.Ptr(true), "run-inbox", "queued_mailbox"
		if env.Type == "control.retry" && in.Meta.Workflow != nil && k.retryAtEnd(dir, in.Meta) {
			// The workflow ended as it was sent: a new scheduler applies it.
			out.Consumer, out.Reason = "workflow-scheduler", "workflow_resumed"
		}
		return out, nil
	}
	// The doorbell: the supervisor re-reads its inbox on SIGUSR1 (the
	// message is already durable; a missed bell is caught by its poll).
	k.runCache.Delete(id) // the run is about to stop or restart
	if runs.Alive(in.Meta.Pid, in.Meta.PidStart) {
		syscall.Kill(in.Meta.Pid, syscall.SIGUSR1)
	}
	var applied bool
	if env.Type == "control.restart" {
		applied = waitHandled(dir.Path(runs.InboxFile), inboxID, controlWait)
	} else {
		// A stop is applied once the run is over: its result is written
		// (a stat per poll, not an inbox read).
		applied = waitTerminal(dir, controlWait)
	}
	out.Consumer = "run-supervisor"
	switch {
	case applied:
		out.Delivered, out.Reason = verbs.Ptr(true), "control_applied"
		out.Stopped = env.Type != "control.restart"
	case env.Type != "control.restart" && handled(dir.Path(runs.InboxFile), inboxID):
		// The supervisor took the stop; the run outlived SIGTERM and is
		// killed when the kill grace ends.
		out.Delivered, out.Reason = verbs.Ptr(true), "control_stopping"
		out.NextActions = []string{"inspect target=run:" + id + " view=status"}
	default:
		out.Delivered, out.Queued, out.Reason = verbs.Ptr(false), verbs.Ptr(true), "control_pending"
	}
	return out, nil
}

// waitHandled polls the inbox until the record is handled or failed.
func waitHandled(path, id string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	step := 2 * time.Millisecond
	for time.Now().Before(deadline) {
		if handled(path, id) {
			return true
		}
		time.Sleep(step)
		step = min(step*2, 10*time.Millisecond)
	}
	return false
}

// handled reports whether inbox record id is handled or failed.
func handled(path, id string) bool {
	lines, err := mailbox.Read(path)
	if err != nil {
		return false
	}
	for i := len(lines) - 1; i >= 0; i-- {
		r := mailbox.Record(lines[i].Value)
		if lines[i].Err == nil && r.ID() == id {
			s := r.Status()
			return s == mailbox.StatusHandled || s == mailbox.StatusFailed
		}
	}
	return false
}

// waitTerminal polls until the run has a result.
func waitTerminal(dir runs.Dir, d time.Duration) bool {
	deadline := time.Now().Add(d)
	step := 2 * time.Millisecond
	for time.Now().Before(deadline) {
		if dir.Exists(runs.ResultFile) {
			return true
		}
		time.Sleep(step)
		step = min(step*2, 10*time.Millisecond)
	}
	return false
}

func preserveArtifacts(body any) bool {
	m, _ := body.(map[string]any)
	b1, _ := m["preserve_artifacts"].(bool)
	b2, _ := m["preserveArtifacts"].(bool)
	return b1 || b2
}

// mailboxOf reads the mailbox contract stored in run.json.
func mailboxOf(v any) *recipes.Mailbox {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var mb recipes.Mailbox
	if json.Unmarshal(b, &mb) != nil {
		return nil
	}
	return &mb
}

// messageUp records a run's message to its coordinator (or a session) in
// the sender's outbox; the kernel's run actor then queues it as a
// follow-up for the owner.
func (k *Kernel) messageUp(req wire.Request, env mailbox.Envelope, to mailbox.Address) (*verbs.Delivery, error) {
	if env.From == "" {
		return nil, invalidErr("message to %s requires from=run:<id> (the sending run; scripts get it as $PI_ACTORS_ADDRESS)", env.To)
	}
	from, err := mailbox.Parse(env.From)
	if err != nil {
		return nil, err
	}
	if from.Kind != "run" {
		return nil, invalidErr("message to %s currently requires from=run:<id>", env.To)
	}
	in, err := k.access(req, env, from.ID)
	if err != nil {
		return nil, err
	}
	if err := refuseArchived(in, env); err != nil {
		return nil, err
	}
	dir := in.Dir
	if to.Kind == "session" && in.Meta.OwnerID != to.ID {
		hint := fmt.Sprintf("message to=coordinator (or to=session:%s) from=run:%s", in.Meta.OwnerID, from.ID)
		if in.Meta.OwnerID == "" {
			hint = fmt.Sprintf("run:%s was started without a session: it has no coordinator to message (spawn it with PI_ACTORS_SESSION set)", from.ID)
		}
		return nil, &wire.Error{Code: "session_mismatch", Exit: 77,
			Message: fmt.Sprintf("run:%s reason=session_mismatch owner_session=%s to_session=%s: a run messages its own session", from.ID, in.Meta.OwnerID, to.ID),
			Hint:    hint}
	}
	delivery := "notify"
	if to.Kind == "session" {
		delivery = "followup"
	}
	if rr, _ := env.Metadata["requires_response"].(bool); rr {
		delivery = "followup"
	}
	summary := env.Summary
	if summary == "" {
		summary = env.Type
	}
	rec := mailbox.OutboxRecord{Body: env.Body, CorrelationID: env.CorrelationID, Delivery: delivery, Event: env.Type, From: env.From,
		ID: env.ID, Level: "info", Metadata: env.Metadata, ReplyTo: env.ReplyTo, Summary: summary, To: env.To, Type: env.Type}
	out := &verbs.Delivery{To: env.To, Type: env.Type, Run: from.ID, StateDir: string(dir), Outbox: filepath.Base(runs.OutboxFile), ID: env.ID,
		Sent: true, Persisted: verbs.Ptr(true), Queued: verbs.Ptr(true), Delivered: verbs.Ptr(false), Consumer: "run-outbox", Reason: to.Kind + "_outbox_persisted"}
	if env.ID == "" {
		if d, err := expiredOnArrival(env, "", "", string(dir), from.ID); d != nil || err != nil {
			return d, err
		}
		if _, err := mailbox.AppendOutbox(dir.Path(runs.OutboxFile), rec); err != nil {
			return nil, fmt.Errorf("persist message: %w", err)
		}
		k.captureMessage(env, from.ID, in.Meta.Cwd, in.Meta.OwnerID)
		return out, nil
	}
	// A caller-chosen id: look for it and append under one lock, so a
	// retried send is stored once — and is a duplicate even past its
	// deadline (the first send was stored in time).
	now := time.Now()
	rec.TS = now.UTC().Format(time.RFC3339Nano)
	expired := false
	err = mailbox.Update(dir.Path(runs.OutboxFile), func(tx *mailbox.Tx) error {
		old, err := tx.Find(env.ID)
		if err != nil || old != nil {
			out.Duplicate = old != nil
			return err
		}
		if expired, _ = env.ExpiredAt(now, now); expired {
			return nil
		}
		return tx.Append(rec)
	})
	if err != nil {
		return nil, fmt.Errorf("persist message: %w", err)
	}
	if expired {
		return expiredOnArrival(env, "", "", string(dir), from.ID)
	}
	if out.Duplicate {
		out.Queued, out.Delivered, out.Reason = nil, nil, "duplicate"
		return out, nil
	}
	k.captureMessage(env, from.ID, in.Meta.Cwd, in.Meta.OwnerID)
	return out, nil
}

// refuseArchived refuses a message for an archived run: its state
// directory holds only the tombstone, where no view looks and which the
// next spawn of the id clears, so nothing is written there (a dead
// letter neither). The archive and prune controls are the run route's.
func refuseArchived(in *runs.Info, env mailbox.Envelope) error {
	if in.Status != runs.StatusArchived {
		return nil
	}
	id := in.Meta.Run
	if env.Type == "control.restart" {
		return archivedRestartErr(id)
	}
	where := ""
	if in.Archived != nil && in.Archived.ArchiveDir != "" {
		where = " (in " + in.Archived.ArchiveDir + ")"
	}
	return &wire.Error{Code: "conflict", Exit: 75,
		Message: fmt.Sprintf("run:%s is archived%s: message to %s (type %s) not sent, nothing written", id, where, env.To, env.Type),
		Hint:    "spawn it again (pi-actors spawn as=run:" + id + " …) or message another run; an archived run takes only type=control.prune"}
}

// archivedRestartErr refuses a control.restart of an archived run.
func archivedRestartErr(id string) error {
	return &wire.Error{Code: "conflict", Exit: 75, Message: fmt.Sprintf("run:%s is archived; it cannot be restarted", id),
		Hint: "start a new run: pi-actors spawn as=run:" + id + " …, or prune the archive first"}
}

// restartEnded applies a control.restart to a run that is not running:
// its command starts again on its state directory (logs, inbox and
// events kept; the restart counted in run.json's resumes), with the
// environment of the caller who asked, like a spawn. Controls queued
// while it was not running (this one included) are settled first, so
// none stops the new attempt. An ended workflow is re-run node by node
// with control.retry instead.
func (k *Kernel) restartEnded(req wire.Request, in *runs.Info, out *verbs.Delivery) (*verbs.Delivery, error) {
	id := in.Meta.Run
	switch {
	case in.Status == runs.StatusArchived:
		return nil, archivedRestartErr(id)
	case in.Meta.Workflow != nil:
		return nil, &wire.Error{Code: "conflict", Exit: 75, Message: fmt.Sprintf("run:%s is a workflow that ended (%s); restart reruns a single command", id, in.Status),
			Hint: "rerun a node: message to=run:" + id + " type=control.retry body:='{\"node\":\"<node>\"}'"}
	}
	if err := runs.SettleControl(in.Dir); err != nil {
		return nil, fmt.Errorf("restart run:%s: %w", id, err)
	}
	if err := k.resumeRun(in, k.runEnv(req.Env), "control.restart"); err != nil {
		return nil, fmt.Errorf("restart run:%s: %w", id, err)
	}
	out.Delivered, out.Consumer, out.Reason, out.Status = verbs.Ptr(true), "kernel", "restarted", runs.StatusRunning
	if k.held(in.Meta.OwnerID) {
		out.Status = runs.StatusSuspended // it starts stopped, until the resume
	}
	return out, nil
}
