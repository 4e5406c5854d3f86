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
