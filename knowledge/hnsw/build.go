package hnsw

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// AddBatch inserts len(ids) vectors, stored back to back in vecs (vector i
// at vecs[i*dim:(i+1)*dim]), using up to workers goroutines (workers <= 0 →
// GOMAXPROCS). Everything is validated first: on an error (wrong length,
// NaN/Inf, an id live in the index or repeated in the batch) nothing is
// added. Searches wait until the batch is in. The slabs grow exactly once,
// to the size the batch needs.
func (x *Index) AddBatch(ids []uint64, vecs []float32, workers int) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.checkBatch(ids, vecs); err != nil {
		return err
	}
	n := len(ids)
	if n == 0 {
		return nil
	}
	x.reserve(n, false)
	levels := make([]int, n)
	upper := 0
	for i := range levels {
		levels[i] = x.randomLevel()
		upper += levels[i] * x.strideUpper
	}
	x.upper = grow(x.upper, len(x.upper)+upper)
	x.table.reserve(x.table.n+n, x.ids)
	live := len(x.ids) - x.nDead
	empty := live == 0
	first := uint32(len(x.ids))
	for i, id := range ids {
		x.appendSlot(id, vecs[i*x.dim:(i+1)*x.dim], levels[i])
	}
	end := uint32(len(x.ids))
	if empty {
		x.entry = -1 // any old entry is dead
	}
	sc := x.getScratch()
	defer x.putScratch(sc)
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if workers == 1 || n < 2*workers {
		for s := first; s < end; s++ {
			x.insert(sc, s, nil)
		}
		return nil
	}
	if empty {
		// The first slot becomes the entry point alone, so the workers
		// always find one. (Its level may be low; a higher slot takes
		// over when the workers insert it.)
		x.insertFirst(first)
		first++
		live++
	}
	// A young graph grows alone first: workers inserting into a handful
	// of nodes race for the same few neighbour lists and could leave
	// parts of it badly linked (recall 0.87 instead of 1.0 at M=4 over
	// 100 nodes, in some runs). Past seedAlone live nodes they meet
	// rarely; for a 100k batch this is half a percent of the work.
	if alone := uint32(min(max(seedAlone-live, 0), int(end-first))); alone > 0 {
		for s := first; s < first+alone; s++ {
			x.insert(sc, s, nil)
		}
		first += alone
	}
	if first < end {
		x.insertParallel(first, end, workers)
	}
	return nil
}

// seedAlone is how many live nodes a graph gets from one goroutine
// before AddBatch inserts with several.
const seedAlone = 512

func (x *Index) insertFirst(s uint32) { x.entry, x.top = int32(s), int(x.levels[s]) }

// insertParallel inserts slots [first, end) with workers goroutines.
func (x *Index) insertParallel(first, end uint32, workers int) {
	b := new(builder)
	var next atomic.Uint32
	next.Store(first)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := new(scratch)
			for {
				s := next.Add(1) - 1
				if s >= end {
					return
				}
				x.insert(sc, s, b)
			}
		}()
	}
	wg.Wait()
}

func (x *Index) checkBatch(ids []uint64, vecs []float32) error {
	if len(vecs) != len(ids)*x.dim {
		return fmt.Errorf("add batch: %w: %d floats for %d ids of dimension %d", ErrDim, len(vecs), len(ids), x.dim)
	}
	for i, id := range ids {
		if err := x.check(id, vecs[i*x.dim:(i+1)*x.dim]); err != nil {
			return fmt.Errorf("add batch: %w", err)
		}
	}
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			return fmt.Errorf("add batch: add %d: %w (twice in the batch)", sorted[i], ErrDuplicate)
		}
	}
	return nil
}
