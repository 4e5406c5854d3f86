package vector

import (
	"container/heap"
	"runtime"
	"sync"

	"github.com/viterin/vek/vek32"

	"github.com/pi-actors/pi-actors/knowledge/hnsw"
)

// DefaultExactBelow is the number of vectors below which a domain is
// searched by an exact scan instead of an HNSW graph.
const DefaultExactBelow = 20000

// domainIndex is one domain's vectors of the current embedder: a flat array
// scanned exactly while the domain is small, an HNSW graph (keyed by node
// seq) once it holds exactBelow vectors. The graph is built in the
// background from the flat array; searches scan the flat array meanwhile.
type domainIndex struct {
	domain string

	mu       sync.RWMutex
	dim      int
	seqs     []uint64  // exact mode: seq of each row
	vecs     []float32 // exact mode: row i at [i*dim, (i+1)*dim)
	graph    *hnsw.Index
	building bool
	types    []uint8 // by seq: 1 + type code; 0 = not in this index
	count    int
	vid      int64 // highest vector id included
	dirty    bool  // graph differs from its file
}

// cand is a search candidate: a node seq and its cosine similarity.
type cand struct {
	seq   uint64
	sim   float32
	words bool // found by its words (byWords)
}

func (vi *domainIndex) has(seq uint64) bool {
	return seq < uint64(len(vi.types)) && vi.types[seq] != 0
}

func (vi *domainIndex) setType(seq uint64, code uint8) {
	if seq >= uint64(len(vi.types)) {
		n := max(2*len(vi.types), int(seq)+1, 1024)
		t := make([]uint8, n)
		copy(t, vi.types)
		vi.types = t
	}
	vi.types[seq] = code + 1
}

// add appends vectors (already L2-normalised by the embedder; hnsw
// normalises again for Cosine) under the write lock. Vectors of a seq
// already present are skipped: a re-read after a catch-up race.
func (vi *domainIndex) add(seqs []uint64, codes []uint8, vecs [][]float32, vid int64) error {
	vi.mu.Lock()
	defer vi.mu.Unlock()
	if vid > vi.vid {
		vi.vid = vid
	}
	var gs []uint64
	var gv []float32
	for i, seq := range seqs {
		v := vecs[i]
		if vi.dim == 0 {
			vi.dim = len(v)
		}
		if len(v) != vi.dim || vi.has(seq) {
			continue
		}
		vi.setType(seq, codes[i])
		vi.count++
		if vi.graph == nil || vi.building {
			vi.seqs = append(vi.seqs, seq)
			vi.vecs = append(vi.vecs, v...)
		}
		if vi.graph != nil && !vi.building {
			gs = append(gs, seq)
			gv = append(gv, v...)
		}
	}
	if len(gs) == 0 {
		return nil
	}
	vi.dirty = true
	if len(gs) == 1 {
		return vi.graph.Add(gs[0], gv)
	}
	return vi.graph.AddBatch(gs, gv, runtime.GOMAXPROCS(0))
}

// needsBuild reports whether the domain outgrew the exact scan and no
// graph exists or is being built; it marks the build as started.
func (vi *domainIndex) needsBuild(exactBelow int) bool {
	vi.mu.Lock()
	defer vi.mu.Unlock()
	if vi.graph != nil || vi.building || vi.count < exactBelow {
		return false
	}
	vi.building = true
	return true
}

// build makes the HNSW graph from the flat rows without holding the
// lock (the rows are append-only), then adds the rows that arrived
// meanwhile and swaps it in.
func (vi *domainIndex) build() error {
	vi.mu.RLock()
	n, dim := len(vi.seqs), vi.dim
	seqs, vecs := vi.seqs[:n], vi.vecs[:n*dim]
	vi.mu.RUnlock()
	g := hnsw.New(dim, hnsw.Options{})
	err := g.AddBatch(seqs, vecs, runtime.GOMAXPROCS(0))
	vi.mu.Lock()
	defer vi.mu.Unlock()
	vi.building = false
	if err != nil {
		return err
	}
	if m := len(vi.seqs); m > n {
		if err := g.AddBatch(vi.seqs[n:], vi.vecs[n*dim:], runtime.GOMAXPROCS(0)); err != nil {
			return err
		}
	}
	vi.graph, vi.seqs, vi.vecs, vi.dirty = g, nil, nil, true
	return nil
}

// mode names the index kind for status.
func (vi *domainIndex) mode() string {
	vi.mu.RLock()
	defer vi.mu.RUnlock()
	switch {
	case vi.building:
		return "building"
	case vi.graph != nil:
		return "hnsw"
	}
	return "exact"
}

func (vi *domainIndex) len() int {
	vi.mu.RLock()
	defer vi.mu.RUnlock()
	return vi.count
}

// search returns up to k candidates nearest to q (unit length), best
// first; typ > 0 keeps only nodes of type code typ-1.
func (vi *domainIndex) search(q []float32, k int, typ uint8) []cand {
	vi.mu.RLock()
	defer vi.mu.RUnlock()
	if vi.count == 0 || len(q) != vi.dim || k <= 0 {
		return nil
	}
	keep := func(seq uint64) bool { return typ == 0 || (seq < uint64(len(vi.types)) && vi.types[seq] == typ) }
	if vi.graph != nil && !vi.building {
		var f func(uint64) bool
		if typ != 0 {
			f = keep
		}
		rs := vi.graph.SearchFilter(q, k, max(k, hnsw.DefaultEfSearch), f)
		out := make([]cand, len(rs))
		for i, r := range rs {
			out[i] = cand{seq: r.ID, sim: 1 - r.Distance}
		}
		return out
	}
	h := make(candHeap, 0, k+1)
	for i, seq := range vi.seqs {
		if typ != 0 && !keep(seq) {
			continue
		}
		s := vek32.Dot(q, vi.vecs[i*vi.dim:(i+1)*vi.dim])
		if len(h) < k {
			heap.Push(&h, cand{seq: seq, sim: s})
		} else if s > h[0].sim {
			h[0] = cand{seq: seq, sim: s}
			heap.Fix(&h, 0)
		}
	}
	out := make([]cand, len(h))
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&h).(cand)
	}
	return out
}

// candHeap is a min-heap by similarity: the worst kept candidate on top.
type candHeap []cand

func (h candHeap) Len() int           { return len(h) }
func (h candHeap) Less(i, j int) bool { return h[i].sim < h[j].sim }
func (h candHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *candHeap) Push(x any)        { *h = append(*h, x.(cand)) }
func (h *candHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
