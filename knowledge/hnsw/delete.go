package hnsw

import (
	"cmp"
	"slices"
)

// Delete tombstones id and reports whether it was live. The slot's
// neighbours that linked to it get the link replaced at once (see the
// package doc); the slot itself stays in the graph as a waypoint.
func (x *Index) Delete(id uint64) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	s, ok := x.table.find(id, x.ids)
	if !ok {
		return false
	}
	x.table.remove(id, x.ids)
	x.dead[s>>6] |= 1 << (s & 63)
	x.nDead++
	sc := x.getScratch()
	defer x.putScratch(sc)
	for l := int(x.levels[s]); l >= 0; l-- {
		x.repair(sc, s, l)
	}
	if x.entry == int32(s) {
		x.pickEntry()
	}
	return true
}

// repair replaces the links to the deleted slot s on level l held by its
// own neighbours: each such list is re-chosen, with the heuristic, from its
// other members and s's neighbours.
func (x *Index) repair(sc *scratch, s uint32, l int) {
	own := x.list(s, l)
	sc.own = append(sc.own[:0], own[1:1+own[0]]...)
	for _, nb := range sc.own {
		if x.isDead(nb) {
			continue
		}
		lst := x.list(nb, l)
		j := slices.Index(lst[1:1+lst[0]], s)
		if j < 0 {
			continue
		}
		nv := x.vec(nb)
		cands := sc.prune[:0]
		for _, o := range lst[1 : 1+lst[0]] {
			if o != s && !x.isDead(o) {
				cands = append(cands, item{x.distance(nv, x.vec(o)), o})
			}
		}
		for _, o := range sc.own {
			if o != nb && !x.isDead(o) && !containsItem(cands, o) {
				cands = append(cands, item{x.distance(nv, x.vec(o)), o})
			}
		}
		slices.SortFunc(cands, func(a, b item) int { return cmp.Compare(a.d, b.d) })
		kept := x.heuristic(cands, x.maxLinks(l), sc.pkept[:0])
		// Keep the degree: top up with the nearest candidates the
		// heuristic passed over, up to the list's old length.
		for _, c := range cands {
			if len(kept) >= int(lst[0]) {
				break
			}
			if !containsItem(kept, c.i) {
				kept = append(kept, c)
			}
		}
		for i, k := range kept {
			lst[1+i] = k.i
		}
		lst[0] = uint32(len(kept))
		sc.prune, sc.pkept = cands, kept
	}
}

// pickEntry makes the live slot with the highest level the entry point
// (the first such slot). With no live slot the old entry stays; searches
// see the index as empty and the next insert starts afresh.
func (x *Index) pickEntry() {
	best, bestLevel := int32(-1), -1
	for s, lv := range x.levels {
		if int(lv) > bestLevel && !x.isDead(uint32(s)) {
			best, bestLevel = int32(s), int(lv)
			if bestLevel == x.top {
				break
			}
		}
	}
	if best >= 0 {
		x.entry, x.top = best, bestLevel
	}
}
