package actors

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/rooms"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

func init() {
	streamOps["watch_room"] = (*Kernel).watchRoom
}

// roomSubscribeLimit bounds the wait for a room actor to take a
// subscription.
const roomSubscribeLimit = 2 * time.Second

// watchRoom streams a room's timeline: after the acknowledgement
// ({"watching":"room:<run>"}), every entry received after since (when
// given) from the files, then each new entry as its room actor sees it,
// each once and in order, until the client goes away. A subscriber the
// room actor dropped (it fell behind, or the actor stopped) catches up
// from the timeline and subscribes again; a compaction that dropped
// entries a watcher asked for is reported as {"missed":true}.
func (k *Kernel) watchRoom(req wire.Request, write func(wire.Response) error, gone <-chan struct{}) {
	fail := func(err error) { write(wire.Response{ID: req.ID, Error: verbs.Classify(err)}) }
	var p verbs.Watch
	if err := json.Unmarshal(req.Params, &p); err != nil {
		fail(invalidErr("watch parameters: %v", err))
		return
	}
	a, err := mailbox.Parse(p.Target)
	if err != nil {
		fail(err)
		return
	}
	if a.Kind != mailbox.KindRoom {
		fail(usageErr("watch_room needs target=room:<run>, got %s", p.Target))
		return
	}
	in, err := runs.Access(k.cfg.AgentDir, a.ID, req.Session)
	if err != nil {
		fail(err)
		return
	}
	dir := string(in.FilesDir()) // an archived run's rooms are in its archive
	var last time.Time
	if p.Since != "" {
		if last, err = time.Parse(time.RFC3339Nano, p.Since); err != nil {
			fail(invalidErr("since must be an RFC 3339 time such as an entry's received_at, got %q", p.Since))
			return
		}
	} else if last, err = rooms.Newest(dir); err != nil {
		// Read before subscribing: should the subscription be dropped
		// before the first entry arrives, the catch-up starts here, not
		// at the start of the timeline.
		fail(err)
		return
	}
	if in.Archived != nil {
		// Nothing new comes to an archived run's room: what since= asks
		// for, then the stream ends (it waited for ever on the tombstone).
		w := &roomWatcher{k: k, req: req, write: write, gone: gone, dir: dir, run: a.ID, last: last}
		if write(wire.Response{ID: req.ID, OK: true, Result: wire.Result(map[string]any{"watching": a.String(), "archived": true})}) != nil {
			return
		}
		if p.Since == "" || w.catchUp() {
			write(wire.Response{ID: req.ID, OK: true, Result: wire.Result(map[string]any{"end": true, "note": "run:" + a.ID + " is archived: nothing more comes to its room"})})
		}
		return
	}
	sub, err := k.subscribeRoom(dir, a.ID)
	if err != nil {
		fail(err)
		return
	}
	w := &roomWatcher{k: k, req: req, write: write, gone: gone, dir: dir, run: a.ID, sub: sub, last: last}
	defer func() { k.unsubscribeRoom(w.sub) }()
	if write(wire.Response{ID: req.ID, OK: true, Result: wire.Result(map[string]any{"watching": a.String()})}) != nil {
		return
	}
	if p.Since != "" && !w.catchUp() {
		return
	}
	w.live()
}

// roomWatcher is one watch_room stream.
type roomWatcher struct {
	k     *Kernel
	req   wire.Request
	write func(wire.Response) error
	gone  <-chan struct{} // the client hung up
	dir   string
	run   string
	sub   *roomSub
	last  time.Time // received_at of the last entry sent
}

// send writes one entry unless it was sent already; false when the
// client went away.
func (w *roomWatcher) send(e rooms.Entry) bool {
	t := e.Time()
	if !t.After(w.last) {
		return true
	}
	b, err := e.MarshalJSON()
	if err != nil {
		return true
	}
	w.last = t
	return w.write(wire.Response{ID: w.req.ID, OK: true, Result: b}) == nil
}

// catchUp sends what the timeline holds after last.
func (w *roomWatcher) catchUp() bool {
	for {
		since := ""
		if !w.last.IsZero() {
			since = w.last.UTC().Format(time.RFC3339Nano)
		}
		res, err := rooms.Since(w.dir, since, 1000)
		if err != nil {
			return w.write(wire.Response{ID: w.req.ID, Error: verbs.Classify(err)}) == nil
		}
		if res.Missed && w.write(wire.Response{ID: w.req.ID, OK: true, Result: wire.Result(map[string]any{"missed": true,
			"note": "a compaction dropped entries after since; the timeline keeps the newest PI_ACTORS_ROOM_MAX_MESSAGES"})}) != nil {
			return false
		}
		for _, e := range res.Entries {
			if !w.send(e) {
				return false
			}
		}
		if !res.More {
			return true
		}
	}
}

// live relays the room actor's entries; a dropped subscription catches
// up from the files and subscribes again.
func (w *roomWatcher) live() {
	tick := time.NewTicker(30 * time.Second)
	defer tick.Stop()
	for {
		select {
		case e, ok := <-w.sub.ch:
			if ok {
				if !w.send(e) {
					return
				}
				continue
			}
			next, err := w.k.subscribeRoom(w.dir, w.run)
			if err != nil {
				w.write(wire.Response{ID: w.req.ID, Error: verbs.Classify(err)})
				return
			}
			w.sub = next
			if !w.catchUp() {
				return
			}
		case <-tick.C:
			if w.write(wire.Response{ID: w.req.ID, OK: true, Result: wire.Result(map[string]any{"keepalive": true})}) != nil {
				return
			}
		case <-w.gone:
			return
		case <-w.k.stopped:
			return
		}
	}
}

// subscribeRoom hands a new subscriber to the room's actor.
func (k *Kernel) subscribeRoom(dir, run string) (*roomSub, error) {
	h := k.rooms()
	for try := 0; try < 2; try++ {
		pid := h.get(dir, run, true)
		if pid == nil {
			break
		}
		sub := newRoomSub()
		sub.actor = pid
		if _, err := k.system.Root.RequestFuture(pid, &roomSubscribe{sub: sub}, roomSubscribeLimit).Result(); err == nil {
			return sub, nil
		}
		// It may still take it late: the unsubscribe, queued behind the
		// subscribe, drops it then.
		k.system.Root.Send(pid, &roomUnsub{sub: sub})
		h.forget(dir, pid) // it died: start another
	}
	return nil, fmt.Errorf("watch room:%s: the room actor did not start", run)
}

// unsubscribeRoom tells the room actor that holds sub to drop it (only
// that actor closes its channel: it is the one that sends on it).
func (k *Kernel) unsubscribeRoom(sub *roomSub) {
	if sub != nil && sub.actor != nil {
		k.system.Root.Send(sub.actor, &roomUnsub{sub: sub})
	}
}
