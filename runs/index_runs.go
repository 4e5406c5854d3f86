package runs

import (
	"sync"
	"time"
)

// liveFiles keeps, in a process that keeps its indexes (KeepIndexes),
// what it decoded of each live run's run.json and progress.json, by the
// files' stamps: a listing stats them and reads and decodes again only
// the ones that changed (run.json once per run; progress.json when the
// supervisor rewrote it). The status is derived again at every listing
// (the supervisor's liveness is never kept). Each caller gets its own
// shallow copy of what is kept: what Meta and Progress point to (maps,
// slices, nested records) is shared and read-only.
type liveFiles struct {
	mu   sync.Mutex
	dirs map[Dir]*keptFiles
}

// keptFiles is what was decoded of one run's files, and from which
// versions of them.
type keptFiles struct {
	metaAt, progressAt fileStamp
	meta               Meta
	progress           *Progress // nil: no progress.json then
}

// reader is the fileReader of one run's directory through the memo.
func (lf *liveFiles) reader(dir Dir) fileReader { return keptReader{lf, dir} }

// prune forgets every run not in keep (no longer live, or gone).
func (lf *liveFiles) prune(keep map[Dir]bool) {
	lf.mu.Lock()
	defer lf.mu.Unlock()
	for d := range lf.dirs {
		if !keep[d] {
			delete(lf.dirs, d)
		}
	}
}

// racyStamp is how old a file's mtime must be for its stamp to be
// trusted (git's "racily clean" rule): a file rewritten twice within one
// tick of a coarse clock, the same size, on an inode a rename just freed,
// would keep the stamp it had.
const racyStamp = 100 * time.Millisecond

// trusted is the stamp kept for a file read after it was stamped at:
// none (read again next time) while its mtime is too recent.
func trusted(at fileStamp) fileStamp {
	if time.Since(at.mod) < racyStamp {
		return fileStamp{}
	}
	return at
}

// kept is the entry of dir, made when missing; lf.mu is held.
func (lf *liveFiles) kept(dir Dir) *keptFiles {
	if lf.dirs == nil {
		lf.dirs = map[Dir]*keptFiles{}
	}
	k := lf.dirs[dir]
	if k == nil {
		k = &keptFiles{}
		lf.dirs[dir] = k
	}
	return k
}

type keptReader struct {
	lf  *liveFiles
	dir Dir
}

// meta is run.json: the kept decoding while the file's stamp is the one
// it was decoded from. The stamp is taken before the read, so a file
// replaced in between is read again at the next listing.
func (r keptReader) meta() (*Meta, error) {
	at := stampOf(r.dir.Path(RunFile))
	r.lf.mu.Lock()
	if k := r.lf.dirs[r.dir]; k != nil && at != (fileStamp{}) && k.metaAt == at {
		m := k.meta
		r.lf.mu.Unlock()
		return &m, nil
	}
	r.lf.mu.Unlock()
	m, err := r.dir.Meta()
	if err != nil {
		return nil, err
	}
	r.lf.mu.Lock()
	k := r.lf.kept(r.dir)
	k.metaAt, k.meta = trusted(at), *m
	r.lf.mu.Unlock()
	return m, nil
}

// progress is progress.json, kept the same way (nil when absent).
func (r keptReader) progress() *Progress {
	at := stampOf(r.dir.Path(ProgressFile))
	r.lf.mu.Lock()
	if k := r.lf.dirs[r.dir]; k != nil && at != (fileStamp{}) && k.progressAt == at {
		var p *Progress
		if k.progress != nil {
			c := *k.progress
			p = &c
		}
		r.lf.mu.Unlock()
		return p
	}
	r.lf.mu.Unlock()
	p := r.dir.Progress()
	r.lf.mu.Lock()
	k := r.lf.kept(r.dir)
	k.progressAt, k.progress = trusted(at), nil
	if p != nil {
		c := *p
		k.progress = &c
	}
	r.lf.mu.Unlock()
	return p
}
