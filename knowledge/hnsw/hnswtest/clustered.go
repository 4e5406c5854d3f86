// Package hnswtest generates the clustered vector data the HNSW tests and
// the vector benchmarks (scripts/vectorbench) share, so a recall figure
// in a test and in the benchmark is about the same kind of data. It holds
// no index code.
package hnswtest

import "math/rand/v2"

// Clustered returns n vectors of dim dimensions, back to back, around nc
// Gaussian centres; each cluster spreads along its own latent random
// directions, plus a little isotropic noise: an intrinsic dimension of
// about latent, far below dim, the shape of real embeddings. The same
// seed gives the same centres, so draw separates samples of the same
// clusters (base vectors and queries).
func Clustered(n, dim, nc, latent int, seed, draw uint64) []float32 {
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
