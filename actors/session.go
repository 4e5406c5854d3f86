package actors

import (
	"encoding/json"
	"math"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/verbs"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// sessionsActor is the parent of the session actors (one per coordinator
// session, spawned on first use) and routes to them.
type sessionsActor struct {
	k        *Kernel
	children map[string]*actor.PID
}

type (
	notifySession struct{ session string }
	subscribe     struct {
		session string
		ch      chan Followup
	}
	unsubscribe struct {
		session string
		ch      chan Followup
	}
)

func (a *sessionsActor) Receive(ctx actor.Context) {
	var session string
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.children = map[string]*actor.PID{}
		return
	case *notifySession:
		session = m.session
	case *subscribe:
		session = m.session
	case *unsubscribe:
		session = m.session
	default:
		return
	}
	pid, ok := a.children[session]
	if !ok {
		props := actor.PropsFromProducer(func() actor.Actor { return &sessionActor{k: a.k, id: session} })
		pid = ctx.SpawnPrefix(props, "session:"+session+"#")
		a.children[session] = pid
	}
	ctx.Forward(pid)
}

// sessionActor holds a session's live watchers. Its queue lives on disk
// (<tmp>/sessions/<id>.jsonl) so nothing queued is lost with the kernel.
type sessionActor struct {
	k    *Kernel
	id   string
	subs []chan Followup
}

func (a *sessionActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *subscribe:
		a.subs = append(a.subs, m.ch)
		a.deliver()
	case *unsubscribe:
		for i, c := range a.subs {
			if c == m.ch {
				a.subs = append(a.subs[:i], a.subs[i+1:]...)
				close(c)
				break
			}
		}
	case *notifySession:
		a.deliver()
	}
}

// deliver hands queued follow-ups to the session's watcher while it has
// room; each is taken from the queue (marked handled) exactly once, and
// only when it can be handed over. One locked pass of the queue claims as
// many as the watcher has room for.
func (a *sessionActor) deliver() {
	if a.k.held(a.id) {
		return // suspended: follow-ups wait for the resume
	}
	for len(a.subs) > 0 {
		c := a.subs[0]
		room := cap(c) - len(c)
		if room == 0 {
			return
		}
		list, _ := a.k.take(a.id, room, false)
		if len(list) == 0 {
			return
		}
		for _, f := range list {
			c <- f
		}
	}
}

// take claims up to max of a session's follow-ups that are not yet
// delivered (queued, or claimed by a delivery that never finished — a
// watcher that went away, a kernel that died), oldest first, in one
// locked pass of the queue. With handled they are marked delivered in
// that same pass (a drain); otherwise the caller marks each delivered
// once it is handed over: at least once, never silently lost. more is how
// many stay queued past max (counted in the same pass).
func (k *Kernel) take(session string, max int, handled bool) (out []Followup, more int) {
	path := k.sessionFile(session)
	var bad []string
	now := time.Now().UTC()
	stamp := now.Format(time.RFC3339Nano)
	err := mailbox.RewriteLazy(path, func(lines []mailbox.Line) ([]mailbox.Line, error) {
		changed := false
		for i := range lines {
			l := &lines[i]
			st, _ := l.Peek("status")
			if len(out) >= max {
				if st == mailbox.StatusQueued {
					more++
				}
				continue
			}
			switch st {
			case mailbox.StatusQueued:
			case mailbox.StatusClaimed:
				at, _ := l.Peek("claimed_at")
				t, err := time.Parse(time.RFC3339Nano, at)
				if err == nil && now.Sub(t) < redeliverAfter {
					continue
				}
			default:
				continue
			}
			var rec struct {
				ID   string   `json:"id"`
				Body Followup `json:"body"`
			}
			status := mailbox.StatusClaimed
			if err := json.Unmarshal(l.Raw, &rec); err != nil {
				bad = append(bad, rec.ID)
				status = mailbox.StatusFailed
			} else {
				rec.Body.ID = rec.ID
				out = append(out, rec.Body)
				if handled {
					status = mailbox.StatusHandled
				}
			}
			kv := []any{"claimed_at", stamp, "claimed_by", "coordinator", "status", status}
			if status != mailbox.StatusClaimed {
				kv = append(kv, status+"_at", stamp)
			}
			if err := l.SetAll(kv...); err != nil {
				return nil, err
			}
			changed = true
		}
		if changed && (handled || len(bad) > 0) {
			lines = mailbox.CompactTerminal(lines, keepDelivered)
		}
		return lines, nil
	})
	if err != nil {
		k.log.Warn("claim follow-ups", "session", session, "err", err)
		return nil, 0
	}
	if len(bad) > 0 {
		k.log.Warn("malformed follow-ups marked failed", "session", session, "ids", bad)
	}
	return out, more
}

// keepDelivered is how many delivered follow-ups a session's queue keeps
// (the newest): the file stays small.
const keepDelivered = 2000

// redeliverAfter is how long a claimed follow-up may wait for its
// delivery to finish before another reader takes it over.
const redeliverAfter = 30 * time.Second

// delivered marks follow-ups handed over, in one locked pass.
func (k *Kernel) delivered(session string, ids ...string) {
	if len(ids) == 0 {
		return
	}
	q := &mailbox.Inbox{Path: k.sessionFile(session), KeepTerminal: keepDelivered}
	if err := q.DoneMany(ids, mailbox.StatusHandled); err != nil {
		k.log.Warn("mark follow-ups delivered", "session", session, "ids", len(ids), "err", err)
	}
}

// drain takes every queued follow-up of a session, oldest first, and marks
// them delivered: one locked pass of the queue however many there are.
func (k *Kernel) drain(session string) []Followup {
	list, _ := k.take(session, math.MaxInt, true)
	return list
}

func decodeRecord(rec any, v any) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// followups answers `inspect target=coordinator view=followups`: the
// calling session's queue, drained.
func (k *Kernel) followups(req wire.Request) (*verbs.Followups, error) {
	if req.Session == "" {
		return nil, &wire.Error{Code: "no_session", Exit: 64, Message: "followups need a coordinator session: set PI_ACTORS_SESSION or pass session=<id>"}
	}
	if k.held(req.Session) {
		return &verbs.Followups{Session: req.Session, Followups: []Followup{}, Held: true}, nil
	}
	// max bounds a reader that shows what it takes (inspect's lines=);
	// the rest stays queued for the next call.
	var p struct {
		Max int `json:"max"`
	}
	if len(req.Params) > 0 {
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return nil, &wire.Error{Code: "invalid_data", Exit: 65, Message: "followups parameters: max must be an integer"}
		}
	}
	max := p.Max
	if max <= 0 {
		max = math.MaxInt
	}
	list, more := k.take(req.Session, max, true)
	if list == nil {
		list = []Followup{}
	}
	return &verbs.Followups{Session: req.Session, Followups: list, Count: len(list), More: more}, nil
}

// watch streams the session's follow-ups as they are queued, until the
// client goes away.
func (k *Kernel) watch(req wire.Request, write func(wire.Response) error, gone <-chan struct{}) {
	if req.Session == "" {
		write(wire.Response{ID: req.ID, Error: &wire.Error{Code: "no_session", Exit: 64, Message: "watch needs a coordinator session: set PI_ACTORS_SESSION or pass session=<id>"}})
		return
	}
	ch := make(chan Followup, 256)
	k.system.Root.Send(k.sess, &subscribe{session: req.Session, ch: ch})
	defer k.system.Root.Send(k.sess, &unsubscribe{session: req.Session, ch: ch})
	write(wire.Response{ID: req.ID, OK: true, Result: wire.Result(map[string]any{"watching": req.Session})})
	tick := time.NewTicker(30 * time.Second)
	defer tick.Stop()
	for {
		select {
		case f, ok := <-ch:
			if !ok {
				return
			}
			// A burst is written whole, then marked delivered in one pass;
			// what was not written stays claimed and the next reader gets
			// it again.
			var ids []string
			for ok {
				if write(wire.Response{ID: req.ID, OK: true, Result: wire.Result(f)}) != nil {
					k.delivered(req.Session, ids...)
					return
				}
				ids = append(ids, f.ID)
				select {
				case f, ok = <-ch:
				default:
					ok = false
				}
			}
			k.delivered(req.Session, ids...)
		case <-tick.C:
			// keepalive: detect a client that went away
			if write(wire.Response{ID: req.ID, OK: true, Result: wire.Result(map[string]any{"keepalive": true})}) != nil {
				return
			}
		case <-gone:
			return
		case <-k.stopped:
			return
		}
	}
}
