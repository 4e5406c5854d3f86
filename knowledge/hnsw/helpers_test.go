package hnsw

import (
	"math/rand/v2"
	"testing"
)

// clustered returns n vectors of dim dimensions, back to back: nc
// Gaussian clusters, each spread along its own latent random directions
// plus a little isotropic noise (an intrinsic dimension of about latent,
// far below dim, like real embeddings). The same seed gives the same centres, so two calls with one
// seed and different n share clusters; queries use a different draw.
func clustered(n, dim, nc, latent int, seed, draw uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, 7))
	centres := make([]float32, nc*dim)
	for i := range centres {
		centres[i] = float32(r.NormFloat64())
	}
	basis := make([]float32, nc*latent*dim)
	for i := range basis {
		basis[i] = float32(r.NormFloat64() * 0.25)
	}
	r = rand.New(rand.NewPCG(seed, draw))
	out := make([]float32, n*dim)
	z := make([]float32, latent)
	for i := range n {
		c := r.IntN(nc)
		v := out[i*dim : (i+1)*dim]
		copy(v, centres[c*dim:(c+1)*dim])
		for a := range z {
			z[a] = float32(r.NormFloat64())
		}
		for a := range z {
			b := basis[(c*latent+a)*dim : (c*latent+a+1)*dim]
			for j := range v {
				v[j] += z[a] * b[j]
			}
		}
		for j := range v {
			v[j] += float32(r.NormFloat64() * 0.05)
		}
	}
	return out
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
