//go:build !purego

package hnsw

import "unsafe"

// prefetch asks the CPU to start loading every cache line of the n bytes
// from p (a whole vector, or a neighbour list). It never faults, whatever
// p is. Prefetching all of a vector matters: on the machines measured the
// hardware prefetcher did not follow a random 512-byte vector past its
// first lines, and the dot product then stalled on the second half.
//
//go:noescape
func prefetch(p unsafe.Pointer, n uintptr)
