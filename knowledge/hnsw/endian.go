package hnsw

import (
	"unsafe"
)

// The on-disk format is little endian; sections are written and read as
// the raw memory of the slices, with a byte swap on big-endian hosts.
var littleEndian = func() bool {
	v := uint16(1)
	return *(*byte)(unsafe.Pointer(&v)) == 1
}()

type flat interface {
	~uint8 | ~uint32 | ~uint64 | ~float32
}

// asBytes views s's memory as bytes.
func asBytes[T flat](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(z)))
}

// swapBytes reverses the byte order of each size-byte element of b.
func swapBytes(b []byte, size int) {
	for i := 0; i+size <= len(b); i += size {
		for j, k := i, i+size-1; j < k; j, k = j+1, k-1 {
			b[j], b[k] = b[k], b[j]
		}
	}
}

// writeSlice writes s little endian.
func writeSlice[T flat](w *sumWriter, s []T) {
	var z T
	size := int(unsafe.Sizeof(z))
	b := asBytes(s)
	if littleEndian || size == 1 {
		w.write(b)
		return
	}
	buf := make([]byte, 1<<16)
	for len(b) > 0 {
		k := copy(buf, b)
		swapBytes(buf[:k], size)
		w.write(buf[:k])
		b = b[k:]
	}
}

// readChunk is how many bytes readSlice allocates at a time when the
// source's size is unknown, so that a lying header costs at most about
// twice what was actually read.
const readChunk = 8 << 20

// readSlice reads n little-endian elements into a new slice.
func readSlice[T flat](rd *sumReader, n int) ([]T, error) {
	var z T
	size := int(unsafe.Sizeof(z))
	if rd.left >= 0 && int64(n)*int64(size) > rd.left {
		return nil, ErrTruncated
	}
	c := n
	if rd.left < 0 {
		c = min(n, readChunk/size)
	}
	s := make([]T, 0, c)
	for len(s) < n {
		if len(s) == cap(s) {
			s = grow(s, min(n, 2*cap(s)))
		}
		k := cap(s) - len(s)
		if err := rd.full(asBytes(s[len(s) : len(s)+k])); err != nil {
			return nil, err
		}
		s = s[:len(s)+k]
	}
	if !littleEndian && size > 1 {
		swapBytes(asBytes(s), size)
	}
	return s, nil
}
