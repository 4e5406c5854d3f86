//go:build !amd64 || purego

package hnsw

import "unsafe"

// prefetch is a no-op without the amd64 assembly.
func prefetch(unsafe.Pointer, uintptr) {}
