package actors

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/pi-actors/pi-actors/knowledge"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/store"
	"github.com/pi-actors/pi-actors/knowledge/vector"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// The knowledge actors: one per open store (the personal store
// <agent>/knowledge/knowledge.db, and each project store
// <repo>/.pi/knowledge.db a caller's cwd leads to). A store is opened on
// first use, its actor runs the store's writes one at a time (reads go
// straight to the store's read pool), and an idle store is stopped and
// closed after Config.KnowledgeIdle (5 minutes). Only the kernel opens stores.

// defaultKnowledgeIdle is how long an unused store stays open unless
// Config.KnowledgeIdle says otherwise.
const defaultKnowledgeIdle = 5 * time.Minute

func (k *Kernel) knowledgeIdle() time.Duration {
	if k.cfg.KnowledgeIdle > 0 {
		return k.cfg.KnowledgeIdle
	}
	return defaultKnowledgeIdle
}

// knowledgeTimeout bounds one knowledge operation (a write waits for
// another process's lock up to the store's busy timeout; a batch of
// thousands of creates takes a second or two).
const knowledgeTimeout = 2 * time.Minute

// knowledgeHub is the kernel's set of open stores.
type knowledgeHub struct {
	mu      sync.Mutex
	stores  map[string]*openStore // by absolute path
	janitor sync.Once
	closed  bool
	quit    chan struct{}  // closed by closeKnowledge: the janitor ends
	closing sync.WaitGroup // idle stores the janitor is closing
}

// openStore is one open store and its actor. users counts the operations
// holding it; an idle store (no users for knowledgeIdle) is stopped.
type openStore struct {
	path, layer string
	st          *knowledge.Store
	pid         *actor.PID
	users       int
	last        time.Time
}

// storeActor owns one open store: it applies the store's writes one at a
// time, and closes the store when it stops.
type storeActor struct {
	st    *knowledge.Store
	close func(*knowledge.Store) // closes st (Kernel.closeStore)
}

// storeJob is work for a store actor; the reply is a *storeReply.
type storeJob struct {
	fn func(*knowledge.Store) (any, error)
}

type storeReply struct {
	v   any
	err error
}

func (a *storeActor) Receive(c actor.Context) {
	switch m := c.Message().(type) {
	case *storeJob:
		c.Respond(a.run(m))
	case *actor.Stopped:
		a.close(a.st)
	}
}

// run applies a job; a panic is an error of that job, never a restart.
func (a *storeActor) run(j *storeJob) (r *storeReply) {
	defer func() {
		if p := recover(); p != nil {
			r = &storeReply{err: fmt.Errorf("knowledge store %s: internal error: %v", a.st.Path(), p)}
		}
	}()
	v, err := j.fn(a.st)
	return &storeReply{v: v, err: err}
}

// acquireStore returns the open store at path (opening it and starting its
// actor on first use), held until releaseStore. With mustExist, a missing
// file is (nil, nil) rather than a new store.
func (k *Kernel) acquireStore(path, layer string, mustExist bool) (*openStore, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("knowledge store %s: %w", path, err)
	}
	h := &k.know
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, fmt.Errorf("knowledge store %s: %w: the kernel is stopping", abs, wire.ErrUnavailable)
	}
	h.janitor.Do(func() {
		h.quit = make(chan struct{})
		go k.knowledgeJanitor(h.quit)
	})
	if o := h.stores[abs]; o != nil {
		o.users++
		return o, nil
	}
	if mustExist {
		if fi, err := os.Stat(abs); err != nil || !fi.Mode().IsRegular() {
			return nil, nil
		}
	}
	st, err := k.openStore(abs, layer)
	if err != nil {
		return nil, err
	}
	o := &openStore{path: abs, layer: layer, st: st, users: 1, last: time.Now()}
	o.pid = k.system.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return &storeActor{st: st, close: k.closeStore} }))
	if h.stores == nil {
		h.stores = map[string]*openStore{}
	}
	h.stores[abs] = o
	k.log.Info("knowledge store opened", "path", abs, "layer", layer)
	return o, nil
}

// openStore opens the store at abs, with the configured embedder.
func (k *Kernel) openStore(abs, layer string) (*knowledge.Store, error) {
	opts := knowledge.Options{Layer: layer, RunExists: k.runExists}
	emb, err := vector.NewEmbedder(k.cfg.Settings.Knowledge.Embedder)
	if err != nil {
		return nil, err
	}
	opts.Embedder = emb
	st, err := knowledge.Open(abs, opts)
	if err != nil {
		return nil, storeOpenError(err)
	}
	return st, nil
}

// releaseStore ends one use of o.
func (k *Kernel) releaseStore(o *openStore) {
	if o == nil {
		return
	}
	k.know.mu.Lock()
	o.users--
	o.last = time.Now()
	k.know.mu.Unlock()
}

// storeDo runs fn in o's actor (writes are serialised there).
func (k *Kernel) storeDo(o *openStore, fn func(*knowledge.Store) (any, error)) (any, error) {
	res, err := k.system.Root.RequestFuture(o.pid, &storeJob{fn: fn}, knowledgeTimeout).Result()
	if err != nil {
		return nil, fmt.Errorf("knowledge store %s: %w", o.path, err)
	}
	r, ok := res.(*storeReply)
	if !ok {
		return nil, fmt.Errorf("knowledge store %s: unexpected reply %T", o.path, res)
	}
	return r.v, r.err
}

// knowledgeJanitor stops the actors of idle stores (closing the stores)
// until quit is closed.
func (k *Kernel) knowledgeJanitor(quit <-chan struct{}) {
	after := k.knowledgeIdle()
	t := time.NewTicker(max(after/4, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-quit:
			return
		case <-t.C:
		}
		var idle []*openStore
		k.know.mu.Lock()
		for p, o := range k.know.stores {
			if o.users == 0 && time.Since(o.last) >= after {
				delete(k.know.stores, p)
				idle = append(idle, o)
			}
		}
		// (Under the lock: closeKnowledge, which takes it, waits for them.)
		k.know.closing.Add(len(idle))
		k.know.mu.Unlock()
		for _, o := range idle {
			// Logged once the store is closed (its actor stopped).
			if err := k.system.Root.StopFuture(o.pid).Wait(); err != nil {
				k.log.Warn("close idle knowledge store", "path", o.path, "err", err)
			} else {
				k.log.Info("knowledge store closed (idle)", "path", o.path)
			}
			k.know.closing.Done()
		}
	}
}

// closeKnowledge stops every store actor and waits until each store is
// closed (kernel shutdown).
func (k *Kernel) closeKnowledge() {
	k.know.mu.Lock()
	all := k.know.stores
	k.know.stores, k.know.closed = nil, true
	if k.know.quit != nil {
		close(k.know.quit)
	}
	k.know.mu.Unlock()
	for _, o := range all {
		if err := k.system.Root.StopFuture(o.pid).Wait(); err != nil {
			k.log.Warn("stop knowledge store", "path", o.path, "err", err)
		}
	}
	// And those the janitor took out of the set to close.
	k.know.closing.Wait()
}

// openStores lists the open stores, by path.
func (k *Kernel) openStores() []verbs.KnowledgeOpenStore {
	k.know.mu.Lock()
	defer k.know.mu.Unlock()
	out := []verbs.KnowledgeOpenStore{}
	for _, o := range k.know.stores {
		idle := int64(0)
		if o.users == 0 {
			idle = time.Since(o.last).Milliseconds()
		}
		out = append(out, verbs.KnowledgeOpenStore{Path: o.path, Layer: o.layer, Actor: o.pid.Id, Users: o.users, IdleMS: idle})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// runExists is the stores' RunExists: run:<id> task ids must name a run.
func (k *Kernel) runExists(id string) (bool, error) {
	if err := runs.ValidID(id); err != nil {
		return false, err
	}
	_, err := runs.Resolve(k.cfg.AgentDir, id)
	return err == nil, nil
}

// storeOpenError explains a store that cannot be opened (a foreign or
// damaged file, a newer schema: the file is left untouched).
func storeOpenError(err error) error {
	code, hint := "", "the file was not modified; move it away (knowledge init, or the next use of the personal store, creates a new one)"
	switch {
	case errors.Is(err, store.ErrNotStore):
		code = "not_a_store"
	case errors.Is(err, store.ErrCorrupt):
		code = "store_damaged"
	case errors.Is(err, store.ErrForeign):
		return &verbs.Error{Exit: verbs.ExitNoPerm, Code: "store_not_yours", Message: err.Error(),
			Hint: "the file was not modified; another user could read or change what it holds"}
	case errors.Is(err, store.ErrTooNew):
		// A newer pi-actors wrote it: it holds knowledge, keep it.
		code, hint = "store_too_new", "the file was not modified; a newer pi-actors migrated it: use that version (pi-actors version names this one)"
	default:
		return err
	}
	return &verbs.Error{Exit: verbs.ExitDataErr, Code: code, Message: err.Error(), Hint: hint}
}

// lease is the stores one operation uses (the caller's layers), held
// until release.
type lease struct {
	lay      knowledge.Layers
	project  *openStore
	personal *openStore
}

func (l *lease) release(k *Kernel) {
	k.releaseStore(l.project)
	k.releaseStore(l.personal)
}

// empty reports that no store is open for the caller.
func (l *lease) empty() bool { return l.project == nil && l.personal == nil }

// leaseFor opens the caller's stores: the project store found from cwd
// (unless choice is personal) and the personal store (unless choice is
// project; created on first use when create is set, or when captures wait
// for it). The captures spooled for each are applied first (capture.go).
func (k *Kernel) leaseFor(cwd, choice string, create bool) (*lease, error) {
	l := &lease{}
	if choice != op.StorePersonal {
		if p := store.FindProject(cwd); p != "" {
			o, err := k.acquireStore(p, op.StoreProject, false)
			if err != nil {
				return nil, err
			}
			l.project, l.lay.Project = o, o.st
		}
	}
	if choice != op.StoreProject {
		personal := store.PersonalPath(k.cfg.AgentDir)
		if abs, err := filepath.Abs(personal); err == nil && k.spoolWaiting(abs) {
			create = true
		}
		o, err := k.acquireStore(personal, op.StorePersonal, !create)
		if err != nil {
			l.release(k)
			return nil, err
		}
		if o != nil {
			l.personal, l.lay.Personal = o, o.st
		}
	}
	for _, o := range l.targets() {
		k.drainSpool(o)
	}
	return l, nil
}

// targets are the lease's stores a write may go to, in order.
func (l *lease) targets() []*openStore {
	var out []*openStore
	for _, o := range []*openStore{l.project, l.personal} {
		if o != nil {
			out = append(out, o)
		}
	}
	return out
}

// single is the layers of one store (in its own slot).
func single(o *openStore) *knowledge.Layers {
	if o.layer == op.StoreProject {
		return &knowledge.Layers{Project: o.st}
	}
	return &knowledge.Layers{Personal: o.st}
}
