//go:build !amd64 || purego

package hnsw

// simdBuild is false without the amd64 assembly (other architectures, or
// the purego tag): every distance then uses the scalar loops.
const simdBuild = false

var simdCPU = false

// The SIMD kernels are never called here (SIMD() is false); these keep the
// package building.
func dotAVX2(a, b []float32) float32 { return dotScalar(a, b) }
func l2AVX2(a, b []float32) float32  { return l2Scalar(a, b) }

func dotBatchAVX2(q, vecs []float32, ids []uint32, out []float32) {
	for i, s := range ids {
		out[i] = dotScalar(q, vecs[int(s)*len(q):])
	}
}
