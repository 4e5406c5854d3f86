package actors

import (
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/rooms"
	"github.com/pi-actors/pi-actors/sessions"
	"github.com/pi-actors/pi-actors/verbs"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// holds are the sessions whose messages and follow-ups the kernel holds:
// suspended, or resuming until what was held is handed on. The session
// record on disk is the durable fact (restored at start); this is its
// in-memory copy, with a count the message path reads first, so a kernel
// with no suspended session pays one atomic load per message.
type holds struct {
	mu sync.Mutex
	n  atomic.Int32
	m  map[string]string // session → suspended or resuming
}

func (h *holds) set(session, state string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[string]string{}
	}
	h.m[session] = state
	h.n.Store(int32(len(h.m)))
}

// clear ends the hold of a session; the caller holds h.mu.
func (h *holds) clearLocked(session string) {
	delete(h.m, session)
	h.n.Store(int32(len(h.m)))
}

// held reports whether a session's messages and follow-ups are held.
func (k *Kernel) held(session string) bool {
	if session == "" || k.holds.n.Load() == 0 {
		return false
	}
	k.holds.mu.Lock()
	defer k.holds.mu.Unlock()
	_, ok := k.holds.m[session]
	return ok
}

// immediate are the run messages a suspended session's run still gets at
// once: its kernel or supervisor stops it (a stopped process dies of
// SIGKILL; a cancelled one is continued first to handle SIGTERM).
var immediate = map[string]bool{"control.kill": true, "control.cancel": true, "control.archive": true, "control.prune": true}

// heldRecord is one line of a session's held queue: the message as sent
// and who sent it (the release sends it again as that caller).
type heldRecord struct {
	ID      string           `json:"id"`
	Type    string           `json:"type"` // session.held
	To      string           `json:"to"`
	Message mailbox.Envelope `json:"message"`
	Session string           `json:"session,omitempty"`
	Cwd     string           `json:"cwd,omitempty"`
	Env     []string         `json:"env,omitempty"` // the caller's PI_ACTORS_RUN_ID, if any
	Cause   *wire.Cause      `json:"cause,omitempty"`
}

// holdMessage keeps a message to a run of a held session (run:, room:,
// branch:) in the session's held queue — durable, checked as its route
// would check it, answered held — until the resume hands it on. held is
// false when the message goes its usual way.
func (k *Kernel) holdMessage(req wire.Request, env mailbox.Envelope, to mailbox.Address) (d *verbs.Delivery, held bool, err error) {
	if k.holds.n.Load() == 0 {
		return nil, false, nil
	}
	switch to.Kind {
	case "run":
		if immediate[env.Type] {
			return nil, false, nil
		}
	case "room", "branch":
	default:
		return nil, false, nil
	}
	in, err := k.access(req, env, to.ID)
	if err != nil || !in.Live() || !k.held(in.Meta.OwnerID) || expired(env, time.Now()) {
		return nil, false, nil // the route answers (denied, not found, ended, expired)
	}
	if to.Kind == "run" {
		if err := checkWorkflowControl(in, env); err != nil {
			return nil, false, err // refused now, not after the resume
		}
	}
	switch {
	case to.Kind == "room":
		err = rooms.CheckPost(env)
	case to.Kind == "branch":
		err = rooms.CheckBranch(env)
	case env.Type == "control.retry" && in.Meta.Workflow != nil:
		err = checkRetry(in, env)
	}
	if err != nil {
		return nil, true, err
	}
	owner := in.Meta.OwnerID
	k.holds.mu.Lock()
	defer k.holds.mu.Unlock()
	if _, ok := k.holds.m[owner]; !ok {
		return nil, false, nil // resumed meanwhile: it goes its way
	}
	if env.ID == "" {
		env.ID = "held-" + uuid.NewString() // the id it keeps when handed on
	}
	rec := heldRecord{ID: env.ID, Type: "session.held", To: env.To, Message: env, Session: req.Session, Cwd: req.Cwd, Cause: req.Cause}
	if r := envString(req.Env, "PI_ACTORS_RUN_ID"); r != "" {
		rec.Env = []string{"PI_ACTORS_RUN_ID=" + r}
	}
	obj, err := toMap(rec)
	if err != nil {
		return nil, true, err
	}
	_, dup, err := mailbox.NewInbox(sessions.Path(k.cfg.AgentDir, owner, sessions.HeldSuffix)).Append(obj)
	if err != nil {
		return nil, true, fmt.Errorf("hold message for suspended session %s: %w", owner, err)
	}
	d = &verbs.Delivery{To: env.To, Type: env.Type, Run: to.ID, StateDir: string(in.Dir), InboxID: env.ID, Duplicate: dup,
		Persisted: verbs.Ptr(true), Queued: verbs.Ptr(true), Delivered: verbs.Ptr(false), Consumer: "session-hold", Reason: "session_suspended",
		Status: "suspended", NextActions: []string{"pi-actors session resume session=" + owner}}
	return d, true, nil
}

// release hands a held session's messages on, oldest first, as their
// senders sent them, until none is left; then, under the same lock that
// holds new messages, the session stops being held — so a message sent
// meanwhile is held after the others and handed on after them. It
// returns how many it handed on.
func (k *Kernel) release(session string) int {
	path := sessions.Path(k.cfg.AgentDir, session, sessions.HeldSuffix)
	box := &mailbox.Inbox{Path: path, KeepTerminal: 100}
	n := 0
	for {
		k.holds.mu.Lock()
		batch, err := claimHeld(path)
		if err != nil {
			k.log.Warn("release held messages", "session", session, "err", err)
		}
		if len(batch) == 0 {
			k.holds.clearLocked(session)
			k.holds.mu.Unlock()
			return n
		}
		k.holds.mu.Unlock()
		var ids []string
		for _, rec := range batch {
			req := wire.Request{Op: "message", Session: rec.Session, Cwd: rec.Cwd, Env: rec.Env, Cause: rec.Cause}
			to, err := mailbox.Parse(rec.Message.To)
			var res any
			if err == nil {
				res, err = k.route(req, rec.Message, to, nil)
			}
			if err != nil {
				k.log.Warn("release held message", "session", session, "id", rec.ID, "to", rec.To, "err", err)
			} else {
				k.traceMessage(req, &verbs.Message{ID: rec.ID, From: rec.Message.From}, res, session, time.Time{})
			}
			ids = append(ids, rec.ID)
			n++
		}
		if err := box.DoneMany(ids, mailbox.StatusHandled); err != nil {
			k.log.Warn("mark held messages released", "session", session, "err", err)
		}
	}
}

// claimHeld claims every held message not yet handed on (queued, or
// claimed by a release that did not finish), oldest first, in one
// locked pass.
func claimHeld(path string) ([]heldRecord, error) {
	var out []heldRecord
	err := mailbox.RewriteLazy(path, func(lines []mailbox.Line) ([]mailbox.Line, error) {
		stamp := time.Now().UTC().Format(time.RFC3339Nano)
		for i := range lines {
			l := &lines[i]
			if st, _ := l.Peek("status"); st != mailbox.StatusQueued && st != mailbox.StatusClaimed {
				continue
			}
			var rec heldRecord
			if err := json.Unmarshal(l.Raw, &rec); err != nil {
				continue // kept as it is: malformed lines are never dropped
			}
			if err := l.SetAll("status", mailbox.StatusClaimed, "claimed_at", stamp, "claimed_by", "kernel"); err != nil {
				return nil, err
			}
			out = append(out, rec)
		}
		return lines, nil
	})
	return out, err
}

// heldCount counts the messages a session's held queue still holds.
func heldCount(agentDir, session string) int {
	lines, err := mailbox.Read(sessions.Path(agentDir, session, sessions.HeldSuffix))
	if err != nil {
		return 0
	}
	n := 0
	for _, l := range lines {
		if l.Err == nil {
			if st := mailbox.Record(l.Value).Status(); st == mailbox.StatusQueued || st == mailbox.StatusClaimed {
				n++
			}
		}
	}
	return n
}

func toMap(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(b, &m)
}
