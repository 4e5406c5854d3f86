package hnsw

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
)

// benchSet is a 20k×128 clustered index shared by the search benchmarks.
var benchSet = sync.OnceValues(func() (*Index, []float32) {
	const dim, n = 128, 20000
	x := New(dim, Options{})
	if err := x.AddBatch(seqIDs(n, 0), clustered(n, dim, 20, 16, 1, 1), 0); err != nil {
		panic(err)
	}
	return x, clustered(1000, dim, 20, 16, 1, 2)
})

func BenchmarkSearch(b *testing.B) {
	x, qs := benchSet()
	dim := x.Dim()
	for _, ef := range []int{16, 32, 64} {
		b.Run(fmt.Sprintf("ef%d", ef), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				x.Search(qs[(i%1000)*dim:(i%1000+1)*dim], 10, ef)
				i++
			}
		})
	}
}

func BenchmarkDot128(b *testing.B) {
	x, qs := benchSet()
	for _, simd := range []bool{false, true} {
		f := distFunc(Cosine, simd && SIMD())
		b.Run(fmt.Sprintf("simd=%v", simd && SIMD()), func(b *testing.B) {
			v := x.vec(5)
			var s float32
			for b.Loop() {
				s += f(qs[:128], v)
			}
			_ = s
		})
	}
}

func BenchmarkRead(b *testing.B) {
	x, _ := benchSet()
	var buf bytes.Buffer
	if _, err := x.WriteTo(&buf); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	for b.Loop() {
		if _, err := Read(bytes.NewReader(buf.Bytes())); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuild10k times AddBatch of 10k×128 clustered vectors with one
// worker and with GOMAXPROCS workers (scripts/bench-vectors.sh times the
// 100k×128 build against its 45 s target).
func BenchmarkBuild10k(b *testing.B) {
	const dim, n = 128, 10000
	data := clustered(n, dim, 10, 16, 2, 1)
	ids := seqIDs(n, 0)
	for _, workers := range []int{1, 0} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			for b.Loop() {
				x := New(dim, Options{})
				if err := x.AddBatch(ids, data, workers); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/vector")
		})
	}
}
