package hnsw

import "testing"

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
			for _, ef := range []int{16, 32, 64} {
				r := recall(x, queries, 10, ef, nil)
				t.Logf("%s recall@10 ef=%d: %.4f", m, ef, r)
			}
		})
	}
}
