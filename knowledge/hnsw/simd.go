//go:build !purego

package hnsw

import "golang.org/x/sys/cpu"

// simdBuild is false when the package is built with the purego tag.
const simdBuild = true

// simdCPU reports whether this CPU has what vek's AVX2 kernels need.
var simdCPU = cpu.X86.HasAVX2 && cpu.X86.HasFMA
