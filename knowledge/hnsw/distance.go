package hnsw

import (
	"math"
	"strconv"
)

// Metric selects the distance an Index ranks by. Smaller is nearer.
type Metric int

const (
	// Cosine ranks by 1 - cos(a, b). Vectors are L2-normalised when added
	// and queries when searched; a zero vector stays zero (distance 1 to
	// everything).
	Cosine Metric = iota
	// L2 ranks by the squared Euclidean distance.
	L2
	// InnerProduct ranks by 1 - a·b, with vectors used as given.
	InnerProduct
)

// String names the metric ("cosine", "l2", "ip").
func (m Metric) String() string {
	switch m {
	case Cosine:
		return "cosine"
	case L2:
		return "l2"
	case InnerProduct:
		return "ip"
	}
	return "metric(" + strconv.Itoa(int(m)) + ")"
}

func (m Metric) valid() bool { return m >= Cosine && m <= InnerProduct }

// SIMD reports whether distances use the AVX2/FMA kernels: true on a CPU
// with AVX2 and FMA unless the package was built with the purego tag.
func SIMD() bool { return simdBuild && simdCPU }

// kernels selects the distance primitives of one Index: a dot product or
// a squared L2 distance, SIMD or scalar. distance calls them directly (no
// function values: an indirect call per distance measurably cost).
type kernels struct {
	l2   bool // L2, else a dot product (Cosine, InnerProduct)
	simd bool
}

func kernelsFor(m Metric, simd bool) kernels { return kernels{l2: m == L2, simd: simd} }

// distance is the metric's distance between a and b (len(a) == len(b)).
func (x *Index) distance(a, b []float32) float32 {
	switch k := x.kern; {
	case k.l2 && k.simd:
		return l2AVX2(a, b)
	case k.l2:
		return l2Scalar(a, b)
	case k.simd:
		return 1 - dotAVX2(a, b)
	}
	return 1 - dotScalar(a, b)
}

// distances sets out[i] to the distance from q to slot ids[i], for every
// i < len(ids) (len(out) >= len(ids); every id a slot): one assembly call
// for a whole list with the SIMD dot product.
func (x *Index) distances(q []float32, ids []uint32, out []float32) {
	out = out[:len(ids)]
	if k := x.kern; k.simd && !k.l2 {
		dotBatchAVX2(q, x.vecs, ids, out)
		for i, d := range out {
			out[i] = 1 - d
		}
		return
	}
	for i, s := range ids {
		out[i] = x.distance(q, x.vec(s))
	}
}

// distFunc returns the distance for metric m as a plain function (tests).
func distFunc(m Metric, simd bool) func(a, b []float32) float32 {
	k := kernelsFor(m, simd)
	return (&Index{kern: k}).distance
}

// dotScalar is the portable dot product: four independent accumulators so
// the loop is not one long dependency chain.
func dotScalar(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

func l2Scalar(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		d0, d1, d2, d3 := a[i]-b[i], a[i+1]-b[i+1], a[i+2]-b[i+2], a[i+3]-b[i+3]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	for ; i < len(a); i++ {
		d := a[i] - b[i]
		s0 += d * d
	}
	return (s0 + s1) + (s2 + s3)
}

// normalize scales v in place to unit length; a zero vector is left alone.
func normalize(v []float32) {
	var s float64
	for _, f := range v {
		s += float64(f) * float64(f)
	}
	if s == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
}

// finite reports whether v holds no NaN or ±Inf.
func finite(v []float32) bool {
	for _, f := range v {
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return false
		}
	}
	return true
}
