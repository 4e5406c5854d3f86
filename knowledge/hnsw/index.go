package hnsw

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
)

// Defaults for zero Options fields.
const (
	DefaultM              = 16
	DefaultEfConstruction = 200
	DefaultEfSearch       = 64
	DefaultSeed           = 0x5eed
)

// maxLevel caps the random level; with M=2 reaching it takes ~2^16 draws.
const maxLevelCap = 16

// Errors returned by Add and AddBatch (wrapped with the offending id).
var (
	ErrDim       = errors.New("wrong vector dimension")
	ErrNotFinite = errors.New("vector holds NaN or Inf")
	ErrDuplicate = errors.New("id already in the index")
)

// Options tunes an Index; zero fields take the defaults.
type Options struct {
	M              int // neighbours per node on levels ≥ 1 (level 0 keeps 2M); default 16
	EfConstruction int // beam width while inserting; default 200
	EfSearch       int // beam width of a search called with ef <= 0; default 64
	Metric         Metric
	Seed           int64 // seeds the level generator; 0 → a fixed default
}

// Result is one search hit; results are ordered nearest first.
type Result struct {
	ID       uint64
	Distance float32
}

// Index is an HNSW graph over vectors of one dimension. The zero value is
// not usable; call New or Read.
type Index struct {
	mu sync.RWMutex

	dim, m, m0  int
	efC, efS    int
	metric      Metric
	seed        int64
	ml          float64
	rng         *rand.Rand
	kern        kernels
	simd        bool
	stride0     int // 1 + m0: uint32s per level-0 list
	strideUpper int // 1 + m: uint32s per upper-level list

	vecs   []float32 // slot i at [i*dim, (i+1)*dim)
	ids    []uint64  // slot → caller id
	levels []uint8   // slot → top level
	l0     []uint32  // slot i's level-0 list at [i*stride0, (i+1)*stride0)
	upOff  []uint32  // slot → offset of its level-1 list in upper (levels ≥ 1 only)
	upper  []uint32  // lists of levels ≥ 1, level l of slot i at upOff[i]+(l-1)*strideUpper
	dead   []uint64  // tombstone bitset
	nDead  int
	table  idTable
	entry  int32 // entry slot, -1 when empty
	top    int   // level of the entry slot

	pool sync.Pool // *scratch
}

// New returns an empty index for vectors of dim dimensions. Zero Options
// fields take the defaults; an M below 2 is raised to 2 and an
// EfConstruction below M to M. New panics when dim < 1 or the metric is
// unknown: both are programming errors.
func New(dim int, opts Options) *Index {
	if dim < 1 {
		panic(fmt.Sprintf("hnsw.New: dimension %d, want ≥ 1", dim))
	}
	if !opts.Metric.valid() {
		panic(fmt.Sprintf("hnsw.New: unknown metric %d", opts.Metric))
	}
	o := withDefaults(opts)
	x := &Index{
		dim: dim, m: o.M, m0: 2 * o.M, efC: o.EfConstruction, efS: o.EfSearch,
		metric: o.Metric, seed: o.Seed, entry: -1,
	}
	x.init()
	return x
}

func withDefaults(o Options) Options {
	if o.M == 0 {
		o.M = DefaultM
	}
	o.M = max(o.M, 2)
	if o.EfConstruction == 0 {
		o.EfConstruction = DefaultEfConstruction
	}
	o.EfConstruction = max(o.EfConstruction, o.M)
	if o.EfSearch <= 0 {
		o.EfSearch = DefaultEfSearch
	}
	if o.Seed == 0 {
		o.Seed = DefaultSeed
	}
	return o
}

// init derives the computed fields from dim, m, m0, metric and seed.
func (x *Index) init() {
	x.ml = 1 / math.Log(float64(x.m))
	x.rng = rand.New(rand.NewPCG(uint64(x.seed), 0x9e3779b97f4a7c15))
	x.simd = SIMD()
	x.kern = kernelsFor(x.metric, x.simd)
	x.stride0 = 1 + x.m0
	x.strideUpper = 1 + x.m
	x.pool.New = func() any { return new(scratch) }
}

// Len returns the number of live (added and not deleted) vectors.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.ids) - x.nDead
}

// Dim returns the vector dimension.
func (x *Index) Dim() int { return x.dim }

// Options returns the options in effect (defaults filled in).
func (x *Index) Options() Options {
	return Options{M: x.m, EfConstruction: x.efC, EfSearch: x.efS, Metric: x.metric, Seed: x.seed}
}

// Contains reports whether id is live in the index.
func (x *Index) Contains(id uint64) bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	_, ok := x.table.find(id, x.ids)
	return ok
}

// Vector returns a copy of the stored vector of id (normalised for
// Cosine), or false.
func (x *Index) Vector(id uint64) ([]float32, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	s, ok := x.table.find(id, x.ids)
	if !ok {
		return nil, false
	}
	return append([]float32(nil), x.vec(s)...), true
}

// Stats describes the index's shape and memory.
type Stats struct {
	Live, Deleted int // live and tombstoned slots
	MaxLevel      int
	VectorBytes   int // the flat vector storage (length, not capacity)
	GraphBytes    int // neighbour slabs, upper offsets, levels, ids, id table, tombstones
}

// Stats returns the current Stats.
func (x *Index) Stats() Stats {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return Stats{
		Live: len(x.ids) - x.nDead, Deleted: x.nDead, MaxLevel: x.top,
		VectorBytes: 4 * len(x.vecs),
		GraphBytes: 4*(len(x.l0)+len(x.upOff)+len(x.upper)) + len(x.levels) +
			8*(len(x.ids)+len(x.dead)) + x.table.bytes(),
	}
}

func (x *Index) vec(s uint32) []float32 {
	o := int(s) * x.dim
	return x.vecs[o : o+x.dim : o+x.dim]
}

// list returns the neighbour list of slot s on level l: a count followed by
// room for the neighbours.
func (x *Index) list(s uint32, l int) []uint32 {
	if l == 0 {
		o := int(s) * x.stride0
		return x.l0[o : o+x.stride0 : o+x.stride0]
	}
	o := int(x.upOff[s]) + (l-1)*x.strideUpper
	return x.upper[o : o+x.strideUpper : o+x.strideUpper]
}

func (x *Index) maxLinks(l int) int {
	if l == 0 {
		return x.m0
	}
	return x.m
}

func (x *Index) isDead(s uint32) bool { return x.dead[s>>6]&(1<<(s&63)) != 0 }

// randomLevel draws floor(-ln(U)·mL), capped.
func (x *Index) randomLevel() int {
	u := 1 - x.rng.Float64() // (0, 1]
	return min(int(-math.Log(u)*x.ml), maxLevelCap)
}

// check validates a vector for insertion.
func (x *Index) check(id uint64, v []float32) error {
	if len(v) != x.dim {
		return fmt.Errorf("add %d: %w: got %d, want %d", id, ErrDim, len(v), x.dim)
	}
	if !finite(v) {
		return fmt.Errorf("add %d: %w", id, ErrNotFinite)
	}
	if _, ok := x.table.find(id, x.ids); ok {
		return fmt.Errorf("add %d: %w", id, ErrDuplicate)
	}
	return nil
}

// reserve makes room for n more slots with the given levels, so that the
// slabs are not reallocated while they are filled. Slabs grow to exactly
// what is needed when extra is false, or with headroom for single Adds.
func (x *Index) reserve(n int, extra bool) {
	need := len(x.ids) + n
	if cap(x.ids) >= need {
		return
	}
	c := need
	if extra {
		// Like append: double small slabs, grow big ones by a quarter
		// (the vector slab dominates memory).
		g := cap(x.ids)
		if g < 4096 {
			g *= 2
		} else {
			g += g / 4
		}
		c = max(need, g, 64)
	}
	x.vecs = grow(x.vecs, c*x.dim)
	x.ids = grow(x.ids, c)
	x.levels = grow(x.levels, c)
	x.l0 = grow(x.l0, c*x.stride0)
	x.upOff = grow(x.upOff, c)
	x.dead = grow(x.dead, (c+63)/64)
}

func grow[T any](s []T, c int) []T {
	if cap(s) >= c {
		return s
	}
	t := make([]T, len(s), c)
	adviseHuge(t)
	copy(t, s)
	return t
}

// appendSlot stores a new slot for id at level lvl with vector v (copied
// as given; Cosine vectors are normalised here) and returns it. Capacity must be reserved.
func (x *Index) appendSlot(id uint64, v []float32, lvl int) uint32 {
	s := uint32(len(x.ids))
	x.ids = append(x.ids, id)
	x.vecs = append(x.vecs, v...)
	if x.metric == Cosine {
		normalize(x.vecs[len(x.vecs)-x.dim:])
	}
	x.levels = append(x.levels, uint8(lvl))
	x.l0 = x.l0[:len(x.l0)+x.stride0]
	clear(x.l0[len(x.l0)-x.stride0:])
	var off uint32
	if lvl > 0 {
		off = uint32(len(x.upper))
		n := lvl * x.strideUpper
		if cap(x.upper)-len(x.upper) < n {
			x.upper = grow(x.upper, max(2*cap(x.upper), len(x.upper)+n, 64))
		}
		x.upper = x.upper[:len(x.upper)+n]
		clear(x.upper[off:])
	}
	x.upOff = append(x.upOff, off)
	if w := int(s>>6) + 1; len(x.dead) < w {
		x.dead = append(x.dead, 0)
	}
	x.table.insert(id, s, x.ids)
	return s
}

func (x *Index) getScratch() *scratch  { return x.pool.Get().(*scratch) }
func (x *Index) putScratch(s *scratch) { x.pool.Put(s) }
