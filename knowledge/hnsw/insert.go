package hnsw

import (
	"cmp"
	"slices"
	"sync"
)

// Add inserts vec under id. It returns an error wrapping ErrDim, ErrNotFinite
// or ErrDuplicate (a live id; a deleted id may be added again) and leaves
// the index unchanged then. The vector is copied.
func (x *Index) Add(id uint64, vec []float32) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.check(id, vec); err != nil {
		return err
	}
	x.reserve(1, true)
	s := x.appendSlot(id, vec, x.randomLevel())
	sc := x.getScratch()
	x.insert(sc, s, nil)
	x.putScratch(sc)
	return nil
}

// builder coordinates the workers of AddBatch: striped locks guard the
// neighbour lists, epMu the entry point.
type builder struct {
	stripes [1024]sync.Mutex
	epMu    sync.Mutex
}

func (b *builder) lock(s uint32) *sync.Mutex { return &b.stripes[s&1023] }

// insert links the already stored slot s into the graph. With a builder it
// may run concurrently with other inserts of the same batch.
func (x *Index) insert(sc *scratch, s uint32, b *builder) {
	lvl := int(x.levels[s])
	q := x.vec(s)
	if b != nil {
		b.epMu.Lock()
	}
	entry, top := x.entry, x.top
	if b != nil && lvl <= top {
		b.epMu.Unlock()
	}
	if entry < 0 || len(x.ids)-x.nDead == 1 {
		// The first live slot: it is the graph.
		x.entry, x.top = int32(s), lvl
		if b != nil && lvl > top {
			b.epMu.Unlock()
		}
		return
	}
	ep := item{x.distance(q, x.vec(uint32(entry))), uint32(entry)}
	for l := top; l > lvl; l-- {
		ep = x.greedy(sc, q, ep, l, b)
	}
	for l := min(lvl, top); l >= 0; l-- {
		x.searchLayer(sc, q, ep, x.efC, l, b, nil)
		cands := x.drainSorted(sc)
		if len(cands) == 0 {
			continue
		}
		next := cands[0]
		// Like FAISS (and unlike the paper's fixed M), a new slot may keep
		// up to the level's capacity, 2M on level 0: a denser base layer
		// gives more recall at the same ef for about the same search cost.
		sc.kept = x.heuristic(cands, x.maxLinks(l), sc.kept[:0])
		x.addLinks(sc, s, l, sc.kept, b)
		for _, nb := range sc.kept {
			x.addLinks(sc, nb.i, l, []item{{nb.d, s}}, b)
		}
		ep = next
	}
	if lvl > top {
		x.entry, x.top = int32(s), lvl
		if b != nil {
			b.epMu.Unlock()
		}
	}
}

// heuristic is the paper's algorithm 4 (no candidate extension, pruned
// candidates not kept): walk the candidates nearest first and keep one only
// if it is nearer to the base than to every candidate already kept.
// cands must be sorted by distance to the base.
func (x *Index) heuristic(cands []item, m int, out []item) []item {
	for _, c := range cands {
		if len(out) >= m {
			break
		}
		cv := x.vec(c.i)
		good := true
		for _, r := range out {
			if x.distance(cv, x.vec(r.i)) < c.d {
				good = false
				break
			}
		}
		if good {
			out = append(out, c)
		}
	}
	return out
}

// addLinks adds links from slot s on level l to the slots in adds (each
// with its distance to s), skipping ones already there. When the list
// would overflow, the union is pruned with the heuristic; dead slots are
// dropped then.
func (x *Index) addLinks(sc *scratch, s uint32, l int, adds []item, b *builder) {
	if b != nil {
		mu := b.lock(s)
		mu.Lock()
		defer mu.Unlock()
	}
	lst := x.list(s, l)
	n, mx := int(lst[0]), x.maxLinks(l)
	for _, a := range adds {
		if !slices.Contains(lst[1:1+n], a.i) {
			if n == mx {
				lst[0] = uint32(n)
				x.prune(sc, s, l, adds)
				return
			}
			lst[1+n] = a.i
			n++
		}
	}
	lst[0] = uint32(n)
}

// prune rewrites the list of s on level l from its current members and
// adds, chosen with the heuristic. The caller holds the list's lock.
func (x *Index) prune(sc *scratch, s uint32, l int, adds []item) {
	lst := x.list(s, l)
	sv := x.vec(s)
	cands := sc.prune[:0]
	checkDead := x.nDead > 0
	members := lst[1 : 1+lst[0]]
	sc.dists = slices.Grow(sc.dists[:0], len(members))[:len(members)]
	x.distances(sv, members, sc.dists)
	for j, o := range members {
		if !checkDead || !x.isDead(o) {
			cands = append(cands, item{sc.dists[j], o})
		}
	}
	for _, a := range adds {
		if !containsItem(cands, a.i) && (!checkDead || !x.isDead(a.i)) {
			cands = append(cands, a)
		}
	}
	slices.SortFunc(cands, func(a, b item) int { return cmp.Compare(a.d, b.d) })
	kept := x.heuristic(cands, x.maxLinks(l), sc.pkept[:0])
	for i, k := range kept {
		lst[1+i] = k.i
	}
	lst[0] = uint32(len(kept))
	sc.prune, sc.pkept = cands, kept
}

func containsItem(s []item, i uint32) bool {
	for _, it := range s {
		if it.i == i {
			return true
		}
	}
	return false
}
