package hnsw

// item is a slot and its distance to the current query.
type item struct {
	d float32
	i uint32
}

// minHeap keeps the nearest item on top (the candidates of a beam search).
// Its backing array is reused between searches, so steady-state searches
// allocate nothing.
type minHeap []item

func (h *minHeap) push(it item) {
	s := append(*h, it)
	j := len(s) - 1
	for j > 0 {
		p := (j - 1) / 2
		if s[p].d <= it.d {
			break
		}
		s[j] = s[p]
		j = p
	}
	s[j] = it
	*h = s
}

func (h *minHeap) pop() item {
	s := *h
	top := s[0]
	n := len(s) - 1
	last := s[n]
	s = s[:n]
	j := 0
	for {
		c := 2*j + 1
		if c >= n {
			break
		}
		if c+1 < n && s[c+1].d < s[c].d {
			c++
		}
		if last.d <= s[c].d {
			break
		}
		s[j] = s[c]
		j = c
	}
	if n > 0 {
		s[j] = last
	}
	*h = s
	return top
}

// maxHeap keeps the farthest item on top (the bounded result set of a beam
// search).
type maxHeap []item

func (h *maxHeap) push(it item) {
	s := append(*h, it)
	j := len(s) - 1
	for j > 0 {
		p := (j - 1) / 2
		if s[p].d >= it.d {
			break
		}
		s[j] = s[p]
		j = p
	}
	s[j] = it
	*h = s
}

func (h *maxHeap) pop() item {
	s := *h
	top := s[0]
	n := len(s) - 1
	last := s[n]
	s = s[:n]
	if n > 0 {
		s.replaceTop(last)
	}
	*h = s
	return top
}

// replaceTop replaces the farthest item with it (nearer) and restores the
// heap: what push then pop would do in one sift.
func (h maxHeap) replaceTop(it item) {
	n := len(h)
	j := 0
	for {
		c := 2*j + 1
		if c >= n {
			break
		}
		if c+1 < n && h[c+1].d > h[c].d {
			c++
		}
		if it.d >= h[c].d {
			break
		}
		h[j] = h[c]
		j = c
	}
	h[j] = it
}

// visited is a generation-stamped visited set: slot i was visited in the
// current search when marks[i] == gen. Starting a search bumps gen instead
// of clearing the array; the array is cleared only when gen wraps.
type visited struct {
	marks []uint16
	gen   uint16
}

// reset starts a new search over n slots.
func (v *visited) reset(n int) {
	if len(v.marks) < n {
		v.marks = make([]uint16, n+n/4)
		v.gen = 0
	}
	v.gen++
	if v.gen == 0 {
		clear(v.marks)
		v.gen = 1
	}
}

// scratch is the per-search working memory, pooled per Index.
type scratch struct {
	seen  visited
	cand  minHeap
	res   maxHeap
	sel   []item   // the new slot's candidates, sorted
	kept  []item   // the new slot's chosen neighbours
	prune []item   // pruning an existing list: candidates
	pkept []item   // pruning an existing list: chosen
	links []uint32 // a neighbour list copied under a stripe lock; searchBase's batch
	batch []uint32
	dists []float32 // the distances of batch
	own   []uint32  // Delete: the deleted slot's list
	q     []float32 // the normalised query
}
