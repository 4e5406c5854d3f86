package actors

import (
	"encoding/json"
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
// only when it can be handed over.
func (a *sessionActor) deliver() {
	for len(a.subs) > 0 {
		c := a.subs[0]
		if len(c) == cap(c) {
			return
		}
		f, ok := a.k.takeOne(a.id)
		if !ok {
			return
		}
		c <- f
	}
}

// takeOne claims the oldest follow-up of a session that is not yet
// delivered (queued, or claimed by a delivery that never finished — a
// watcher that went away, a kernel that died). The caller marks it
// handled once it is handed over: at least once, never silently lost.
func (k *Kernel) takeOne(session string) (Followup, bool) {
	q := mailbox.NewInbox(k.sessionFile(session))
	for {
		rec, err := claimFollowup(q.Path)
		if err != nil || rec == nil {
			return Followup{}, false
		}
		var f Followup
		if err := decodeRecord(rec["body"], &f); err != nil {
			q.Done(rec.ID(), mailbox.StatusFailed, map[string]any{"error": err.Error()})
			continue
		}
		f.ID = rec.ID()
		return f, true
	}
}

// redeliverAfter is how long a claimed follow-up may wait for its
// delivery to finish before another reader takes it over.
const redeliverAfter = 30 * time.Second

// claimFollowup claims the oldest queued follow-up, or one whose claim is
// older than redeliverAfter.
func claimFollowup(path string) (mailbox.Record, error) {
	var got mailbox.Record
	err := mailbox.Rewrite(path, func(lines []mailbox.Line) ([]mailbox.Line, error) {
		now := time.Now().UTC()
		for i := range lines {
			l := &lines[i]
			if l.Err != nil {
				continue
			}
			r := mailbox.Record(l.Value)
			switch r.Status() {
			case mailbox.StatusQueued:
			case mailbox.StatusClaimed:
				at, _ := r["claimed_at"].(string)
				t, err := time.Parse(time.RFC3339Nano, at)
				if err == nil && now.Sub(t) < redeliverAfter {
					continue
				}
			default:
				continue
			}
			for _, kv := range [][2]any{{"claimed_at", now.Format(time.RFC3339Nano)}, {"claimed_by", "coordinator"}, {"status", mailbox.StatusClaimed}} {
				if err := l.Set(kv[0].(string), kv[1]); err != nil {
					return nil, err
				}
			}
			got = mailbox.Record(l.Value)
			return lines, nil
		}
		return lines, nil
	})
	return got, err
}

// delivered marks a follow-up handed over.
func (k *Kernel) delivered(session, id string) {
	// Keep the newest delivered follow-ups only: the queue file stays small.
	q := &mailbox.Inbox{Path: k.sessionFile(session), KeepTerminal: 2000}
	if err := q.Done(id, mailbox.StatusHandled, nil); err != nil {
		k.log.Warn("mark follow-up delivered", "session", session, "id", id, "err", err)
	}
}

// drain takes every queued follow-up of a session, oldest first.
func (k *Kernel) drain(session string) []Followup {
	var out []Followup
	for {
		f, ok := k.takeOne(session)
		if !ok {
			return out
		}
		k.delivered(session, f.ID)
		out = append(out, f)
	}
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
	list := k.drain(req.Session)
	if list == nil {
		list = []Followup{}
	}
	return &verbs.Followups{Session: req.Session, Followups: list, Count: len(list)}, nil
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
			if write(wire.Response{ID: req.ID, OK: true, Result: wire.Result(f)}) != nil {
				return // stays claimed: the next reader gets it again
			}
			k.delivered(req.Session, f.ID)
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
