package hnsw

import (
	"errors"
	"math"
	"testing"
)

func TestRecallClustered(t *testing.T) {
	const dim, n = 64, 5000
	data := clustered(n, dim, 50, 32, 1, 1)
	queries := clustered(200, dim, 50, 32, 1, 2)
	for _, m := range []Metric{Cosine, L2, InnerProduct} {
		t.Run(m.String(), func(t *testing.T) {
			x := build(t, dim, data, Options{Metric: m})
			if x.Len() != n {
				t.Fatalf("Len = %d, want %d", x.Len(), n)
			}
			for _, c := range []struct {
				ef    int
				floor float64
			}{{16, 0.95}, {64, 0.99}} {
				r := recall(x, queries, 10, c.ef, nil)
				t.Logf("%s recall@10 ef=%d: %.4f", m, c.ef, r)
				if r < c.floor {
					t.Errorf("%s recall@10 at ef=%d = %.4f, want ≥ %.2f", m, c.ef, r, c.floor)
				}
			}
		})
	}
}

func TestAddBatchParallel(t *testing.T) {
	const dim, n = 48, 4000
	data := clustered(n, dim, 40, 24, 5, 1)
	queries := clustered(200, dim, 40, 24, 5, 2)
	for _, workers := range []int{1, 4} {
		x := New(dim, Options{})
		if err := x.AddBatch(seqIDs(n, 1000), data, workers); err != nil {
			t.Fatal(err)
		}
		// A second batch on a non-empty index.
		more := clustered(500, dim, 40, 24, 5, 3)
		if err := x.AddBatch(seqIDs(500, 9000), more, workers); err != nil {
			t.Fatal(err)
		}
		if x.Len() != n+500 {
			t.Fatalf("workers %d: Len = %d", workers, x.Len())
		}
		r := recall(x, queries, 10, 16, nil)
		t.Logf("workers %d: recall@10 ef=16 %.4f", workers, r)
		if r < 0.95 {
			t.Errorf("workers %d: recall@10 at ef=16 = %.4f, want ≥ 0.95", workers, r)
		}
		for _, id := range []uint64{1000, 4999, 9000, 9499} {
			if r := x.Search(x.mustVector(t, id), 1, 0); len(r) != 1 || r[0].ID != id {
				t.Errorf("workers %d: own vector of %d finds %v", workers, id, r)
			}
		}
	}
}

func (x *Index) mustVector(t *testing.T, id uint64) []float32 {
	t.Helper()
	v, ok := x.Vector(id)
	if !ok {
		t.Fatalf("no vector for %d", id)
	}
	return v
}

func TestAddErrors(t *testing.T) {
	x := New(3, Options{})
	if err := x.Add(1, []float32{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	cases := []struct {
		name string
		id   uint64
		v    []float32
		want error
	}{
		{"short", 2, []float32{1, 2}, ErrDim},
		{"long", 2, []float32{1, 2, 3, 4}, ErrDim},
		{"nil", 2, nil, ErrDim},
		{"nan", 2, []float32{1, nan, 3}, ErrNotFinite},
		{"inf", 2, []float32{inf, 2, 3}, ErrNotFinite},
		{"dup", 1, []float32{3, 2, 1}, ErrDuplicate},
	}
	for _, c := range cases {
		if err := x.Add(c.id, c.v); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if x.Len() != 1 {
		t.Fatalf("failed adds changed Len to %d", x.Len())
	}
	batch := []struct {
		name string
		ids  []uint64
		v    []float32
		want error
	}{
		{"length", []uint64{5, 6}, []float32{1, 2, 3}, ErrDim},
		{"nan", []uint64{5, 6}, []float32{1, 2, 3, 4, nan, 6}, ErrNotFinite},
		{"dup in index", []uint64{5, 1}, []float32{1, 2, 3, 4, 5, 6}, ErrDuplicate},
		{"dup in batch", []uint64{5, 5}, []float32{1, 2, 3, 4, 5, 6}, ErrDuplicate},
	}
	for _, c := range batch {
		if err := x.AddBatch(c.ids, c.v, 2); !errors.Is(err, c.want) {
			t.Errorf("batch %s: %v, want %v", c.name, err, c.want)
		}
	}
	if x.Len() != 1 || x.Contains(5) {
		t.Fatalf("failed batches changed the index: Len %d", x.Len())
	}
	// Bad queries give nothing rather than garbage.
	for _, q := range [][]float32{nil, {1, 2}, {nan, 1, 1}} {
		if r := x.Search(q, 3, 0); r != nil {
			t.Errorf("Search(%v) = %v, want nil", q, r)
		}
	}
	if r := x.Search([]float32{1, 2, 3}, 0, 0); r != nil {
		t.Errorf("k=0 gave %v", r)
	}
}

func TestSmallIndexes(t *testing.T) {
	x := New(2, Options{Metric: L2})
	if r := x.Search([]float32{0, 0}, 3, 0); r != nil {
		t.Fatalf("empty index: %v", r)
	}
	pts := [][]float32{{0, 0}, {1, 0}, {0, 2}, {3, 3}}
	for i, p := range pts {
		if err := x.Add(uint64(10+i), p); err != nil {
			t.Fatal(err)
		}
	}
	r := x.Search([]float32{0.9, 0.1}, 10, 0)
	want := []uint64{11, 10, 12, 13}
	if len(r) != len(want) {
		t.Fatalf("got %v", r)
	}
	for i, id := range want {
		if r[i].ID != id {
			t.Fatalf("got %v, want order %v", r, want)
		}
	}
	if d := r[0].Distance; math.Abs(float64(d)-0.02) > 1e-6 {
		t.Fatalf("squared L2 distance %v, want 0.02", d)
	}
	// Cosine normalises: a scaled copy is at distance 0.
	c := New(2, Options{})
	_ = c.Add(1, []float32{3, 4})
	_ = c.Add(2, []float32{-4, 3})
	if r := c.Search([]float32{30, 40}, 2, 0); r[0].ID != 1 || r[0].Distance > 1e-6 || math.Abs(float64(r[1].Distance)-1) > 1e-6 {
		t.Fatalf("cosine: %v", r)
	}
}
