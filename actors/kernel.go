package actors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/pi-actors/pi-actors/internal/config"
	"github.com/pi-actors/pi-actors/internal/dirwatch"
	"github.com/pi-actors/pi-actors/internal/fsutil"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// Config is what a kernel needs to run.
type Config struct {
	AgentDir string
	// Supervisor is the argv prefix that starts a run's supervisor
	// (`pi-actors-supervise`, or `pi-actors supervise`); the state
	// directory is appended.
	Supervisor []string
	// CLI is the pi-actors binary templates get as {pi_actors} ("" =
	// Supervisor[0], for a Supervisor that is `pi-actors supervise`).
	CLI      string
	Version  string
	Settings config.Config
	// KnowledgeIdle is how long an unused knowledge store stays open
	// (0: 5 minutes).
	KnowledgeIdle time.Duration
	// RoomIdle is how long a room actor with no subscribers and no posts
	// stays up (0: 30 seconds); the next post or watch starts another.
	RoomIdle time.Duration
	// OutboxLook is how often every run actor looks at its outbox besides
	// what inotify reports (0: a second).
	OutboxLook time.Duration
	// Cluster is the kernel's cluster side (nil: the single-machine
	// kernel). It is started when Settings has a [cluster] section.
	Cluster Cluster
}

// ErrRunning means another kernel already owns the agent root.
var ErrRunning = errors.New("kernel already running")

// Kernel hosts the actor system of one agent root.
type Kernel struct {
	cfg     Config
	tmp     string
	log     *slog.Logger
	logFile *runs.Log
	system  *actor.ActorSystem
	runs    *actor.PID // parent of every run actor
	sess    *actor.PID // parent of every session actor
	// answering holds the follow-ups answers are being written with
	// (claimHold).
	answering heldAnswers
	exits     *runs.ExitWatcher
	fsw       *dirwatch.Watcher // nil: no inotify (outboxes polled)
	index     *runs.Index
	pool      *runs.Pool // a supervisor waiting for the next run (nil: none)
	started   time.Time
	ln        net.Listener
	stopped   chan struct{}
	stop      sync.Once

	// watchMu orders changes of the run directories' inotify masks.
	watchMu     sync.Mutex
	watchOutput bool         // a runs stream is open: writes of open files are watched
	fileEvents  atomic.Int64 // inotify events on run directories

	mu   sync.Mutex
	live map[string]*liveRun // state dir → live run
	// starting counts, per session, the spawns past their checks whose
	// run is not in live yet (reserveLive): a batch's spawns run
	// concurrently and each must see the others.
	starting map[string]int
	watched  map[string]*actor.PID   // run dir → its run actor
	polled   map[string]bool         // run dirs inotify does not watch (unavailable, or its limit reached): only the poll sees them
	killing  map[runs.Dir]*killState // control.kill applied, result not yet written

	know  knowledgeHub // open knowledge stores (knowledge.go)
	hints hintCache    // graph hints' project roots per store (hints.go)

	cluster Cluster // nil: not clustered (cluster.go)

	settings *liveSettings // pi-actors.toml as read last (settings.go)

	captured  recentSet      // run instances captured into the knowledge graph lately (capture.go)
	captures  sync.WaitGroup // capture spools being applied; waited for before the stores close
	draining  sync.Map       // store path → true: its spool is being applied in the background (capture.go)
	roomsOnce sync.Once
	roomHub   atomic.Pointer[roomHub] // room actors (roomactor.go), started on first use
	runCache  sync.Map                // run id → cachedRun: live runs' access checks (rooms.go)

	captureMu      sync.Mutex // guards capturesClosed and captures.Add against the final Wait
	capturesClosed bool       // the kernel is stopping: no spool starts being applied (capture.go)

	idMu      sync.Mutex
	lastStamp int64 // the last <ms> of a run id stampID handed out

	work atomic.Uint64 // requests (a batch's items each) answered so far: memory.go

	wf workflowGuard // workflows being killed start no node (workflow.go)
	// wfEnd orders a workflow run's end against a control.retry sent as
	// it ends (workflow.go, endOrRetry and retryAtEnd).
	wfEnd workflowEnds

	trace   tracer     // the sessions' causal records (trace.go)
	holds   holds      // sessions whose messages and follow-ups are held (hold.go)
	sessOps sync.Mutex // one suspend or resume at a time (suspend.go)
}

// liveRun is the kernel's view of a run it supervises.
type liveRun struct {
	id    string
	owner string
	dir   runs.Dir
	pid   *actor.PID
}

// Run starts the kernel and serves until ctx ends or a stop request
// arrives. It takes the agent root's kernel lock (ErrRunning if held),
// listens on the unix socket (mode 0600, peer uid checked), rebuilds its
// run actors from the runs index and cleans up stale temp state.
func Run(ctx context.Context, cfg Config) error {
	k := &Kernel{cfg: cfg, tmp: wire.TmpDir(cfg.AgentDir), live: map[string]*liveRun{}, watched: map[string]*actor.PID{}, polled: map[string]bool{}, killing: map[runs.Dir]*killState{},
		stopped: make(chan struct{}), started: time.Now(), index: runs.NewIndex(cfg.AgentDir), settings: newLiveSettings(cfg.AgentDir, cfg.Settings)}
	if cfg.Cluster != nil && cfg.Settings.Cluster.Enabled() {
		// Known before anything runs: follow-ups queued at rebuild for a
		// session on another node go to it (it is started below).
		k.cluster = cfg.Cluster
	}
	if err := os.MkdirAll(k.tmp, 0o700); err != nil {
		return fmt.Errorf("kernel: %w", err)
	}
	unlock, err := fsutil.LockTimeout(filepath.Join(k.tmp, "kernel.lock"), 0)
	if err != nil {
		return fmt.Errorf("%w for %s", ErrRunning, cfg.AgentDir)
	}
	defer unlock()
	if err := k.openLog(); err != nil {
		return err
	}
	defer k.logFile.Close()
	if k.exits, err = runs.NewExitWatcher(); err != nil {
		return err
	}
	defer k.exits.Close()
	if k.fsw, err = dirwatch.New(); err != nil {
		// Not fatal: run actors then re-read outboxes on a timer.
		k.log.Warn("inotify unavailable; outboxes are polled every second", "err", err)
		k.fsw = nil
	} else {
		defer k.fsw.Close()
		go k.watchFiles()
	}
	go k.pollOutboxes()
	k.system = actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return k.log.With("component", "actor") }))
	defer k.system.Shutdown()
	defer k.closeKnowledge()
	defer k.waitCaptures()
	k.runs = k.system.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return &runsActor{k: k} }, actor.WithSupervisor(restartDecider())))
	k.sess = k.system.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return &sessionsActor{k: k} }, actor.WithSupervisor(restartDecider())))
	if err := k.listen(); err != nil {
		return err
	}
	defer k.ln.Close()
	defer os.Remove(filepath.Join(k.tmp, "kernel.json"))
	k.cleanTemp()
	if os.Getenv("PI_ACTORS_SUPERVISOR_POOL") != "0" {
		// One supervisor started ahead of the next spawn (runs.Pool).
		k.pool = runs.NewPool(cfg.Supervisor, 1)
		defer k.pool.Close()
	}
	k.rebuild()
	k.trace.k = k
	defer k.trace.flush()
	k.restoreSessions() // before the first request: a suspended session stays held
	if err := k.writeInfo(); err != nil {
		return err
	}
	k.log.Info("kernel started", "pid", os.Getpid(), "socket", k.ln.Addr().String(), "version", cfg.Version)
	if k.cluster != nil {
		k.cluster.Start(k)
		defer k.cluster.Stop()
	}
	go k.serve()
	go k.retentionLoop()
	go k.autoSuspend()
	go k.idleRelease()
	select {
	case <-ctx.Done():
	case <-k.stopped:
	}
	k.log.Info("kernel stopping")
	return nil
}

// restartDecider keeps one crashing actor from taking others down: a
// panicking actor is restarted (bounded), its siblings are untouched.
func restartDecider() actor.SupervisorStrategy {
	return actor.NewOneForOneStrategy(10, time.Minute, func(reason any) actor.Directive {
		return actor.RestartDirective
	})
}

func (k *Kernel) openLog() error {
	var err error
	k.logFile, err = runs.OpenLog(filepath.Join(k.tmp, "kernel.log"), 4<<20, 2)
	if err != nil {
		return fmt.Errorf("kernel log: %w", err)
	}
	k.log = slog.New(slog.NewTextHandler(k.logFile, &slog.HandlerOptions{Level: slog.LevelInfo})).With("component", "kernel")
	return nil
}

func (k *Kernel) writeInfo() error {
	info := wire.Info{Pid: os.Getpid(), PidStart: runs.StartTime(os.Getpid()), Socket: k.ln.Addr().String(), StartedAt: k.started.UTC(), Version: k.cfg.Version}
	return fsutil.WriteJSON(filepath.Join(k.tmp, "kernel.json"), info, 0o600)
}

// Stop asks the kernel to stop (the stop request).
func (k *Kernel) Stop() { k.stop.Do(func() { close(k.stopped) }) }

// live run bookkeeping, used for limits and lookups.

// addLive counts a run live; slot, when set, is the reservation its
// spawn took (reserveLive), handed over in the same step so the run is
// never counted twice (a concurrent spawn would be refused a slot that
// is free).
func (k *Kernel) addLive(lr *liveRun, slot *liveSlot) {
	k.mu.Lock()
	k.live[string(lr.dir)] = lr
	k.freeSlotLocked(slot)
	k.mu.Unlock()
}

// killState is a control.kill the kernel is applying to one run.
type killState struct {
	tree     chan struct{} // closed once its tree is killed (or found gone)
	recorded chan struct{} // closed once its result is written
	killed   bool          // set before tree closes: the tree was alive and is killed
}

// beginKill records that the kernel is killing the run in dir: the
// caller kills it, closes ks.tree, and calls done once its result is
// written. When a kill of it is under way already, done is nil and ks is
// that kill's.
func (k *Kernel) beginKill(dir runs.Dir) (ks *killState, done func()) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if ks := k.killing[dir]; ks != nil {
		return ks, nil
	}
	ks = &killState{tree: make(chan struct{}), recorded: make(chan struct{})}
	k.killing[dir] = ks
	return ks, func() {
		k.mu.Lock()
		if k.killing[dir] == ks {
			delete(k.killing, dir)
		}
		k.mu.Unlock()
		close(ks.recorded)
	}
}

// awaitKill waits (bounded) until a kill of the run in dir in progress is
// recorded, so the supervisor's exit is not mistaken for a lost run.
func (k *Kernel) awaitKill(dir runs.Dir, limit time.Duration) {
	k.mu.Lock()
	ks := k.killing[dir]
	k.mu.Unlock()
	if ks == nil {
		return
	}
	select {
	case <-ks.recorded:
	case <-time.After(limit):
	}
}

// finishWait bounds how long a restart waits for the actor of a run that
// has just ended to settle it (awaitKill's 10 s, and the rest).
const finishWait = 15 * time.Second

// awaitFinished waits (bounded) until no run actor follows dir: the actor
// of a run that has just ended has read its end and stopped. It reports
// false when one still does at the limit.
func (k *Kernel) awaitFinished(dir runs.Dir, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for {
		k.mu.Lock()
		lr := k.live[string(dir)]
		k.mu.Unlock()
		if lr == nil {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// removeLive forgets a run, unless its state dir now belongs to another
// actor (a reused id).
func (k *Kernel) removeLive(dir runs.Dir, pid *actor.PID) {
	k.mu.Lock()
	if lr, ok := k.live[string(dir)]; ok && lr.pid.Equal(pid) {
		delete(k.live, string(dir))
	}
	k.mu.Unlock()
}

// liveCountLocked counts the session's live runs and those starting;
// k.mu is held.
func (k *Kernel) liveCountLocked(owner string) int {
	n := k.starting[owner]
	for _, lr := range k.live {
		if lr.owner == owner {
			n++
		}
	}
	return n
}

// liveSlot is one of a session's live-run slots held by a spawn whose
// run is not in live yet (reserveLive); k.mu guards it.
type liveSlot struct {
	owner string
	freed bool
}

// reserveLive takes one of the session's live-run slots
// (runs.max_live_per_session) for a run about to start, or refuses with
// liveLimitErr. The slot is given back by addLive once the run is live,
// or by releaseLive if it did not start (releasing twice is harmless).
// The check and the count are one step: the concurrent spawns of a
// batch cannot all pass a check made before any is counted. A nil slot
// (no session) counts nothing.
func (k *Kernel) reserveLive(owner string) (*liveSlot, error) {
	if owner == "" {
		return nil, nil
	}
	limit := k.conf().Runs.MaxLivePerSession
	k.mu.Lock()
	defer k.mu.Unlock()
	if n := k.liveCountLocked(owner); n >= limit {
		return nil, liveLimitErr(owner, n, limit)
	}
	if k.starting == nil {
		k.starting = map[string]int{}
	}
	k.starting[owner]++
	return &liveSlot{owner: owner}, nil
}

// releaseLive gives back a slot whose run did not become live.
func (k *Kernel) releaseLive(slot *liveSlot) {
	k.mu.Lock()
	k.freeSlotLocked(slot)
	k.mu.Unlock()
}

func (k *Kernel) freeSlotLocked(slot *liveSlot) {
	if slot == nil || slot.freed {
		return
	}
	slot.freed = true
	if k.starting[slot.owner]--; k.starting[slot.owner] <= 0 {
		delete(k.starting, slot.owner)
	}
}

// liveLimitErr refuses a spawn: the session has n live runs, limit
// allowed.
func liveLimitErr(owner string, n, limit int) error {
	return &wire.Error{Code: "limit_exceeded", Exit: 75, Message: fmt.Sprintf("session %s already has %d live runs (runs.max_live_per_session)", owner, n),
		Hint: "stop some (message type=control.kill) or raise runs.max_live_per_session"}
}

func (k *Kernel) liveTotal() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.live)
}

// watchFiles routes inotify events on run directories to run actors.
func (k *Kernel) watchFiles() {
	for {
		select {
		case ev, ok := <-k.fsw.Events():
			if !ok {
				return
			}
			k.fileEvents.Add(1)
			k.noteFile(ev.Path) // the runs stream (events.go)
			if filepath.Base(ev.Path) != runs.OutboxFile {
				continue
			}
			k.mu.Lock()
			pid := k.watched[filepath.Dir(ev.Path)]
			k.mu.Unlock()
			if pid != nil {
				k.system.Root.Send(pid, &outboxChanged{})
			}
		case err, ok := <-k.fsw.Errors():
			if !ok {
				return
			}
			k.log.Warn("inotify", "err", err)
			if errors.Is(err, dirwatch.ErrOverflow) {
				// Changes were lost: every run re-reads its outbox, every
				// run a stream shows is reloaded.
				for dir, pid := range k.watchedNow() {
					k.noteDir(dir, changedStatus|changedOutput)
					k.system.Root.Send(pid, &outboxChanged{})
				}
			}
		}
	}
}

// runDirMask is what the kernel watches in a run directory: files written
// and closed or renamed in (outbox and events appends, state files); and
// each write of a file held open (stdout.log, stderr.log) only while a
// runs stream is open, so a run printing thousands of lines a second
// does not wake the kernel for each.
func (k *Kernel) runDirMask() uint32 {
	if k.watchOutput {
		return dirwatch.Modified
	}
	return dirwatch.Written
}

func (k *Kernel) watchDir(dir runs.Dir, pid *actor.PID) {
	watched := k.fsw != nil
	if watched {
		k.watchMu.Lock()
		defer k.watchMu.Unlock()
		if err := k.fsw.Add(string(dir), k.runDirMask()); err != nil {
			k.log.Warn("watch run dir; its outbox is polled", "dir", dir, "err", err)
			watched = false
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.watched[string(dir)] = pid
	if watched {
		delete(k.polled, string(dir)) // an earlier run of the dir's
	} else {
		k.polled[string(dir)] = true
	}
}

// followOutput sets whether the writes of files held open in run
// directories are watched (while a runs stream is open).
func (k *Kernel) followOutput(on bool) {
	if k.fsw == nil {
		return
	}
	k.watchMu.Lock()
	defer k.watchMu.Unlock()
	if k.watchOutput == on {
		return
	}
	k.watchOutput = on
	k.mu.Lock()
	dirs := make([]string, 0, len(k.watched))
	for dir := range k.watched {
		if !k.polled[dir] {
			dirs = append(dirs, dir)
		}
	}
	k.mu.Unlock()
	for _, dir := range dirs {
		// A dir whose run ended meanwhile is no longer there to watch.
		k.fsw.Add(dir, k.runDirMask())
	}
}

// runWatch is how the kernel follows run directories (kernel status).
func (k *Kernel) runWatch() verbs.RunWatch {
	k.mu.Lock()
	defer k.mu.Unlock()
	return verbs.RunWatch{Inotify: len(k.watched) - len(k.polled), Polled: len(k.polled), Events: k.fileEvents.Load()}
}

// watchedNow is a snapshot of the watched run directories.
func (k *Kernel) watchedNow() map[string]*actor.PID {
	k.mu.Lock()
	defer k.mu.Unlock()
	return maps.Clone(k.watched)
}

// pollOutboxes has every run actor look at its outbox each second: all
// of it when inotify is unavailable or a watch could not be added (the
// limit of watches reached), else a backstop for a writer that holds the
// outbox open (inotify reports an outbox written and closed at once; its
// writes to an open file only while a runs stream is open). A look is a
// stat while the outbox is unchanged.
func (k *Kernel) pollOutboxes() {
	every := k.cfg.OutboxLook
	if every <= 0 {
		every = time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-k.stopped:
			return
		case <-t.C:
		}
		for _, p := range k.watchedNow() {
			k.system.Root.Send(p, &outboxChanged{})
		}
	}
}

func (k *Kernel) unwatchDir(dir runs.Dir, pid *actor.PID) {
	k.mu.Lock()
	owner, ok := k.watched[string(dir)]
	mine := ok && owner.Equal(pid)
	if mine {
		delete(k.watched, string(dir))
		delete(k.polled, string(dir))
	}
	k.mu.Unlock()
	if mine && k.fsw != nil {
		k.fsw.Remove(string(dir))
	}
}

// status is the kernel's own status report.
func (k *Kernel) status() map[string]any {
	out := map[string]any{
		"pid": os.Getpid(), "socket": k.ln.Addr().String(), "agent_dir": k.cfg.AgentDir,
		"uptime_ms": time.Since(k.started).Milliseconds(), "started_at": k.started.UTC(),
		"live_runs": k.liveTotal(), "rss_bytes": selfRSS(), "version": k.cfg.Version,
		"room_actors": k.liveRooms(), "run_watch": k.runWatch(),
	}
	if k.settings != nil {
		if err := k.settings.loadError(); err != nil {
			out["config_error"] = err.Error() + " (the kernel goes on with the settings it read before)"
		}
	}
	switch {
	case k.cluster != nil:
		st, _ := k.cluster.View(wire.Request{Op: "cluster", Params: json.RawMessage(`{"view":"status"}`)})
		out["cluster"] = st
	case k.cfg.Settings.Cluster.Enabled():
		out["cluster"] = map[string]any{"state": "down", "error": k.errNotClustered("[cluster]").Error()}
	}
	return out
}

// selfRSS is the kernel's resident set, from /proc/self/stat (runs.Stat:
// the kernel links no process library for one number).
func selfRSS() int64 {
	st, err := runs.Stat(os.Getpid())
	if err != nil {
		return 0
	}
	return int64(st.RSS) * int64(os.Getpagesize())
}
