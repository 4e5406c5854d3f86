//go:build !purego

package hnsw

import "golang.org/x/sys/cpu"

// simdBuild is false when the package is built with the purego tag.
const simdBuild = true

// simdCPU reports whether this CPU has what the AVX2 kernels need.
var simdCPU = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// dotAVX2 is the dot product of a and b[:len(a)] with AVX2 and FMA
// (dot_amd64.s): four 8-wide accumulators over 32 floats a step, then 8
// at a time, then one. Only called when SIMD() is true.
//
//go:noescape
func dotAVX2(a, b []float32) float32

// l2AVX2 is the squared Euclidean distance of a and b[:len(a)], the same
// way.
//
//go:noescape
func l2AVX2(a, b []float32) float32

// dotBatchAVX2 sets out[i] to the dot product of q with the row ids[i] of
// vecs (rows of len(q) floats), for every i < len(ids): one call for a
// whole neighbour list. The caller guarantees the rows exist and
// len(out) >= len(ids).
//
//go:noescape
func dotBatchAVX2(q, vecs []float32, ids []uint32, out []float32)
