package actors

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/pi-actors/pi-actors/internal/fsutil"
	"github.com/pi-actors/pi-actors/knowledge"
	"github.com/pi-actors/pi-actors/knowledge/api/graphop"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/graph"
	"github.com/pi-actors/pi-actors/knowledge/store"
)

// Graph hints: a run's terminal follow-up carries the knowledge graph
// spec's advance hint when the run's cwd lies under a project that has
// atoms, in the project store found from cwd or the personal store. The
// answer needs only the roots of a store's projects with atoms, so the
// kernel keeps them per store (in memory and in
// <agent>/tmp/pi-actors/hints/<hash>.json), stamped with the store's files
// (size, modification time and inode of the database, and of its WAL when
// that holds anything): while the stamp holds, a run's end opens no store
// — SQLite and the store's code cost a kernel about 4 MiB it does not give
// back. A store written since (by this kernel or any other process) is
// opened once to read its roots again.

// hintRootsMax bounds the roots kept per store; a store with more is
// asked each time.
const hintRootsMax = 10000

// hintCache is the roots of projects with atoms per store path.
type hintCache struct {
	mu     sync.Mutex
	stores map[string]*hintEntry
}

// put keeps e for the store at abs in memory.
func (h *hintCache) put(abs string, e *hintEntry) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stores == nil {
		h.stores = map[string]*hintEntry{}
	}
	h.stores[abs] = e
}

// hintEntry is what the kernel knows of one store's projects with atoms.
type hintEntry struct {
	Store string     `json:"store"` // the store's path
	Stamp storeStamp `json:"stamp"`
	Roots []string   `json:"roots"`
	// Unreadable: the store did not open or answer at this stamp (damaged,
	// foreign, newer): not tried again until its files change. Kept in
	// memory only; the next kernel tries once.
	Unreadable bool `json:"-"`
}

// storeStamp tells whether a store changed: its database file and its WAL
// (the zero fileStamp when the WAL is missing or empty: a checkpoint
// empties it without changing what the store holds).
type storeStamp struct {
	DB  fileStamp `json:"db"`
	WAL fileStamp `json:"wal"`
}

// stampStore stamps the store at abs; ok is false when it does not exist.
func stampStore(abs string) (st storeStamp, ok bool) {
	if st.DB = stampOf(abs); st.DB.Size == 0 {
		return storeStamp{}, false
	}
	if st.WAL = stampOf(abs + "-wal"); st.WAL.Size == 0 {
		st.WAL = fileStamp{}
	}
	return st, true
}

// graphHints is the advance hint for a run that ended in cwd, or nil.
func (k *Kernel) graphHints(cwd string) *graphop.GraphHints {
	if cwd == "" || !filepath.IsAbs(cwd) {
		return nil
	}
	stores := [][2]string{{store.PersonalPath(k.cfg.AgentDir), op.StorePersonal}}
	if p := store.FindProject(cwd); p != "" {
		stores = append([][2]string{{p, op.StoreProject}}, stores...)
	}
	for _, s := range stores {
		if roots, ok := k.hintRoots(s[0], s[1]); ok && graph.UnderRoot(cwd, roots) {
			return graph.AdvanceHints()
		}
	}
	return nil
}

// hintRoots returns the roots of the projects with atoms of the store at
// path (layer), from what the kernel keeps while the store's stamp holds;
// ok is false when the store does not exist or cannot be read.
func (k *Kernel) hintRoots(path, layer string) ([]string, bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, false
	}
	stamp, ok := stampStore(abs)
	if !ok {
		return nil, false
	}
	h := &k.hints
	h.mu.Lock()
	e := h.stores[abs]
	h.mu.Unlock()
	if e == nil {
		if e = k.loadHints(abs); e != nil {
			h.put(abs, e)
		}
	}
	if e != nil && e.Stamp == stamp {
		return e.Roots, !e.Unreadable
	}
	unreadable := func(err error) ([]string, bool) {
		k.log.Warn("graph hints: knowledge store unreadable; tried again once it changes", "store", abs, "err", err)
		h.put(abs, &hintEntry{Store: abs, Stamp: stamp, Unreadable: true})
		return nil, false
	}
	o, err := k.acquireStore(abs, layer, true)
	if err != nil {
		return unreadable(err)
	}
	if o == nil {
		return nil, false
	}
	defer k.releaseStore(o)
	// Stamped once open (opening checkpoints the WAL) and before the read:
	// a write after the stamp changes it, so what is kept is never newer
	// than its stamp says.
	if stamp, ok = stampStore(abs); !ok {
		return nil, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	roots, more, err := o.st.Graph().AtomRoots(ctx, hintRootsMax)
	if err != nil {
		return unreadable(err)
	}
	if !more {
		k.keepHints(abs, &hintEntry{Store: abs, Stamp: stamp, Roots: roots})
	}
	return roots, true
}

// closeStore closes st, keeping the roots of its projects with atoms as
// they are when it closes, stamped after: closing checkpoints the WAL into
// the database, which changes its stamp without changing what it holds,
// and the next kernel should not open the store again for that. (A write
// by another process between the read and the close would go unseen until
// the store's next change; a hint is advice.)
func (k *Kernel) closeStore(st *knowledge.Store) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	roots, more, err := st.Graph().AtomRoots(ctx, hintRootsMax)
	cancel()
	st.Close()
	if err != nil || more {
		return
	}
	if stamp, ok := stampStore(st.Path()); ok {
		k.keepHints(st.Path(), &hintEntry{Store: st.Path(), Stamp: stamp, Roots: roots})
	}
}

// hintsPath is where the kernel keeps the hint roots of the store at abs.
func (k *Kernel) hintsPath(abs string) string { return k.storeFile(abs, hintsKind, ".json") }

// loadHints reads the kept roots of the store at abs, or nil.
func (k *Kernel) loadHints(abs string) *hintEntry {
	b, err := os.ReadFile(k.hintsPath(abs))
	if err != nil {
		return nil
	}
	var e hintEntry
	if json.Unmarshal(b, &e) != nil {
		return nil
	}
	return &e
}

// keepHints keeps e for the store at abs, in memory and on disk (a
// snapshot: losing it costs one store open).
func (k *Kernel) keepHints(abs string, e *hintEntry) {
	k.hints.put(abs, e)
	b, err := json.Marshal(e)
	if err != nil {
		return
	}
	p := k.hintsPath(abs)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		k.log.Warn("graph hints: keep the store's project roots", "store", abs, "err", err)
		return
	}
	if err := fsutil.WriteSnapshot(p, b, 0o600); err != nil {
		k.log.Warn("graph hints: keep the store's project roots", "store", abs, "err", err)
	}
}

// pruneHints removes the kept roots of stores that are gone (a project
// deleted with its store), and files that are not an entry.
func (k *Kernel) pruneHints() int {
	dir := filepath.Dir(k.hintsPath("/"))
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var h hintEntry
		if json.Unmarshal(b, &h) == nil && h.Store != "" {
			if _, err := os.Lstat(h.Store); !errors.Is(err, fs.ErrNotExist) {
				continue
			}
		}
		if os.Remove(p) == nil {
			n++
		}
	}
	return n
}
