package hnsw

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"
)

func TestSIMDMatchesScalar(t *testing.T) {
	if !SIMD() {
		t.Log("no AVX2/FMA here (or built with purego): comparing the scalar kernels with themselves")
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, dim := range []int{1, 3, 7, 8, 15, 31, 32, 33, 40, 47, 100, 128, 384, 1000} {
		a, b := make([]float32, dim), make([]float32, dim)
		for i := range a {
			a[i], b[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
		}
		for _, m := range []Metric{Cosine, L2, InnerProduct} {
			s, v := distFunc(m, false)(a, b), distFunc(m, SIMD())(a, b)
			exact := exactDist(m, a, b)
			tol := 1e-5 * float64(dim)
			if math.Abs(float64(s)-exact) > tol || math.Abs(float64(v)-exact) > tol {
				t.Errorf("dim %d %s: scalar %v simd %v exact %v", dim, m, s, v, exact)
			}
		}
	}
}

func exactDist(m Metric, a, b []float32) float64 {
	var s float64
	for i := range a {
		if m == L2 {
			d := float64(a[i]) - float64(b[i])
			s += d * d
		} else {
			s += float64(a[i]) * float64(b[i])
		}
	}
	if m == L2 {
		return s
	}
	return 1 - s
}

// TestSearchSIMDScalar builds the same index with both kernels: the
// results agree (same ids; distances within float rounding).
func TestSearchSIMDScalar(t *testing.T) {
	if !SIMD() {
		t.Log("no AVX2/FMA here (or built with purego): both indexes use the scalar kernels")
	}
	const dim, n = 64, 2000
	data := clustered(n, dim, 20, 32, 11, 1)
	queries := clustered(50, dim, 20, 32, 11, 2)
	var out [2][][]Result
	for k, simd := range []bool{false, true} {
		x := New(dim, Options{})
		x.simd = simd && SIMD()
		x.kern = kernelsFor(x.metric, x.simd)
		if err := x.AddBatch(seqIDs(n, 0), data, 1); err != nil {
			t.Fatal(err)
		}
		for i := range 50 {
			out[k] = append(out[k], x.SearchExact(queries[i*dim:(i+1)*dim], 10, nil))
			out[k] = append(out[k], x.Search(queries[i*dim:(i+1)*dim], 10, 32))
		}
	}
	same := 0
	for i := range out[0] {
		a, b := out[0][i], out[1][i]
		if len(a) != len(b) {
			t.Fatalf("result %d: %d vs %d hits", i, len(a), len(b))
		}
		ids := func(rs []Result) []uint64 {
			v := make([]uint64, len(rs))
			for j, r := range rs {
				v[j] = r.ID
			}
			return v
		}
		if slices.Equal(ids(a), ids(b)) {
			same++
		}
		for j := range a {
			if math.Abs(float64(a[j].Distance-b[j].Distance)) > 1e-4 {
				t.Fatalf("result %d rank %d: scalar %v simd %v", i, j, a[j], b[j])
			}
		}
	}
	// Rounding may swap near-ties, or steer one build differently; nearly
	// every list must be identical.
	if same < len(out[0])*9/10 {
		t.Fatalf("only %d of %d result lists identical between kernels", same, len(out[0]))
	}
	t.Logf("%d of %d result lists identical", same, len(out[0]))
}

func TestIDTable(t *testing.T) {
	var tb idTable
	var ids []uint64
	r := rand.New(rand.NewPCG(3, 4))
	live := map[uint64]uint32{}
	for round := range 20000 {
		if round%3 == 2 && len(live) > 0 {
			for id := range live {
				if !tb.remove(id, ids) {
					t.Fatalf("remove %d failed", id)
				}
				delete(live, id)
				break
			}
			continue
		}
		id := r.Uint64N(1 << 20) // collisions with removed ids happen
		if _, ok := live[id]; ok {
			continue
		}
		s := uint32(len(ids))
		ids = append(ids, id)
		tb.insert(id, s, ids)
		live[id] = s
	}
	if tb.n != len(live) {
		t.Fatalf("n = %d, want %d", tb.n, len(live))
	}
	for id, s := range live {
		if got, ok := tb.find(id, ids); !ok || got != s {
			t.Fatalf("find %d = %d %v, want %d", id, got, ok, s)
		}
	}
	for i, id := range ids {
		if _, ok := live[id]; ok {
			continue
		}
		if s, ok := tb.find(id, ids); ok && s == uint32(i) {
			t.Fatalf("removed id %d (slot %d) still found", id, i)
		}
	}
	if tb.remove(1<<40, ids) {
		t.Fatal("removed an absent id")
	}
}

// TestPrefetchNeverFaults: prefetching is a hint, whatever the address.
func TestPrefetchNeverFaults(t *testing.T) {
	v := make([]float32, 100)
	prefetch(unsafe.Pointer(&v[0]), 400)
	prefetch(unsafe.Pointer(&v[99]), 4)
	prefetch(unsafe.Pointer(&v[0]), 0)
	prefetch(nil, 4096)
}

// TestDistancesMatchDistance: scoring a list in one call gives what one
// call per slot gives, for every metric, kernel and tail length.
func TestDistancesMatchDistance(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, dim := range []int{1, 7, 8, 31, 32, 33, 47, 128, 385} {
		const n = 50
		x := New(dim, Options{Metric: InnerProduct})
		x.vecs = make([]float32, n*dim)
		for i := range x.vecs {
			x.vecs[i] = float32(r.NormFloat64())
		}
		q := x.vecs[3*dim : 4*dim]
		ids := []uint32{0, 49, 7, 7, 3, 12, 48, 1, 30}
		for _, m := range []Metric{Cosine, L2, InnerProduct} {
			for _, simd := range []bool{false, SIMD()} {
				x.kern = kernelsFor(m, simd)
				out := make([]float32, len(ids)+1)
				out[len(ids)] = 42 // beyond len(ids): untouched
				x.distances(q, ids, out)
				for i, s := range ids {
					if want := x.distance(q, x.vec(s)); math.Abs(float64(out[i]-want)) > 1e-5*float64(dim) {
						t.Errorf("dim %d %s simd=%v: distances[%d] (slot %d) = %v, distance = %v", dim, m, simd, i, s, out[i], want)
					}
				}
				if out[len(ids)] != 42 {
					t.Errorf("dim %d %s simd=%v: wrote past len(ids)", dim, m, simd)
				}
			}
		}
	}
}
