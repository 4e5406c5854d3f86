package hnsw

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

const hugePage = 2 << 20

// adviseHuge asks the kernel to back the 2 MiB-aligned interior of a big
// slab (the vectors, the level-0 lists) with transparent huge pages
// (madvise; the kernel's default THP mode backs only advised memory): a
// search touches a few hundred random vectors, and with 4 KiB pages nearly
// every one costs a TLB miss. Call it before the slab is written, so that
// the first touch faults a huge page in. Slabs under 4 MiB are left alone;
// an error (an old kernel, THP off) is ignored: the advice is only a hint.
func adviseHuge[T any](s []T) {
	var z T
	n := uintptr(cap(s)) * unsafe.Sizeof(z)
	if n < 2*hugePage {
		return
	}
	base := unsafe.Pointer(unsafe.SliceData(s[:cap(s)]))
	p := uintptr(base)
	lo := (p + hugePage - 1) &^ (hugePage - 1)
	hi := (p + n) &^ (hugePage - 1)
	if hi <= lo {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Add(base, lo-p)), hi-lo)
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE)
}
