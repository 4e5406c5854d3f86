//go:build !linux

package hnsw

// adviseHuge is a no-op where there is no madvise(MADV_HUGEPAGE).
func adviseHuge[T any]([]T) {}
