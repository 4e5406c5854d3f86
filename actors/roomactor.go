package actors

import (
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/fsnotify/fsnotify"

	"github.com/pi-actors/pi-actors/rooms"
)

// Room actors: one per live room, under the rooms actor (one-for-one
// restart). A room actor follows its timeline with a rooms.Cursor and
// fans each new entry out to its subscribers (the watch_room streams).
// It learns of new entries from the kernel's own posts (a poke), from
// inotify on the room directory (appends by other processes), and from a
// check every tick (a second) that also catches what those missed. It
// stops after Config.RoomIdle (30 s) without subscribers or posts. The
// files stay
// canonical: a subscriber that falls behind is dropped (its channel
// closed) and catches up from the timeline with rooms.Since.

const (
	roomTick       = time.Second
	roomIdle       = 30 * time.Second // Config.RoomIdle's default
	roomSubBuffer  = 1024             // entries a subscriber may lag before it is dropped
	roomSpawnLimit = 5 * time.Second
)

type (
	roomPoke      struct{}
	roomSubscribe struct{ sub *roomSub }
	roomUnsub     struct{ sub *roomSub }
	roomSpawn     struct{ dir, run string }
	roomSubAck    struct{}
)

// roomSub is one subscriber: entries in order; closed when the room actor
// dropped it (lagged or stopping), after which it catches up from files.
type roomSub struct {
	ch     chan rooms.Entry
	closed atomic.Bool
	actor  *actor.PID // the room actor that holds it
}

func newRoomSub() *roomSub { return &roomSub{ch: make(chan rooms.Entry, roomSubBuffer)} }

func (s *roomSub) close() {
	if s.closed.CompareAndSwap(false, true) {
		close(s.ch)
	}
}

// roomHub finds or starts the room actor of a run's room.
type roomHub struct {
	k      *Kernel
	parent *actor.PID

	every     time.Duration // a room actor's check interval
	idleTicks int           // quiet ticks without subscribers before it stops

	mu    sync.Mutex
	rooms map[string]*roomRef // state dir → actor
	fsw   *fsnotify.Watcher   // nil when inotify is unavailable
}

// live is the number of room actors running.
func (h *roomHub) live() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.rooms)
}

type roomRef struct {
	pid      *actor.PID
	inflight int  // subscriptions sent to the actor and not yet taken
	watched  bool // its room directory is watched
}

// rooms returns the kernel's room hub, starting it on first use.
func (k *Kernel) rooms() *roomHub {
	k.roomsOnce.Do(func() {
		idle := k.cfg.RoomIdle
		if idle <= 0 {
			idle = roomIdle
		}
		tick := min(roomTick, max(idle/3, time.Millisecond))
		h := &roomHub{k: k, rooms: map[string]*roomRef{}, every: tick, idleTicks: int((idle + tick - 1) / tick)}
		h.parent = k.system.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return &roomsActor{h: h} }, actor.WithSupervisor(restartDecider())))
		if w, err := fsnotify.NewWatcher(); err == nil {
			h.fsw = w
			go h.watchFiles()
		} else {
			k.log.Warn("inotify unavailable for rooms; room actors poll every second", "err", err)
		}
		k.roomHub.Store(h)
	})
	return k.roomHub.Load()
}

// liveRooms is the number of room actors running (none before the hub
// started; counting does not start it).
func (k *Kernel) liveRooms() int {
	if h := k.roomHub.Load(); h != nil {
		return h.live()
	}
	return 0
}

// pokeRoom tells the room's actor (started on first use) that its
// timeline grew.
func (k *Kernel) pokeRoom(dir, run string) {
	if pid := k.rooms().get(dir, run, false); pid != nil {
		k.system.Root.Send(pid, roomPoke{})
	}
}

// get returns the room actor of dir, starting it when needed; sub counts
// a subscription on its way (so the actor does not retire meanwhile).
func (h *roomHub) get(dir, run string, sub bool) *actor.PID {
	h.mu.Lock()
	defer h.mu.Unlock()
	ref := h.rooms[dir]
	if ref == nil {
		res, err := h.k.system.Root.RequestFuture(h.parent, &roomSpawn{dir: dir, run: run}, roomSpawnLimit).Result()
		pid, _ := res.(*actor.PID)
		if err != nil || pid == nil {
			h.k.log.Warn("start room actor", "room", "room:"+run, "err", err)
			return nil
		}
		ref = &roomRef{pid: pid}
		h.rooms[dir] = ref
		h.watchLocked(dir, ref)
	}
	if sub {
		ref.inflight++
	}
	return ref.pid
}

// watchLocked adds an inotify watch on the room directory (it may not
// exist yet: the tick retries).
func (h *roomHub) watchLocked(dir string, ref *roomRef) {
	if h.fsw != nil && !ref.watched && h.fsw.Add(rooms.RoomDir(dir)) == nil {
		ref.watched = true
	}
}

// tick is a room actor's periodic check: it retries the directory watch.
func (h *roomHub) tick(dir string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ref := h.rooms[dir]; ref != nil {
		h.watchLocked(dir, ref)
	}
}

// took records that a room actor took a subscription.
func (h *roomHub) took(dir string, pid *actor.PID) {
	h.mu.Lock()
	if ref := h.rooms[dir]; ref != nil && ref.pid.Equal(pid) && ref.inflight > 0 {
		ref.inflight--
	}
	h.mu.Unlock()
}

// retire forgets an idle room actor unless a subscription is on its way;
// true means the actor should stop.
func (h *roomHub) retire(dir string, pid *actor.PID) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	ref := h.rooms[dir]
	if ref == nil || !ref.pid.Equal(pid) {
		return true
	}
	if ref.inflight > 0 {
		return false
	}
	delete(h.rooms, dir)
	if ref.watched && h.fsw != nil {
		h.fsw.Remove(rooms.RoomDir(dir))
	}
	return true
}

// forget drops a room actor that did not answer (it died), so the next
// get starts another.
func (h *roomHub) forget(dir string, pid *actor.PID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ref := h.rooms[dir]; ref != nil && ref.pid.Equal(pid) {
		delete(h.rooms, dir)
		if ref.watched && h.fsw != nil {
			h.fsw.Remove(rooms.RoomDir(dir))
		}
	}
}

// watchFiles pokes the room actor whose timeline changed on disk.
func (h *roomHub) watchFiles() {
	for {
		select {
		case ev, ok := <-h.fsw.Events:
			if !ok {
				return
			}
			if filepath.Base(ev.Name) != rooms.MessagesFile {
				continue
			}
			dir := filepath.Dir(filepath.Dir(filepath.Dir(ev.Name))) // <dir>/rooms/main/messages.jsonl
			h.mu.Lock()
			ref := h.rooms[dir]
			h.mu.Unlock()
			if ref != nil {
				h.k.system.Root.Send(ref.pid, roomPoke{})
			}
		case _, ok := <-h.fsw.Errors:
			if !ok {
				return
			}
		case <-h.k.stopped:
			h.fsw.Close()
			return
		}
	}
}

// roomsActor is the parent of the room actors.
type roomsActor struct{ h *roomHub }

func (a *roomsActor) Receive(ctx actor.Context) {
	if m, ok := ctx.Message().(*roomSpawn); ok {
		props := actor.PropsFromProducer(func() actor.Actor { return &roomActor{h: a.h, dir: m.dir, run: m.run} })
		ctx.Respond(ctx.SpawnPrefix(props, "room:"+m.run+"#"))
	}
}

// roomActor (room:<run>) fans a room's new timeline entries out.
type roomActor struct {
	h       *roomHub
	dir     string
	run     string
	cursor  *rooms.Cursor
	subs    []*roomSub
	idle    int
	start   time.Time
	started bool        // the cursor was tried once
	timer   *time.Timer // the next roomTick
}

// roomTickMsg is a room actor's own periodic tick. It is not protoactor's
// receive timeout: that timer's handler cancels it from the timer's
// goroutine while the actor may be re-arming it (a data race inside the
// engine, seen by -race in TestRoomActorRetires).
type roomTickMsg struct{}

// arm schedules the next tick.
func (a *roomActor) arm(ctx actor.Context) {
	self, root := ctx.Self(), ctx.ActorSystem().Root
	a.timer = time.AfterFunc(a.h.every, func() { root.Send(self, roomTickMsg{}) })
}

func (a *roomActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.start = time.Now()
		a.arm(ctx)
		a.drain()
	case roomPoke:
		a.idle = 0
		a.drain()
	case *roomSubscribe:
		a.drain() // what came before goes to the earlier subscribers only
		a.subs = append(a.subs, m.sub)
		a.h.took(a.dir, ctx.Self())
		ctx.Respond(roomSubAck{})
	case *roomUnsub:
		a.remove(m.sub)
	case roomTickMsg:
		a.arm(ctx)
		a.h.tick(a.dir)
		a.drain()
		if len(a.subs) > 0 {
			a.idle = 0
			return
		}
		if a.idle++; a.idle >= a.h.idleTicks && a.h.retire(a.dir, ctx.Self()) {
			ctx.Stop(ctx.Self())
		}
	case *actor.Stopping, *actor.Restarting:
		if a.timer != nil {
			a.timer.Stop()
		}
		for _, s := range a.subs {
			s.close()
		}
		a.subs = nil
	}
}

// drain reads the entries appended since the last drain and hands each
// to every subscriber; one that cannot keep up is dropped.
func (a *roomActor) drain() {
	if a.cursor == nil {
		// From the end of the timeline at start; a retry (the first try
		// failed) from the start time, so nothing appended since is missed.
		since := ""
		if !a.started {
			a.started = true
		} else {
			since = a.start.UTC().Format(time.RFC3339Nano)
		}
		c, err := rooms.NewCursor(a.dir, since)
		if err != nil {
			return // unreadable: the next tick retries
		}
		a.cursor = c
		if since == "" {
			return
		}
	}
	entries, err := a.cursor.Next()
	if a.cursor.Gap() {
		// Entries the subscribers never got were compacted away: drop
		// them all; each catches up from the files, which says
		// {"missed":true}, and subscribes again.
		for _, s := range a.subs {
			s.close()
		}
		a.subs = nil
		return
	}
	if err != nil || len(entries) == 0 {
		return
	}
	kept := a.subs[:0]
	for _, s := range a.subs {
		ok := !s.closed.Load()
		for _, e := range entries {
			if !ok {
				break
			}
			select {
			case s.ch <- e:
			default:
				ok = false
			}
		}
		if ok {
			kept = append(kept, s)
		} else {
			s.close()
		}
	}
	a.subs = kept
}

func (a *roomActor) remove(sub *roomSub) {
	for i, s := range a.subs {
		if s == sub {
			a.subs = append(a.subs[:i], a.subs[i+1:]...)
			return
		}
	}
}
