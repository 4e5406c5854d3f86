package hnsw

import (
	"testing"

	"github.com/pi-actors/pi-actors/knowledge/hnsw/hnswtest"
)

// clustered is the shared generator (package hnswtest).
func clustered(n, dim, nc, latent int, seed, draw uint64) []float32 {
	return hnswtest.Clustered(n, dim, nc, latent, seed, draw)
}

func seqIDs(n int, base uint64) []uint64 {
	ids := make([]uint64, n)
	for i := range ids {
		ids[i] = base + uint64(i)
	}
	return ids
}

// build adds data one by one (Add) under ids 1000, 1001, …
func build(t testing.TB, dim int, data []float32, opts Options) *Index {
	t.Helper()
	x := New(dim, opts)
	for i := range len(data) / dim {
		if err := x.Add(1000+uint64(i), data[i*dim:(i+1)*dim]); err != nil {
			t.Fatal(err)
		}
	}
	return x
}

// recall is the mean fraction of the exact top k that Search returns.
func recall(x *Index, queries []float32, k, ef int, keep func(uint64) bool) float64 {
	dim := x.Dim()
	nq := len(queries) / dim
	hit, total := 0, 0
	for i := range nq {
		q := queries[i*dim : (i+1)*dim]
		exact := x.SearchExact(q, k, keep)
		got := x.SearchFilter(q, k, ef, keep)
		want := make(map[uint64]bool, len(exact))
		for _, r := range exact {
			want[r.ID] = true
		}
		for _, r := range got {
			if want[r.ID] {
				hit++
			}
		}
		total += len(exact)
	}
	if total == 0 {
		return 1
	}
	return float64(hit) / float64(total)
}
