package actors

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/rooms"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// The room, branch and tool routes of message (PARITY A4/A5). The data
// work is package rooms'; the kernel checks sessions first, forwards
// branch messages to their parent run's inbox (with its doorbell), tells
// the room actors about new timeline entries and normalises every outcome
// into a verbs.Delivery.

// DeadLettersFile is the coordinator's dead-letter log, in the kernel's
// temp dir: messages with no run to hold them (the run does not exist, or
// a message to the coordinator or a tool expired).
const DeadLettersFile = rooms.DeadLettersFile

// deadLettersPath is the coordinator's dead-letter log of this kernel.
func (k *Kernel) deadLettersPath() string {
	return filepath.Join(wire.TmpDir(k.cfg.AgentDir), DeadLettersFile)
}

// access checks the caller's session for run; a run that does not exist
// has the message dead-lettered at the coordinator (reason run_not_found)
// before the error goes back, so nothing a caller sent vanishes.
//
// A live run's Info is remembered while its run actor lives and its
// result.json does not exist, so a stream of messages to one
// run reads its state files once; what a message needs of it (state dir,
// owner, supervisor pid, mailbox contract) does not change while it runs.
func (k *Kernel) access(req wire.Request, env mailbox.Envelope, run string) (*runs.Info, error) {
	if in := k.cachedRun(run); in != nil {
		if err := runs.CheckOwner(req.Session, in.Meta); err != nil {
			return nil, err
		}
		return in, nil
	}
	in, err := runs.Access(k.cfg.AgentDir, run, req.Session)
	if errors.Is(err, runs.ErrNotFound) {
		if _, _, derr := rooms.DeadLetterAt(k.deadLettersPath(), req.Session, env, "run_not_found"); derr != nil {
			k.log.Warn("dead letter", "to", env.To, "err", derr)
		}
	}
	if err == nil && in.Live() {
		k.mu.Lock()
		if lr := k.live[string(in.Dir)]; lr != nil && lr.id == run {
			k.runCache.Store(run, cachedRun{in: in, actor: lr.pid})
		}
		k.mu.Unlock()
	}
	return in, err
}

// cachedRun is a live run's Info, valid while its run actor is the one
// that was live when it was read.
type cachedRun struct {
	in    *runs.Info
	actor *actor.PID
}

// cachedRun returns the remembered Info of a live run, or nil.
func (k *Kernel) cachedRun(run string) *runs.Info {
	v, ok := k.runCache.Load(run)
	if !ok {
		return nil
	}
	c := v.(cachedRun)
	k.mu.Lock()
	lr := k.live[string(c.in.Dir)]
	k.mu.Unlock()
	// The run actor learns of the end a moment after the supervisor wrote
	// result.json: that file (one stat) ends the cached Info at once.
	if lr == nil || lr.id != run || !lr.pid.Equal(c.actor) || c.in.Dir.Exists(runs.ResultFile) {
		k.runCache.CompareAndDelete(run, v)
		return nil
	}
	return c.in
}

// expiredOnArrival dead-letters a message whose deadline passed before
// it was sent (in dir's log, else in the coordinator's log at path, as
// session's) and returns its outcome; nil when it has not expired.
func expiredOnArrival(env mailbox.Envelope, path, session, dir, run string) (*verbs.Delivery, error) {
	now := time.Now()
	exp, why := env.ExpiredAt(now, now)
	if !exp {
		return nil, nil
	}
	var rec rooms.DeadLetterRecord
	var dup bool
	var err error
	if dir != "" {
		rec, dup, err = rooms.DeadLetter(dir, env, why)
	} else {
		rec, dup, err = rooms.DeadLetterAt(path, session, env, why)
	}
	if err != nil {
		return nil, err
	}
	return deadDelivery(env, run, dir, rec.ID, why, dup), nil
}

// deadDelivery is the outcome of a dead-lettered message.
func deadDelivery(env mailbox.Envelope, run, dir, id, why string, dup bool) *verbs.Delivery {
	next := "inspect target=coordinator view=dead_letters"
	if run != "" {
		next = "inspect target=run:" + run + " view=dead_letters"
	}
	return &verbs.Delivery{To: env.To, Type: env.Type, Run: run, StateDir: dir, ID: id, Duplicate: dup,
		Persisted: verbs.Ptr(true), Delivered: verbs.Ptr(false), Consumer: rooms.ConsumerDead, Reason: rooms.ReasonDeadLetter,
		DeadLetter: why, NextActions: []string{next}}
}

// roomRun is the run behind a room or branch address, once the envelope
// passed check (refused before anything is written, dead letters
// included), the session may use the run and it is not archived.
func (k *Kernel) roomRun(req wire.Request, env mailbox.Envelope, to mailbox.Address, check func(mailbox.Envelope) error) (*runs.Info, error) {
	if err := check(env); err != nil {
		return nil, err
	}
	in, err := k.access(req, env, to.ID)
	if err != nil {
		return nil, err
	}
	if err := refuseArchived(in, env); err != nil {
		return nil, err
	}
	return in, nil
}

// messageBranch is the branch route: from checked before any write, the
// session, then the branch inbox (roster join, snapshots, doorbell) and
// the forward of the envelope to the parent run's own inbox when it is
// running.
func (k *Kernel) messageBranch(req wire.Request, env mailbox.Envelope, to mailbox.Address) (*verbs.Delivery, error) {
	in, err := k.roomRun(req, env, to, rooms.CheckBranch)
	if err != nil {
		return nil, err
	}
	d, err := rooms.SendBranch(string(in.Dir), env, parentDown(in))
	if err != nil {
		return nil, err
	}
	if d.RoomChanged {
		k.pokeRoom(string(in.Dir), to.ID)
	}
	return branchDelivery(d.Result()), nil
}

// messageRoom is the room route: from (required, same run) and
// metadata.recipients validated before any write, the session, the
// timeline append, then each recipient's branch delivery and forward.
func (k *Kernel) messageRoom(req wire.Request, env mailbox.Envelope, to mailbox.Address) (*verbs.Delivery, error) {
	in, err := k.roomRun(req, env, to, rooms.CheckPost)
	if err != nil {
		return nil, err
	}
	p, err := rooms.Post(string(in.Dir), env, parentDown(in))
	if err != nil {
		return nil, err
	}
	k.pokeRoom(string(in.Dir), to.ID)
	res := p.Result()
	if !res.Duplicate && res.DeadLetter == "" {
		k.captureMessage(env, in.Meta.Run, in.Meta.Cwd, in.Meta.OwnerID)
	}
	return roomDelivery(res), nil
}

// parentDown is nil for a running run, else why a branch message is not
// forwarded to it (the message stays in the branch inbox).
func parentDown(in *runs.Info) error {
	if in.Live() {
		return nil
	}
	return fmt.Errorf("run:%s is not running (status %s)", in.Meta.Run, in.Status)
}

// branchDelivery converts a branch outcome.
func branchDelivery(r rooms.BranchResult) *verbs.Delivery {
	d := &verbs.Delivery{To: r.To, Type: r.Type, Run: r.Run, StateDir: r.StateDir, InboxID: r.InboxID, Duplicate: r.Duplicate,
		Sent: r.Sent, Delivered: verbs.Ptr(r.Delivered), Persisted: verbs.Ptr(r.Persisted), Consumer: r.Consumer, Reason: r.Reason,
		DeliveryError: r.DeliveryError, DeadLetter: r.DeadLetter, NextActions: r.NextActions}
	if r.DeadLetter != "" {
		d.ID, d.InboxID = r.InboxID, ""
	}
	return d
}

// roomDelivery converts a room outcome.
func roomDelivery(r rooms.RoomResult) *verbs.Delivery {
	d := &verbs.Delivery{To: r.To, Type: r.Type, ID: r.ID, Duplicate: r.Duplicate, Room: r.Room, StateDir: r.StateDir,
		Sent: r.Sent, Delivered: verbs.Ptr(r.Delivered), Persisted: verbs.Ptr(r.Persisted), Forwarded: r.Forwarded,
		Consumer: r.Consumer, Reason: r.Reason, DeadLetter: r.DeadLetter, Multicast: r.Multicast, MulticastCount: r.MulticastCount,
		NextActions: r.NextActions}
	if r.DeadLetter == "" {
		d.MessageCount, d.RosterCount = verbs.Ptr(r.MessageCount), verbs.Ptr(r.RosterCount)
	}
	for _, b := range r.MulticastResults {
		d.MulticastResults = append(d.MulticastResults, branchDelivery(b))
	}
	return d
}

// messageTool is the tool route: the user-root recipe tool runs as
// `call` runs it, with the body as its arguments (no session check, as
// upstream). A caller-chosen id is remembered in the coordinator's tool
// log, so a retried send does not run the tool twice.
func (k *Kernel) messageTool(req wire.Request, env mailbox.Envelope, to mailbox.Address) (*verbs.Delivery, error) {
	venv := &verbs.Env{AgentDir: k.cfg.AgentDir, Config: k.conf(), Session: req.Session, Cwd: req.Cwd, Environ: req.Env, Version: k.cfg.Version, JSON: true}
	if venv.Cwd == "" {
		venv.Cwd = "/"
	}
	// Checked in the order of every route: the recipient exists (66), a
	// retried id is a duplicate (even past its deadline), then expiry.
	if _, err := verbs.ResolveTool(venv, to.ID); err != nil {
		return nil, err
	}
	out := &verbs.Delivery{To: env.To, Type: env.Type, Tool: to.ID, ID: env.ID, Sent: true, Invoked: true,
		Delivered: verbs.Ptr(true), Persisted: verbs.Ptr(false), Consumer: "tool", Reason: "tool_invoked"}
	duplicate := func() (*verbs.Delivery, error) {
		out.Invoked, out.Duplicate, out.Delivered, out.Reason = false, true, nil, "duplicate"
		return out, nil
	}
	if env.ID != "" {
		seen, err := k.toolIDSeen(env, to.ID)
		if err != nil {
			return nil, err
		}
		if seen {
			return duplicate()
		}
	}
	if d, err := expiredOnArrival(env, k.deadLettersPath(), req.Session, "", ""); d != nil || err != nil {
		return d, err
	}
	if env.ID != "" {
		first, err := k.claimToolID(env, to.ID)
		if err != nil {
			return nil, err
		}
		if !first {
			return duplicate()
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-k.stopped:
			cancel()
		case <-ctx.Done():
		}
	}()
	res, err := verbs.InvokeTool(ctx, venv, to.ID, env.Type, env.Body)
	if err != nil {
		// The tool did not run (not found, arguments refused): the id is
		// free for the retry that fixes it. One that ran and failed keeps
		// its id: a retry answers duplicate and runs nothing again.
		var ran *verbs.ToolRanError
		if env.ID != "" && !errors.As(err, &ran) {
			if rerr := k.releaseToolID(env, to.ID); rerr != nil {
				k.log.Warn("release tool message id", "id", env.ID, "err", rerr)
			}
		}
		return nil, err
	}
	out.ToolResult = res
	return out, nil
}

// toolLog is the coordinator's log of tool messages' caller-chosen ids.
func (k *Kernel) toolLog() string {
	return filepath.Join(wire.TmpDir(k.cfg.AgentDir), "tool_messages.jsonl")
}

// toolLogTrimBytes is the tool log's size past which it is trimmed to its
// newest logKeep records within half that size (a record is about 150
// bytes; a long caller id makes it longer).
const toolLogTrimBytes = 3 << 20

// toolKey is a tool message's id in the tool log: per tool, so the same
// id sent to two tools is two messages.
func toolKey(id, tool string) string { return tool + "/" + id }

// claimToolID records a tool message's caller-chosen id in the
// coordinator's tool log; false when it was already there.
func (k *Kernel) claimToolID(env mailbox.Envelope, tool string) (bool, error) {
	first := false
	key := toolKey(env.ID, tool)
	err := mailbox.Update(k.toolLog(), func(tx *mailbox.Tx) error {
		old, err := tx.Find(key)
		if err != nil || old != nil {
			return err
		}
		first = true
		if err := tx.Append(map[string]any{"id": key, "message_id": env.ID, "tool": tool, "type": env.Type, "ts": time.Now().UTC().Format(time.RFC3339Nano)}); err != nil {
			return err
		}
		// A long-lived kernel's log stays bounded: past toolLogTrimBytes
		// it keeps its newest logKeep records, in half that size. Best
		// effort: the id is recorded either way.
		if st, err := os.Stat(tx.Path()); err == nil && st.Size() > toolLogTrimBytes {
			if err := tx.Rewrite(func(lines []mailbox.Line) ([]mailbox.Line, error) {
				return newestRecords(lines, logKeep, toolLogTrimBytes/2), nil
			}); err != nil {
				k.log.Warn("trim the tool message log", "err", err)
			}
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("record tool message %s: %w", env.ID, err)
	}
	return first, nil
}

// toolIDSeen reports whether the tool log holds a message id already.
func (k *Kernel) toolIDSeen(env mailbox.Envelope, tool string) (bool, error) {
	key := toolKey(env.ID, tool)
	seen := false
	err := mailbox.Update(k.toolLog(), func(tx *mailbox.Tx) error {
		old, err := tx.Find(key)
		seen = old != nil
		return err
	})
	if err != nil {
		return false, fmt.Errorf("read tool message log: %w", err)
	}
	return seen, nil
}

// releaseToolID takes a claimed id out of the tool log again.
func (k *Kernel) releaseToolID(env mailbox.Envelope, tool string) error {
	key := toolKey(env.ID, tool)
	return mailbox.Update(k.toolLog(), func(tx *mailbox.Tx) error {
		return tx.Rewrite(func(lines []mailbox.Line) ([]mailbox.Line, error) {
			return slices.DeleteFunc(lines, func(l mailbox.Line) bool {
				return l.Err == nil && l.Value["id"] == key
			}), nil
		})
	})
}
