package actors

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// The runs stream (kernel operation "events", read by `pi-actors top`):
// a first frame with every live run and the newest ended ones, then, at
// most once per interval, the runs that changed. The kernel learns of
// changes without polling run directories: inotify tells which run's
// files changed (status files or output), the live-run table tells which
// runs started or ended, and one pass over /proc per usage period gives
// every run's CPU and RSS (a supervisor leads its own session; its leaves
// stay in it). While no stream is open, none of this runs.

func init() {
	streamOps["events"] = (*Kernel).streamEvents
}

// Change kinds noted for a run directory.
const (
	changedStatus uint8 = 1 << iota
	changedOutput
)

// eventsHub follows the runs for every open stream of one kernel.
type eventsHub struct {
	k      *Kernel
	active atomic.Bool // a stream is open: file changes are noted

	mu    sync.Mutex
	subs  map[*eventsSub]struct{}
	dirty map[string]uint8 // state dir → changes since the last tick
	stop  chan struct{}    // closed when the last stream closes

	// Owned by the tick (and a snapshot, under tickMu).
	tickMu      sync.Mutex
	rows        map[string]verbs.RunRow // state dir → the row streams have
	live        map[string]int          // live state dir → supervisor pid
	usage       *usageSampler
	lastUse     map[int]sessionUse // the last sample, by session
	lastSample  time.Time
	lastStalled time.Time
	indexStamp  [2]int64 // size, mtime of the runs index at the last look
	lastIndex   time.Time
}

// eventsSub is one open stream: what is pending for it, merged so a slow
// reader gets the latest state of each run, never a backlog.
type eventsSub struct {
	mu       sync.Mutex
	pending  map[string]verbs.RunRow
	gone     map[string]bool
	kernel   *verbs.KernelFigures
	wake     chan struct{}
	ended    int
	interval time.Duration
	usage    time.Duration
}

var (
	hubsMu sync.Mutex
	hubs   = map[*Kernel]*eventsHub{}
)

// hub returns the kernel's events hub (created on first use).
func (k *Kernel) hub() *eventsHub {
	hubsMu.Lock()
	defer hubsMu.Unlock()
	h := hubs[k]
	if h == nil {
		h = &eventsHub{k: k, subs: map[*eventsSub]struct{}{}, dirty: map[string]uint8{}}
		hubs[k] = h
	}
	return h
}

// noteFile records that a file of a run directory changed (called for
// every inotify event on the watched run dirs; free while no stream is
// open).
func (k *Kernel) noteFile(name string) {
	var what uint8
	switch filepath.Base(name) {
	case runs.ProgressFile, runs.ResultFile, runs.RunFile, runs.TombstoneFile, runs.EventsFile:
		what = changedStatus
	case runs.StdoutLog, runs.StderrLog:
		what = changedOutput
	default:
		return
	}
	k.noteDir(filepath.Dir(name), what)
}

// noteDir records changes of a run directory for the open streams.
func (k *Kernel) noteDir(dir string, what uint8) {
	hubsMu.Lock()
	h := hubs[k]
	hubsMu.Unlock()
	if h == nil || !h.active.Load() {
		return
	}
	h.mu.Lock()
	h.dirty[dir] |= what
	h.mu.Unlock()
}

// streamEvents serves one runs stream until the client goes away.
func (k *Kernel) streamEvents(req wire.Request, write func(wire.Response) error, gone <-chan struct{}) {
	var p verbs.Events
	if len(req.Params) > 0 {
		if err := json.Unmarshal(req.Params, &p); err != nil {
			write(wire.Response{ID: req.ID, Error: verbs.Invalidf("events parameters: %v", err)})
			return
		}
	}
	sub := &eventsSub{pending: map[string]verbs.RunRow{}, gone: map[string]bool{}, wake: make(chan struct{}, 1)}
	sub.ended, sub.interval, sub.usage = p.Settings()
	h := k.hub()
	h.subscribe(sub)
	defer h.unsubscribe(sub)
	first := &verbs.EventsFrame{Snapshot: true, Runs: h.snapshot(sub.ended), Kernel: h.kernelFigures(), TS: time.Now().UTC()}
	if write(wire.Response{ID: req.ID, OK: true, Result: wire.Result(first)}) != nil {
		return
	}
	keepalive := time.NewTicker(30 * time.Second)
	defer keepalive.Stop()
	for {
		select {
		case <-sub.wake:
			if f := sub.take(); f != nil {
				if write(wire.Response{ID: req.ID, OK: true, Result: wire.Result(f)}) != nil {
					return
				}
			}
		case <-keepalive.C:
			if write(wire.Response{ID: req.ID, OK: true, Result: wire.Result(map[string]any{"keepalive": true})}) != nil {
				return
			}
		case <-gone:
			return // a closed top stops the /proc sampling at once
		case <-k.stopped:
			return
		}
	}
}

// take empties the stream's pending changes into a frame (nil: none).
func (s *eventsSub) take() *verbs.EventsFrame {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pending) == 0 && len(s.gone) == 0 && s.kernel == nil {
		return nil
	}
	f := &verbs.EventsFrame{Kernel: s.kernel, TS: time.Now().UTC()}
	for _, r := range s.pending {
		f.Runs = append(f.Runs, r)
	}
	for d := range s.gone {
		f.Gone = append(f.Gone, d)
	}
	clear(s.pending)
	clear(s.gone)
	s.kernel = nil
	return f
}

func (h *eventsHub) subscribe(s *eventsSub) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.subs[s] = struct{}{}
	if len(h.subs) == 1 {
		h.stop = make(chan struct{})
		h.active.Store(true)
		h.k.followOutput(true)
		go h.loop(h.stop)
	}
}

func (h *eventsHub) unsubscribe(s *eventsSub) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, s)
	if len(h.subs) == 0 {
		h.active.Store(false)
		h.k.followOutput(false)
		close(h.stop)
		clear(h.dirty)
	}
}

// settings are the shortest interval and usage period any stream asked
// for.
func (h *eventsHub) settings() (interval, usage time.Duration, n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	interval, usage = verbs.DefaultEventsInterval, verbs.DefaultEventsUsage
	first := true
	for s := range h.subs {
		if first || s.interval < interval {
			interval = s.interval
		}
		if first || s.usage < usage {
			usage = s.usage
		}
		first = false
	}
	return interval, usage, len(h.subs)
}

// loop ticks while a stream is open.
func (h *eventsHub) loop(stop chan struct{}) {
	defer h.k.recoverPanic("events", nil)
	interval, _, _ := h.settings()
	t := time.NewTimer(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			h.tickMu.Lock()
			h.rows, h.live, h.usage, h.lastUse = nil, nil, nil, nil
			h.tickMu.Unlock()
			return
		case <-h.k.stopped:
			return
		case <-t.C:
		}
		h.tick()
		interval, _, _ = h.settings()
		t.Reset(interval)
	}
}

func init() {
	extraOps["followups_peek"] = func(k *Kernel, req wire.Request) (any, error) {
		return k.peekFollowups(req)
	}
}

// peekFollowups lists the newest records of the calling session's
// follow-up queue without claiming or delivering any (top shows them; the
// agent still gets each).
func (k *Kernel) peekFollowups(req wire.Request) (any, error) {
	if req.Session == "" {
		return nil, &wire.Error{Code: "no_session", Exit: 64, Message: "follow-ups belong to a coordinator session: set PI_ACTORS_SESSION or pass session=<id>"}
	}
	var p struct {
		Lines int `json:"lines"`
	}
	if len(req.Params) > 0 {
		json.Unmarshal(req.Params, &p)
	}
	if p.Lines <= 0 || p.Lines > 500 {
		p.Lines = 50
	}
	path := k.sessionFile(req.Session)
	recs, corrupted, err := mailbox.NewInbox(path).List(p.Lines)
	if err != nil {
		return nil, fmt.Errorf("follow-ups of session %s: %w", req.Session, err)
	}
	out := []verbs.QueuedFollowup{}
	for _, rec := range recs {
		var f verbs.Followup
		if decodeRecord(rec["body"], &f) != nil {
			continue
		}
		f.ID = rec.ID()
		out = append(out, verbs.QueuedFollowup{Status: rec.Status(), Followup: f})
	}
	res := map[string]any{"session": req.Session, "followups": out}
	if corrupted > 0 {
		// Malformed lines stay in the file, never delivered: say so, and where.
		res["corrupted"], res["file"] = corrupted, path
	}
	return res, nil
}
