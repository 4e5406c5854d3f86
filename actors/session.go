package actors

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sync"
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
	// drainedSession: a watcher emptied its channel; the backlog the
	// channel had no room for comes now.
	drainedSession struct{ session string }
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
	case *drainedSession:
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
	// backlog: the watcher's channel was full when follow-ups may still
	// have been queued; its drainedSession brings them.
	backlog bool
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
	case *drainedSession:
		if a.backlog {
			a.backlog = false
			a.deliver()
		}
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
			a.backlog = true
			return
		}
		list, _ := a.k.take(a.id, room)
		if len(list) == 0 {
			return
		}
		for _, f := range list {
			c <- f
		}
	}
}

// take claims up to max of a session's follow-ups that are not yet
// delivered (see claimFollowups); cluster_host.go hands them to another
// node the same way.
func (k *Kernel) take(session string, max int) (out []Followup, more int) {
	t := k.claimFollowups(session, max, claimDurable)
	return t.list, t.more
}

// How claimFollowups takes what it hands out.
type claimMode int

const (
	// claimDurable marks them claimed in the file; the caller marks them
	// delivered once handed over, or requeues them (watch, the cluster).
	claimDurable claimMode = iota
	// claimHold leaves the file as it is and holds their ids in memory
	// (Kernel.answering) while one answer carrying them is written; settleAnswer
	// then marks them delivered in one pass, or lets them go. A kernel
	// that dies meanwhile leaves them queued.
	claimHold
)

// taken is what one pass of a session's queue took.
type taken struct {
	list      []Followup
	more      int // queued past max (counted in the same pass)
	corrupted int // malformed lines: kept in the file, never delivered
	err       error
}

// heldAnswers are the follow-ups answers are being written with
// (claimHold), by queue file: no other reader takes them meanwhile. The
// zero value is empty and ready; each kernel has its own.
type heldAnswers struct {
	mu  sync.Mutex
	ids map[string]map[string]bool
}

// now copies the ids answers to path are being written with (nil: none,
// the common case).
func (h *heldAnswers) now(path string) map[string]bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.ids[path]) == 0 {
		return nil
	}
	out := make(map[string]bool, len(h.ids[path]))
	for id := range h.ids[path] {
		out[id] = true
	}
	return out
}

// hold records ids as held by an answer to the queue at path.
func (h *heldAnswers) hold(path string, ids []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ids == nil {
		h.ids = map[string]map[string]bool{}
	}
	m := h.ids[path]
	if m == nil {
		m = map[string]bool{}
		h.ids[path] = m
	}
	for _, id := range ids {
		m[id] = true
	}
}

// release lets go of ids an answer to the queue at path held.
func (h *heldAnswers) release(path string, ids []string) {
	if len(ids) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	m := h.ids[path]
	for _, id := range ids {
		delete(m, id)
	}
	if len(m) == 0 {
		delete(h.ids, path)
	}
}

// settleWait bounds how long a view=followups waits for another answer's
// follow-ups to be settled before it answers without them: a reader whose
// stdout failed lets go of them when its kernel connection closes, a
// moment after the process is gone, and the next reader (started right
// after) would get none.
const settleWait = 250 * time.Millisecond

// awaitSettled waits, up to d, until no answer to the queue at path holds
// follow-ups.
func (h *heldAnswers) awaitSettled(path string, d time.Duration) {
	for deadline := time.Now().Add(d); h.now(path) != nil && time.Now().Before(deadline); {
		time.Sleep(2 * time.Millisecond)
	}
}

// claimFollowups takes up to max of a session's follow-ups that are not
// yet delivered (queued, or claimed by a delivery that never finished — a
// watcher that went away, a kernel that died), oldest first, in one locked
// pass of the queue, as mode says: a follow-up counts as delivered only
// once it was handed over (at least once, never silently lost). A claim
// made by another kernel (one that died: only one serves an agent root)
// is taken over at once. Malformed lines are counted and kept as they
// are.
func (k *Kernel) claimFollowups(session string, max int, mode claimMode) (t taken) {
	path := k.sessionFile(session)
	var bad []string
	now := time.Now().UTC()
	stamp := now.Format(time.RFC3339Nano)
	me := k.claimer()
	var held []string // ids recorded in k.answering by the pass
	t.err = mailbox.RewriteLazy(path, func(lines []mailbox.Line) ([]mailbox.Line, error) {
		t = taken{}
		bad = bad[:0]
		var hold []string
		// Under the file's lock: an answer holds ids only once its pass
		// ran under it, so none is missed here.
		busy := k.answering.now(path)
		changed := false
		for i := range lines {
			l := &lines[i]
			st, ok := l.Peek("status")
			if !ok {
				// Not certain from a peek (escapes, a torn or garbled line):
				// decode it.
				if l.Decode(); l.Err != nil {
					t.corrupted++
					continue
				}
				st = mailbox.Record(l.Value).Status()
			}
			if len(t.list) >= max {
				if st == mailbox.StatusQueued {
					t.more++
				}
				continue
			}
			if busy != nil {
				if id, _ := l.Peek("id"); busy[id] {
					continue // in an answer being written
				}
			}
			switch st {
			case mailbox.StatusQueued:
			case mailbox.StatusClaimed:
				by, _ := l.Peek("claimed_by")
				at, _ := l.Peek("claimed_at")
				c, err := time.Parse(time.RFC3339Nano, at)
				if by == me && err == nil && now.Sub(c) < redeliverAfter {
					continue // being delivered by this kernel
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
				if l.Decode(); l.Err != nil {
					// Not JSON at all (a peek does not validate the line):
					// kept, counted, never handed out.
					t.corrupted++
					continue
				}
				bad = append(bad, rec.ID) // an object, but not a follow-up
				status = mailbox.StatusFailed
			} else {
				rec.Body.ID = rec.ID
				t.list = append(t.list, rec.Body)
				if mode == claimHold {
					hold = append(hold, rec.ID)
					continue
				}
				skipDecode(l)
			}
			kv := []any{"claimed_at", stamp, "claimed_by", me, "status", status}
			if status != mailbox.StatusClaimed {
				kv = append(kv, status+"_at", stamp)
			}
			if err := l.SetAll(kv...); err != nil {
				return nil, err
			}
			changed = true
		}
		if changed && len(bad) > 0 {
			lines = mailbox.CompactTerminal(lines, keepDelivered)
		}
		if len(hold) > 0 {
			// Still under the file's lock: no other pass sees them free.
			k.answering.hold(path, hold)
			held = append(held, hold...)
		}
		return lines, nil
	})
	if t.err != nil {
		// The pass did not land (a full disk): what it held is free again.
		k.answering.release(path, held)
		k.log.Warn("claim follow-ups", "session", session, "err", t.err)
		t.list, t.more = nil, 0
		return t
	}
	if len(bad) > 0 {
		k.log.Warn("malformed follow-ups marked failed", "session", session, "ids", bad)
	}
	if t.corrupted > 0 && corruptionNews(path, t.corrupted) {
		k.log.Warn("malformed lines in a follow-up queue (kept, not delivered)", "session", session, "file", path, "corrupted", t.corrupted)
	}
	return t
}

// corruptedSeen is how many malformed lines were last logged per queue:
// one warning when the count changes, not one per pass.
var corruptedSeen sync.Map

func corruptionNews(path string, n int) bool {
	old, _ := corruptedSeen.Swap(path, n)
	return old != n
}

// settleAnswer ends what claimHold took: with ok (the answer was
// written) they are marked delivered in one pass first; either way they
// are let go.
func (k *Kernel) settleAnswer(session string, ids []string, ok bool) {
	if len(ids) == 0 {
		return
	}
	if ok {
		k.markDelivered(session, ids, true)
	}
	k.answering.release(k.sessionFile(session), ids)
	if !ok {
		k.requeued(session) // held, not delivered: queued for a watcher again
	}
}

// claimer is what this kernel writes as claimed_by: a claim by any other
// value was made by a kernel that is gone (one kernel serves an agent
// root), so it is taken over at once rather than after redeliverAfter.
func (k *Kernel) claimer() string {
	return fmt.Sprintf("kernel.%d.%d", os.Getpid(), k.started.UnixNano())
}

// keepDelivered is how many delivered follow-ups a session's queue keeps
// (the newest): the file stays small.
const keepDelivered = 2000

// redeliverAfter is how long a claimed follow-up may wait for its
// delivery to finish before another reader takes it over.
const redeliverAfter = 30 * time.Second

// delivered marks claimed follow-ups handed over, in one locked pass.
func (k *Kernel) delivered(session string, ids ...string) { k.markDelivered(session, ids, false) }

// markDelivered marks follow-ups handed over in one locked pass (as
// mailbox's DoneMany, without decoding every line it marks): claimed ones,
// and with queued (claimHold took them without a mark) queued ones too.
func (k *Kernel) markDelivered(session string, ids []string, queued bool) {
	if len(ids) == 0 {
		return
	}
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	stamp := time.Now().UTC().Format(time.RFC3339Nano)
	err := mailbox.RewriteLazy(k.sessionFile(session), func(lines []mailbox.Line) ([]mailbox.Line, error) {
		done := 0
		for i := range lines {
			l := &lines[i]
			if id, _ := l.Peek("id"); !want[id] {
				continue
			}
			if st, _ := l.Peek("status"); st != mailbox.StatusClaimed && (!queued || st != mailbox.StatusQueued) {
				continue // taken over by another reader, or done already
			}
			skipDecode(l)
			if err := l.SetAll(mailbox.StatusHandled+"_at", stamp, "status", mailbox.StatusHandled); err != nil {
				return nil, err
			}
			done++
		}
		if done > 0 {
			lines = mailbox.CompactTerminal(lines, keepDelivered)
		}
		return lines, nil
	})
	if err != nil {
		k.log.Warn("mark follow-ups delivered", "session", session, "ids", len(ids), "err", err)
	}
}

// skipDecode spares SetAll decoding a lazy line into a map before it sets
// fields (the costly part of a pass over a long queue): SetAll parses the
// line as an object itself, refusing a malformed one, and the fields it
// sets are all a rewrite then reads of Value (the status, to compact).
func skipDecode(l *mailbox.Line) {
	if l.Value == nil && l.Err == nil {
		l.Value = map[string]any{}
	}
}

// requeue gives claimed follow-ups that were not handed over back to the
// queue, in place (order holds), in one locked pass: the next reader gets
// them at once.
func (k *Kernel) requeue(session string, ids ...string) {
	if len(ids) == 0 {
		return
	}
	if err := mailbox.NewInbox(k.sessionFile(session)).Requeue(ids); err != nil {
		k.log.Warn("requeue follow-ups", "session", session, "ids", len(ids), "err", err)
	}
	k.requeued(session)
}

// requeued wakes the session's watchers for follow-ups that went back to
// the queue: a watcher already connected gets them now, not only the
// next one to connect.
func (k *Kernel) requeued(session string) {
	if k.system != nil {
		k.queued(session)
	}
}

// drain takes every queued follow-up of a session, oldest first, as
// view=followups does: one locked pass reads them, one marks them
// delivered (however many there are).
func (k *Kernel) drain(session string) []Followup {
	t := k.claimFollowups(session, math.MaxInt, claimHold)
	k.settleAnswer(session, ids(t.list), true)
	return t.list
}

func ids(list []Followup) []string {
	out := make([]string, len(list))
	for i := range list {
		out[i] = list[i].ID
	}
	return out
}

func decodeRecord(rec any, v any) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func init() {
	// view=followups is answered as a stream of one response: its handler
	// learns whether the answer was written, so a follow-up counts as
	// delivered only once it was (server.go's plain answers give no word
	// of the write).
	streamOps["followups"] = func(k *Kernel, req wire.Request, write func(wire.Response) error, gone <-chan struct{}) {
		k.answerFollowups(req, write, gone, nil)
	}
}

// ackWait bounds how long an answer's follow-ups wait for the client's
// acknowledgement (wire.Request.Ack) while it stays connected; then they
// go back to the queue (delivered twice rather than lost).
var ackWait = 30 * time.Second

// followupsAnswer is the answer of view=followups: the verb layer's
// Followups and, when the queue holds malformed lines, how many and where.
type followupsAnswer struct {
	*verbs.Followups
	Corrupted int    `json:"corrupted,omitempty"`
	File      string `json:"file,omitempty"`
}

// claimAnswer takes what `inspect target=coordinator view=followups`
// shows (the calling session's queue, up to params.max) with claimHold:
// the caller settles them once it knows whether the answer was written.
func (k *Kernel) claimAnswer(req wire.Request) (*followupsAnswer, error) {
	if req.Session == "" {
		return nil, &wire.Error{Code: "no_session", Exit: 64, Message: "followups need a coordinator session: set PI_ACTORS_SESSION or pass session=<id>"}
	}
	if k.held(req.Session) {
		return &followupsAnswer{Followups: &verbs.Followups{Session: req.Session, Followups: []Followup{}, Held: true}}, nil
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
	k.answering.awaitSettled(k.sessionFile(req.Session), settleWait)
	t := k.claimFollowups(req.Session, max, claimHold)
	if t.err != nil {
		return nil, fmt.Errorf("followups of session %s: %w", req.Session, t.err)
	}
	list := t.list
	if list == nil {
		list = []Followup{}
	}
	a := &followupsAnswer{Followups: &verbs.Followups{Session: req.Session, Followups: list, Count: len(list), More: t.more}}
	if t.corrupted > 0 {
		a.Corrupted, a.File = t.corrupted, k.sessionFile(req.Session)
	}
	return a, nil
}

// answerFollowups answers view=followups on a client's connection: what
// it took is marked delivered only once the answer was written and, for
// a client that acknowledges (acks not nil), once it said it printed
// them; otherwise (the client went away first, or never acknowledged
// within ackWait) they stay queued for the next reader.
func (k *Kernel) answerFollowups(req wire.Request, write func(wire.Response) error, gone <-chan struct{}, acks <-chan []string) {
	k.work.Add(1)
	resp := wire.Response{ID: req.ID}
	var taken []string
	written := false
	defer func() { k.settleAnswer(req.Session, taken, written) }()
	func() {
		defer k.recoverPanic(req.Op, &resp)
		a, err := k.claimAnswer(req)
		if err != nil {
			resp = wire.Response{ID: req.ID, Error: verbs.Classify(err)}
			return
		}
		taken = ids(a.Followups.Followups)
		resp = wire.Response{ID: req.ID, OK: true, Result: wire.Result(a)}
	}()
	written = write(resp) == nil
	if written && acks != nil && len(taken) > 0 {
		written = k.awaitAck(acks, gone)
	}
}

// awaitAck waits for a client's acknowledgement of an answer's
// follow-ups: false when it hangs up first, the wait runs out or the
// kernel stops.
func (k *Kernel) awaitAck(acks <-chan []string, gone <-chan struct{}) bool {
	t := time.NewTimer(ackWait)
	defer t.Stop()
	select {
	case <-acks:
		return true
	case <-gone:
		return len(moreAcks(acks, nil)) > 0 // acknowledged just before it hung up
	case <-t.C:
		return false
	case <-k.stopped:
		return false
	}
}

// followups answers view=followups where no connection tells whether the
// answer arrives (a request handed to dispatch): what it takes counts as
// delivered at once. Clients on the socket go through answerFollowups.
func (k *Kernel) followups(req wire.Request) (*followupsAnswer, error) {
	a, err := k.claimAnswer(req)
	if err == nil {
		k.settleAnswer(req.Session, ids(a.Followups.Followups), true)
	}
	return a, err
}

// watch streams the session's follow-ups as they are queued, until the
// client goes away. Each is marked delivered once it was written or, for
// a client that acknowledges (acks not nil), once it said it passed it
// on; what the watcher was handed but never wrote, or never
// acknowledged, goes back to the queue.
func (k *Kernel) watch(req wire.Request, write func(wire.Response) error, gone <-chan struct{}, acks <-chan []string) {
	if req.Session == "" {
		write(wire.Response{ID: req.ID, Error: &wire.Error{Code: "no_session", Exit: 64, Message: "watch needs a coordinator session: set PI_ACTORS_SESSION or pass session=<id>"}})
		return
	}
	ch := make(chan Followup, 256)
	k.system.Root.Send(k.sess, &subscribe{session: req.Session, ch: ch})
	var unwritten []string
	// pending: written, not yet acknowledged (acks), and since when; one
	// not acknowledged within ackWait goes back to the queue while the
	// watcher stays (delivered twice rather than held for ever).
	pending := map[string]time.Time{}
	// acked marks what the client acknowledged delivered, in one pass.
	acked := func(ids []string) {
		var known []string
		for _, id := range ids {
			if _, ok := pending[id]; ok {
				delete(pending, id)
				known = append(known, id)
			}
		}
		k.delivered(req.Session, known...)
	}
	defer func() {
		acked(moreAcks(acks, nil)) // acknowledged before it hung up
		for id := range pending {
			unwritten = append(unwritten, id)
		}
		k.endWatch(req.Session, ch, unwritten)
	}()
	// delivered marks what was written delivered, or waiting for its
	// acknowledgement.
	delivered := func(ids ...string) {
		if acks == nil {
			k.delivered(req.Session, ids...)
			return
		}
		now := time.Now()
		for _, id := range ids {
			pending[id] = now
		}
	}
	if write(wire.Response{ID: req.ID, OK: true, Result: wire.Result(map[string]any{"watching": req.Session})}) != nil {
		return
	}
	tick := time.NewTicker(30 * time.Second)
	defer tick.Stop()
	expire := time.NewTicker(ackWait / 6)
	defer expire.Stop()
	for {
		select {
		case now := <-expire.C:
			var late []string
			for id, at := range pending {
				if now.Sub(at) >= ackWait {
					delete(pending, id)
					late = append(late, id)
				}
			}
			k.requeue(req.Session, late...)
		case f, ok := <-ch:
			if !ok {
				return
			}
			// A burst is written whole, then marked delivered in one pass;
			// what was not written goes back to the queue.
			var ids []string
			for ok {
				if write(wire.Response{ID: req.ID, OK: true, Result: wire.Result(f)}) != nil {
					delivered(ids...)
					unwritten = append(unwritten, f.ID)
					return
				}
				ids = append(ids, f.ID)
				select {
				case f, ok = <-ch:
				default:
					ok = false
				}
			}
			delivered(ids...)
			// Its channel is empty: the backlog it had no room for, if any.
			k.system.Root.Send(k.sess, &drainedSession{session: req.Session})
		case ids := <-acks:
			acked(moreAcks(acks, ids))
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

// endWatch unsubscribes a watcher and gives back to the queue what it was
// handed but never wrote: unwritten, and what is still in its channel
// (the session actor closes it on the unsubscribe; a stopping kernel
// leaves them claimed, and the next kernel takes them over).
func (k *Kernel) endWatch(session string, ch chan Followup, unwritten []string) {
	k.system.Root.Send(k.sess, &unsubscribe{session: session, ch: ch})
	timeout := time.NewTimer(5 * time.Second)
	defer timeout.Stop()
	for done := false; !done; {
		select {
		case f, ok := <-ch:
			if !ok {
				done = true
				break
			}
			unwritten = append(unwritten, f.ID)
		case <-k.stopped:
			return
		case <-timeout.C:
			done = true
		}
	}
	k.requeue(session, unwritten...)
}
