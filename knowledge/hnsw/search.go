package hnsw

import (
	"math"
	"slices"
	"unsafe"
)

// Search returns the k nearest live vectors to q, nearest first. ef is the
// beam width (ef <= 0 → EfSearch; it is raised to k). A query of the wrong
// dimension or holding NaN/Inf, k <= 0 or an empty index give nil.
func (x *Index) Search(q []float32, k, ef int) []Result {
	return x.SearchFilter(q, k, ef, nil)
}

// SearchFilter is Search restricted to ids for which keep returns true
// (keep == nil keeps all). The graph is still traversed through rejected
// slots, so results stay accurate for selective filters, at the price of
// visiting more slots. keep runs under the index's read lock and must not
// call the Index.
func (x *Index) SearchFilter(q []float32, k, ef int, keep func(id uint64) bool) []Result {
	if k <= 0 || len(q) != x.dim || !finite(q) {
		return nil
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.entry < 0 || len(x.ids) == x.nDead {
		return nil
	}
	if ef <= 0 {
		ef = x.efS
	}
	ef = max(ef, k)
	sc := x.getScratch()
	defer x.putScratch(sc)
	if x.metric == Cosine {
		sc.q = append(sc.q[:0], q...)
		normalize(sc.q)
		q = sc.q
	}
	e := uint32(x.entry)
	ep := item{x.distance(q, x.vec(e)), e}
	for l := x.top; l > 0; l-- {
		ep = x.greedy(sc, q, ep, l, nil)
	}
	x.searchLayer(sc, q, ep, ef, 0, nil, keep)
	for len(sc.res) > k {
		sc.res.pop()
	}
	out := make([]Result, len(sc.res))
	for i := len(out) - 1; i >= 0; i-- {
		it := sc.res.pop()
		out[i] = Result{ID: x.ids[it.i], Distance: it.d}
	}
	return out
}

// SearchExact returns the k nearest live vectors by a full scan: the
// ground truth for tests, and the faster answer for small stores.
func (x *Index) SearchExact(q []float32, k int, keep func(id uint64) bool) []Result {
	if k <= 0 || len(q) != x.dim || !finite(q) {
		return nil
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	sc := x.getScratch()
	defer x.putScratch(sc)
	if x.metric == Cosine {
		sc.q = append(sc.q[:0], q...)
		normalize(sc.q)
		q = sc.q
	}
	sc.res = sc.res[:0]
	for s := range uint32(len(x.ids)) {
		if !x.accept(s, x.nDead > 0, keep) {
			continue
		}
		d := x.distance(q, x.vec(s))
		if len(sc.res) < k {
			sc.res.push(item{d, s})
		} else if d < sc.res[0].d {
			sc.res.pop()
			sc.res.push(item{d, s})
		}
	}
	out := make([]Result, len(sc.res))
	for i := len(out) - 1; i >= 0; i-- {
		it := sc.res.pop()
		out[i] = Result{ID: x.ids[it.i], Distance: it.d}
	}
	return out
}

// accept reports whether slot s may be returned.
func (x *Index) accept(s uint32, checkDead bool, keep func(uint64) bool) bool {
	if checkDead && x.isDead(s) {
		return false
	}
	return keep == nil || keep(x.ids[s])
}

// links returns the neighbours of slot s on level l. Under a builder it
// copies them into sc.links while holding the slot's stripe lock.
func (x *Index) links(sc *scratch, s uint32, l int, b *builder) []uint32 {
	lst := x.list(s, l)
	if b == nil {
		return lst[1 : 1+lst[0]]
	}
	mu := b.lock(s)
	mu.Lock()
	sc.links = append(sc.links[:0], lst[1:1+lst[0]]...)
	mu.Unlock()
	return sc.links
}

// greedy walks level l from ep to a local minimum of the distance to q,
// asking for all of a list's vectors before scoring them (see searchLayer).
func (x *Index) greedy(sc *scratch, q []float32, ep item, l int, b *builder) item {
	for changed := true; changed; {
		changed = false
		lst := x.links(sc, ep.i, l, b)
		for _, nb := range lst {
			x.prefetchVec(nb)
		}
		sc.dists = slices.Grow(sc.dists[:0], len(lst))[:len(lst)]
		x.distances(q, lst, sc.dists)
		for j, d := range sc.dists {
			if d < ep.d {
				ep = item{d, lst[j]}
				changed = true
			}
		}
	}
	return ep
}

// searchLayer is the beam search of width ef on level l from ep. It leaves
// the ef nearest accepted slots in sc.res (a max-heap). Rejected and dead
// slots are expanded like any other but never enter sc.res.
func (x *Index) searchLayer(sc *scratch, q []float32, ep item, ef, l int, b *builder, keep func(uint64) bool) {
	sc.seen.reset(len(x.ids))
	marks, gen := sc.seen.marks, sc.seen.gen
	sc.cand = sc.cand[:0]
	sc.res = sc.res[:0]
	checkDead := x.nDead > 0
	filtered := checkDead || keep != nil
	marks[ep.i] = gen
	sc.cand.push(ep)
	lower := float32(math.MaxFloat32)
	if !filtered || x.accept(ep.i, checkDead, keep) {
		sc.res.push(ep)
		lower = ep.d
	}
	for len(sc.cand) > 0 {
		c := sc.cand[0]
		if c.d > lower && len(sc.res) >= ef {
			break
		}
		sc.cand.pop()
		// Gather the unvisited neighbours first, asking the CPU for
		// their vectors as we go, so that the cache misses overlap
		// instead of being paid one distance at a time.
		batch := sc.batch[:0]
		for _, nb := range x.links(sc, c.i, l, b) {
			if marks[nb] != gen {
				marks[nb] = gen
				batch = append(batch, nb)
				x.prefetchVec(nb)
			}
		}
		sc.batch = batch
		sc.dists = slices.Grow(sc.dists[:0], len(batch))[:len(batch)]
		x.distances(q, batch, sc.dists)
		for j, nb := range batch {
			d := sc.dists[j]
			if d >= lower && len(sc.res) >= ef {
				continue
			}
			sc.cand.push(item{d, nb})
			if l == 0 {
				// Likely expanded soon: start loading its list.
				prefetch(unsafe.Pointer(&x.l0[int(nb)*x.stride0]), uintptr(4*x.stride0))
			}
			if filtered && !x.accept(nb, checkDead, keep) {
				continue
			}
			if len(sc.res) < ef {
				sc.res.push(item{d, nb})
			} else {
				sc.res.replaceTop(item{d, nb})
			}
			lower = sc.res[0].d
		}
	}
}

// prefetchVec starts loading the vector of slot s into the cache.
func (x *Index) prefetchVec(s uint32) {
	prefetch(unsafe.Pointer(&x.vecs[int(s)*x.dim]), uintptr(4*x.dim))
}

// drainSorted empties sc.res into sc.sel, nearest first.
func (x *Index) drainSorted(sc *scratch) []item {
	n := len(sc.res)
	sc.sel = slices.Grow(sc.sel[:0], n)[:n]
	for i := n - 1; i >= 0; i-- {
		sc.sel[i] = sc.res.pop()
	}
	return sc.sel
}
