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
	meta     keptFile[Meta]
	progress keptFile[Progress]
}

// keptFile is one file's decoding (nil: the file was absent) and the
// stamp it was decoded from (zero: not to be trusted).
type keptFile[T any] struct {
	at fileStamp
	v  *T
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

func (r keptReader) meta() (*Meta, error) {
	return keptRead(r, RunFile, func(k *keptFiles) *keptFile[Meta] { return &k.meta }, r.dir.Meta)
}

func (r keptReader) progress() *Progress {
	p, _ := keptRead(r, ProgressFile, func(k *keptFiles) *keptFile[Progress] { return &k.progress },
		func() (*Progress, error) { return r.dir.Progress(), nil })
	return p
}

// keptRead is a run's file through the memo: the kept decoding while the
// file's stamp is the one it was decoded from, else read (and kept). The
// stamp is taken before the read, so a file replaced in between is read
// again at the next listing. The caller gets its own (shallow) copy.
func keptRead[T any](r keptReader, name string, slot func(*keptFiles) *keptFile[T], read func() (*T, error)) (*T, error) {
	at := stampOf(r.dir.Path(name))
	r.lf.mu.Lock()
	if k := r.lf.dirs[r.dir]; k != nil && at != (fileStamp{}) && slot(k).at == at {
		v := copyOf(slot(k).v)
		r.lf.mu.Unlock()
		return v, nil
	}
	r.lf.mu.Unlock()
	v, err := read()
	if err != nil {
		return nil, err
	}
	r.lf.mu.Lock()
	*slot(r.lf.kept(r.dir)) = keptFile[T]{at: trusted(at), v: copyOf(v)}
	r.lf.mu.Unlock()
	return v, nil
}

// copyOf is a shallow copy of *v, nil for nil.
func copyOf[T any](v *T) *T {
	if v == nil {
		return nil
	}
	c := *v
	return &c
}
