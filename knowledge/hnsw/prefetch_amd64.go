//go:build !purego

package hnsw

import "unsafe"

// prefetch asks the CPU to start loading the four cache lines from p (a
// vector's first 256 bytes; the hardware prefetcher follows the rest). It
// never faults, whatever p is.
//
//go:noescape
func prefetch(p unsafe.Pointer)
