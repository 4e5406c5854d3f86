package swarm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs"
)

// locker is a lease-based task queue and resource lock served from its
// run's own inbox.
type locker struct {
	*actor
	lease time.Duration
	st    *lockerState
	seq   int
}

// Locker serves its run's inbox until control.stop, control.cancel or
// ctx ends. Parameter: lease_ms (600000): how long a claimed task or an
// acquired resource is held before another owner may take it over.
func Locker(ctx context.Context, env *verbs.Env, o Options) error {
	if err := o.check("locker", "lease_ms"); err != nil {
		return err
	}
	a, err := newActor(env)
	if err != nil {
		return err
	}
	ms, err := o.int("lease_ms", 600000)
	if err != nil {
		return err
	}
	if ms < 1 {
		return usagef("lease_ms must be at least 1 (got %d)", ms)
	}
	l := &locker{actor: a, lease: time.Duration(ms) * time.Millisecond}
	if l.st, err = loadState(a.dir); err != nil {
		return err
	}
	if err := l.st.save(); err != nil {
		return err
	}
	l.journal(map[string]any{"event": "lock.started", "lease_ms": ms})
	fw := watcher(string(a.dir))
	if fw != nil {
		defer fw.Close()
	}
	for ctx.Err() == nil {
		if err := l.sweep(); err != nil {
			return err
		}
		if err := l.serve(); err != nil {
			return err
		}
		rec, err := verbs.ClaimRunMessage(a.dir, a.self)
		if err != nil {
			return fmt.Errorf("locker: %w", err)
		}
		if rec == nil {
			if l.parentEnded() {
				l.journal(map[string]any{"event": "lock.stopped", "reason": "parent_ended"})
				return nil // the swarm that started it is gone (killed)
			}
			waitChange(ctx, fw, min(l.idle(), time.Second))
			continue
		}
		stop, err := l.handle(rec)
		if err != nil {
			return err
		}
		if stop {
			return nil
		}
	}
	l.journal(map[string]any{"event": "lock.stopped", "reason": "cancelled"})
	return nil
}

// idle is how long the loop sleeps when its inbox is empty: a second,
// or less when a waiter's wait ends sooner.
func (l *locker) idle() time.Duration {
	d := time.Second
	if end := l.st.nextWaitEnd(); !end.IsZero() {
		d = min(d, max(end.Sub(l.clock()), time.Millisecond))
	}
	return d
}

// sweep takes back expired leases and locks, and tells each waiter whose
// wait is over that nothing came (lock.empty).
func (l *locker) sweep() error {
	now := l.clock()
	changes := l.st.expire(now)
	over := l.st.waitOver(now)
	if len(changes) == 0 && len(over) == 0 {
		return nil
	}
	if err := l.st.save(); err != nil {
		return err
	}
	for _, c := range changes {
		l.journal(c)
	}
	for _, w := range over {
		l.journal(map[string]any{"event": "lock.wait_over", "owner": w.Owner, "message_id": w.MessageID})
		l.answer(w.ReplyTo, w.MessageID, "lock.empty", l.empty(w.Owner))
	}
	return nil
}

// serve hands free tasks to the waiters, first come first served; a
// waiter whose run has ended is dropped instead (its task would sit
// leased to no one until the lease ran out).
func (l *locker) serve() error {
	for i := 0; i < len(l.st.q.Waiting) && len(l.st.q.Items) > 0; {
		w := l.st.q.Waiting[i]
		if !l.alive(w.From) {
			l.st.q.Waiting = slices.Delete(l.st.q.Waiting, i, i+1)
			if err := l.st.save(); err != nil {
				return err
			}
			l.journal(map[string]any{"event": "lock.wait_gone", "owner": w.Owner, "from": w.From, "message_id": w.MessageID})
			continue
		}
		lease := l.lease
		if w.LeaseMS > 0 {
			lease = time.Duration(w.LeaseMS) * time.Millisecond
		}
		ls := l.st.claim(w.Owner, lease, l.clock())
		if ls == nil {
			i++
			continue
		}
		l.st.q.Waiting = slices.Delete(l.st.q.Waiting, i, i+1)
		if err := l.assigned(w.ReplyTo, w.MessageID, w.Owner, ls, lease); err != nil {
			return err
		}
	}
	return nil
}

// alive reports whether a claiming run may still take a task: false
// only for a run that is gone or has ended.
func (l *locker) alive(from string) bool {
	a, err := mailbox.Parse(from)
	if err != nil || a.Kind != mailbox.KindRun {
		return true
	}
	in, err := runs.Access(l.env.AgentDir, a.ID, l.env.Session)
	if err != nil {
		return !errors.Is(err, runs.ErrNotFound)
	}
	return !runs.Terminal(in.Status)
}

// handle applies one message; true means stop.
func (l *locker) handle(rec mailbox.Record) (bool, error) {
	typ := rec.Type()
	op := typ
	for _, p := range []string{"lock.", "coord."} {
		op = strings.TrimPrefix(op, p)
	}
	b, _ := rec["body"].(map[string]any)
	if b == nil {
		b = map[string]any{}
		if s, ok := rec["body"].(string); ok && op == "enqueue" {
			b["task"] = s
		}
	}
	var err error
	switch {
	case typ == "control.stop" || typ == "control.cancel":
		l.journal(map[string]any{"event": "lock.stopped", "reason": typ})
		l.outbox("lock.stopped", "locker stopped ("+typ+")", mailbox.LevelInfo, nil)
		return true, l.done(rec, mailbox.StatusHandled, nil)
	case op == "enqueue":
		err = l.enqueue(rec, b)
	case op == "claim":
		err = l.claim(rec, b)
	case op == "complete" || op == "fail":
		err = l.complete(rec, b, op == "fail")
	case op == "acquire" || op == "renew" || op == "release":
		err = l.resource(rec, b, op)
	case op == "status":
		err = l.reply(rec, "lock.status", l.snapshot())
	default:
		l.journal(map[string]any{"event": "lock.unknown", "type": typ, "id": rec.ID()})
		l.outbox("lock.unknown", "locker: unknown message type "+typ, mailbox.LevelWarning, map[string]any{"type": typ})
		return false, l.done(rec, mailbox.StatusFailed, map[string]any{"error": "the locker does not handle " + typ})
	}
	if err != nil {
		l.journal(map[string]any{"event": "lock.error", "type": typ, "error": err.Error()})
		return false, l.done(rec, mailbox.StatusFailed, map[string]any{"error": err.Error()})
	}
	return false, l.done(rec, mailbox.StatusHandled, nil)
}

// enqueue adds a task (a caller-chosen id is enqueued once).
func (l *locker) enqueue(rec mailbox.Record, b map[string]any) error {
	id, _ := b["id"].(string)
	if id == "" {
		l.seq++
		id = fmt.Sprintf("task-%d-%d", l.clock().UnixMilli(), l.seq)
	}
	if where := l.st.known(id); where != "" {
		return l.reply(rec, "lock.enqueued", map[string]any{"id": id, "duplicate": true, "state": where})
	}
	task := b["task"]
	if task == nil {
		task = b
	}
	it := Item{ID: id, Task: task, Resources: strs(b["resources"]), EnqueuedAt: stamp(l.clock())}
	l.st.q.Items = append(l.st.q.Items, it)
	if err := l.st.save(); err != nil {
		return err
	}
	l.journal(map[string]any{"event": "lock.enqueued", "id": id, "resources": it.Resources})
	return l.reply(rec, "lock.enqueued", map[string]any{"id": id, "queued": len(l.st.q.Items)})
}

// claim leases the next free task to the owner (body.owner, else the
// reply address, else from) for body.lease_ms (else the locker's lease).
func (l *locker) claim(rec mailbox.Record, b map[string]any) error {
	owner := ownerOf(rec, b)
	if owner == "" {
		return fmt.Errorf("lock.claim needs body.owner (or reply_to/from)")
	}
	wait, err := waitOf(b)
	if err != nil {
		return err
	}
	lease := l.st.claim(owner, l.leaseOf(b), l.clock())
	if lease != nil {
		l.st.unwait(owner) // its earlier claim, if it waits, is answered by this one
		return l.assigned(replyAddress(rec), rec.ID(), owner, lease, l.leaseOf(b))
	}
	to := replyAddress(rec)
	if wait <= 0 || to == "" {
		return l.reply(rec, "lock.empty", l.empty(owner))
	}
	// Nothing now: the claim waits (on disk, so a restarted locker keeps
	// it) and is answered by the first task that becomes free, or by
	// lock.empty when its wait is over.
	now := l.clock()
	from, _ := rec["from"].(string)
	w := Waiter{Owner: owner, ReplyTo: to, From: from, MessageID: rec.ID(), Since: stamp(now), Until: stamp(now.Add(wait))}
	if ms := l.leaseOf(b); ms != l.lease {
		w.LeaseMS = ms.Milliseconds()
	}
	l.st.wait(w)
	if err := l.st.save(); err != nil {
		return err
	}
	l.journal(map[string]any{"event": "lock.waiting", "owner": owner, "until": w.Until, "message_id": w.MessageID})
	return nil
}

// assigned saves a new lease and tells its owner (lock.assigned).
func (l *locker) assigned(to, corr, owner string, lease *Lease, d time.Duration) error {
	if err := l.st.save(); err != nil {
		return err
	}
	l.journal(map[string]any{"event": "lock.assigned", "id": lease.ID, "owner": owner, "expires_at": lease.ExpiresAt})
	l.answer(to, corr, "lock.assigned", map[string]any{"id": lease.ID, "task": lease.Task, "resources": lease.Resources,
		"owner": owner, "lease_ms": d.Milliseconds(), "expires_at": lease.ExpiresAt, "attempts": lease.Attempts, "locker": l.self})
	return nil
}

// empty is the body of lock.empty.
func (l *locker) empty(owner string) map[string]any {
	return map[string]any{"queued": len(l.st.q.Items), "leased": len(l.st.q.Leased), "owner": owner}
}

// waitOf is body.wait_ms: how long a claim that finds nothing waits for
// a task (0: it is answered lock.empty at once).
func waitOf(b map[string]any) (time.Duration, error) {
	v, given := b["wait_ms"]
	if !given || v == nil {
		return 0, nil
	}
	n, ok := msOf(v)
	if !ok {
		return 0, fmt.Errorf("lock.claim body.wait_ms must be a number of milliseconds (got %v)", v)
	}
	if n < 0 || n > float64(maxWait.Milliseconds()) {
		return 0, fmt.Errorf("lock.claim body.wait_ms must be 0 to %d (got %v)", maxWait.Milliseconds(), n)
	}
	return time.Duration(n) * time.Millisecond, nil
}

// maxWait bounds body.wait_ms.
const maxWait = time.Hour

// complete ends a lease as completed or failed; a lease that was taken
// over (it expired and went to another owner) is denied.
func (l *locker) complete(rec mailbox.Record, b map[string]any, failed bool) error {
	id, _ := b["id"].(string)
	lease := l.st.q.Leased[id]
	owner, _ := b["owner"].(string)
	switch {
	case id == "":
		return fmt.Errorf("%s needs body.id", rec.Type())
	case lease == nil && (l.st.q.Completed[id] != "" || l.st.q.Failed[id] != ""):
		return l.reply(rec, "lock.denied", map[string]any{"id": id, "reason": "already finished"})
	case lease == nil:
		return l.reply(rec, "lock.denied", map[string]any{"id": id, "reason": "not leased"})
	case owner != "" && owner != lease.Owner:
		return l.reply(rec, "lock.denied", map[string]any{"id": id, "reason": "leased to " + lease.Owner})
	}
	why, _ := b["error"].(string)
	if failed && why == "" {
		why = "failed"
	}
	retry, _ := b["retry"].(bool)
	l.st.finish(lease, failed, why, retry)
	if err := l.st.save(); err != nil {
		return err
	}
	event, level, typ := "lock.complete", mailbox.LevelInfo, "lock.completed"
	if failed {
		event, level, typ = "lock.fail", mailbox.LevelError, "lock.failed"
	}
	l.journal(map[string]any{"event": event, "id": id, "owner": lease.Owner, "error": why, "retry": retry})
	l.outbox(event, fmt.Sprintf("%s %s by %s", event, id, lease.Owner), level, map[string]any{"id": id, "owner": lease.Owner})
	return l.reply(rec, typ, map[string]any{"id": id, "completed": len(l.st.q.Completed), "failed": len(l.st.q.Failed), "queued": len(l.st.q.Items)})
}

// resource handles acquire, renew and release of a named resource (renew
// also extends a task lease: body.id).
func (l *locker) resource(rec mailbox.Record, b map[string]any, op string) error {
	owner := ownerOf(rec, b)
	res, _ := b["resource"].(string)
	now := l.clock()
	until := stamp(now.Add(l.leaseOf(b)))
	if id, _ := b["id"].(string); op == "renew" && res == "" && id != "" {
		lease := l.st.q.Leased[id]
		if lease == nil || lease.Owner != owner {
			return l.reply(rec, "lock.denied", map[string]any{"id": id, "reason": "not leased to " + owner})
		}
		lease.ExpiresAt = until
		for _, lk := range l.st.locks {
			if lk.Task == id {
				lk.ExpiresAt = until
			}
		}
		return l.changed(rec, "lock.renewed", map[string]any{"id": id, "owner": owner, "expires_at": until})
	}
	if res == "" {
		return fmt.Errorf("lock.%s needs body.resource", op)
	}
	cur := l.st.locks[res]
	held := cur != nil && !past(cur.ExpiresAt, now)
	mine := held && cur.Owner == owner
	switch {
	case op == "acquire" && (!held || mine):
		l.st.locks[res] = &Lock{Owner: owner, ExpiresAt: until}
		return l.changed(rec, "lock.granted", map[string]any{"resource": res, "owner": owner, "expires_at": until})
	case op == "renew" && mine:
		cur.ExpiresAt = until
		return l.changed(rec, "lock.renewed", map[string]any{"resource": res, "owner": owner, "expires_at": until})
	case op == "release" && (mine || !held):
		delete(l.st.locks, res)
		return l.changed(rec, "lock.released", map[string]any{"resource": res, "owner": owner})
	}
	deny := map[string]any{"resource": res, "owner": owner, "reason": "not held by " + owner}
	if held {
		deny["holder"], deny["expires_at"] = cur.Owner, cur.ExpiresAt
	}
	l.journal(map[string]any{"event": "lock.denied", "resource": res, "owner": owner, "op": op})
	return l.reply(rec, "lock.denied", deny)
}

// changed saves, journals and answers a state change.
func (l *locker) changed(rec mailbox.Record, typ string, b map[string]any) error {
	if err := l.st.save(); err != nil {
		return err
	}
	j := map[string]any{"event": typ}
	for k, v := range b {
		j[k] = v
	}
	l.journal(j)
	return l.reply(rec, typ, b)
}

// leaseOf is body.lease_ms, else the locker's lease.
func (l *locker) leaseOf(b map[string]any) time.Duration {
	if n, _ := msOf(b["lease_ms"]); n > 0 {
		return time.Duration(n) * time.Millisecond
	}
	return l.lease
}

// msOf reads a body's number of milliseconds (a JSON number, decoded
// either way); ok is false for anything else.
func msOf(v any) (n float64, ok bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case json.Number:
		n, err := x.Float64()
		return n, err == nil
	}
	return 0, false
}

// snapshot is the lock.status answer.
func (l *locker) snapshot() map[string]any {
	ids := make([]string, 0, len(l.st.q.Items))
	for _, it := range l.st.q.Items {
		ids = append(ids, it.ID)
	}
	return map[string]any{"queue_depth": len(ids), "queue": ids, "leased": l.st.q.Leased, "locks": l.st.locks,
		"completed": len(l.st.q.Completed), "failed": len(l.st.q.Failed)}
}

// reply answers a message at its reply_to (else its from) — the
// coordinator (its session's follow-ups) included; a message with
// neither, or with an address no message can go to, is answered in the
// journal only (lock.unanswered, with the answer). A branch or room
// recipient is sent no from (it would have to be of that run).
func (l *locker) reply(rec mailbox.Record, typ string, b map[string]any) error {
	return l.answer(replyAddress(rec), rec.ID(), typ, b)
}

// replyAddress is a message's reply_to, else its from.
func replyAddress(rec mailbox.Record) string {
	to, _ := rec["reply_to"].(string)
	if to == "" {
		to, _ = rec["from"].(string)
	}
	return to
}

// answer sends typ to the address to, as the answer to the message corr
// (see reply).
func (l *locker) answer(to, corr, typ string, b map[string]any) error {
	a, err := mailbox.Parse(to)
	if to == "" || err != nil || a.String() == l.self {
		why := "it came from the locker itself"
		switch {
		case to == "":
			why = "the message has no reply_to or from"
		case err != nil:
			why = "reply_to/from " + to + " is no address: " + err.Error()
		}
		l.journal(map[string]any{"event": "lock.unanswered", "type": typ, "message_id": corr, "why": why, "answer": b})
		return nil
	}
	m := &verbs.Message{To: a.String(), Type: typ, From: l.self, ReplyTo: verbs.Text(l.self), CorrelationID: verbs.Text(corr), Body: body(b)}
	if a.Kind == mailbox.KindBranch || a.Kind == mailbox.KindRoom {
		m.From = ""
	}
	if _, err := l.send(m); err != nil {
		l.journal(map[string]any{"event": "lock.error", "type": typ, "to": to, "error": err.Error()})
	}
	return nil
}

// done finishes an inbox message.
// lockerKeep is how many handled messages the locker's inbox keeps: every
// claim is one, and each Done rewrote an ever longer file (an idle
// worker's claims grew it ~6 KB a minute, for ever).
var lockerKeep = 1000

func (l *locker) done(rec mailbox.Record, status string, meta map[string]any) error {
	box := &mailbox.Inbox{Path: l.dir.Path("inbox.jsonl"), KeepTerminal: lockerKeep}
	if err := box.Done(rec.ID(), status, meta); err != nil {
		return fmt.Errorf("locker: %w", err)
	}
	return nil
}

func (l *locker) journal(fields map[string]any) { l.event(JournalFile, fields) }

// outbox records an event for the run's owner (delivery log: seen with
// inspect view=messages).
func (l *locker) outbox(event, summary, level string, data map[string]any) {
	rec := mailbox.OutboxRecord{Event: event, Summary: summary, Level: level, From: l.self, To: "coordinator", Delivery: mailbox.DeliveryLog, Data: data}
	mailbox.AppendOutbox(l.dir.Path("outbox.jsonl"), rec)
}

// ownerOf is who claims or holds: body.owner, else reply_to, else from.
func ownerOf(rec mailbox.Record, b map[string]any) string {
	for _, v := range []any{b["owner"], rec["reply_to"], rec["from"]} {
		if s, _ := v.(string); strings.TrimSpace(s) != "" {
			return strings.TrimSpace(s)
		}
	}
	return ""
}

// strs reads a list of strings (a single string is a list of one).
func strs(v any) []string {
	switch x := v.(type) {
	case string:
		if x != "" {
			return []string{x}
		}
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok && s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
