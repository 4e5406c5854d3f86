package hnsw

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math/bits"
	"os"
	"unsafe"
)

// Errors returned by Read (wrapped).
var (
	ErrFormat    = errors.New("not an hnsw index")
	ErrVersion   = errors.New("unsupported hnsw index version")
	ErrTruncated = errors.New("hnsw index truncated")
	ErrChecksum  = errors.New("hnsw index checksum mismatch")
	ErrCorrupt   = errors.New("hnsw index corrupt")
)

var magic = [8]byte{'P', 'I', 'H', 'N', 'S', 'W', 0, '\n'}

const formatVersion = 1

// Bounds a header must respect, so that a foreign file cannot make Read
// allocate absurd amounts of memory before failing.
const (
	maxDim   = 1 << 16
	maxM     = 1 << 10
	maxSlots = 1<<32 - 2
)

// header is the fixed part after the magic, little endian.
type header struct {
	Version  uint32
	Dim      uint32
	Metric   uint32
	M        uint32
	M0       uint32
	EfC      uint32
	EfS      uint32
	Top      uint32
	Seed     int64
	Slots    uint64
	Dead     uint64
	Entry    int64
	UpperLen uint64
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// WriteTo writes the index in the format described in the package doc and
// returns the number of bytes written. Searches may run meanwhile.
func (x *Index) WriteTo(w io.Writer) (int64, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	cw := &sumWriter{w: w, sum: crc32.New(crcTable)}
	h := header{
		Version: formatVersion, Dim: uint32(x.dim), Metric: uint32(x.metric),
		M: uint32(x.m), M0: uint32(x.m0), EfC: uint32(x.efC), EfS: uint32(x.efS),
		Top: uint32(x.top), Seed: x.seed, Slots: uint64(len(x.ids)),
		Dead: uint64(x.nDead), Entry: int64(x.entry), UpperLen: uint64(len(x.upper)),
	}
	var hb bytes.Buffer
	hb.Write(magic[:])
	_ = binary.Write(&hb, binary.LittleEndian, &h) // a bytes.Buffer does not fail
	cw.write(hb.Bytes())
	writeSlice(cw, x.ids)
	writeSlice(cw, x.levels)
	cw.write(make([]byte, pad8(len(x.levels))))
	writeSlice(cw, x.dead[:words(len(x.ids))])
	writeSlice(cw, x.vecs)
	writeSlice(cw, x.l0)
	writeSlice(cw, x.upOff)
	writeSlice(cw, x.upper)
	var tail [4]byte
	binary.LittleEndian.PutUint32(tail[:], cw.sum.Sum32())
	cw.sum = nil
	cw.write(tail[:])
	if cw.err != nil {
		return cw.n, fmt.Errorf("write hnsw index: %w", cw.err)
	}
	return cw.n, nil
}

func pad8(n int) int  { return (8 - n%8) % 8 }
func words(n int) int { return (n + 63) / 64 }

// sumWriter counts and checksums what it writes and keeps the first error.
type sumWriter struct {
	w   io.Writer
	sum hash.Hash32
	n   int64
	err error
}

func (c *sumWriter) write(p []byte) {
	if c.err != nil || len(p) == 0 {
		return
	}
	if c.sum != nil {
		c.sum.Write(p)
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
}

// Read loads an index written by WriteTo. It reads exactly the index's
// bytes from r. Data that is not an index, of another version, truncated,
// failing its checksum or structurally inconsistent is rejected with an
// error wrapping ErrFormat, ErrVersion, ErrTruncated, ErrChecksum or
// ErrCorrupt.
func Read(r io.Reader) (*Index, error) {
	x, err := read(r)
	if err != nil {
		return nil, fmt.Errorf("read hnsw index: %w", err)
	}
	return x, nil
}

func read(r io.Reader) (*Index, error) {
	rd := newSumReader(r)
	var mg [8]byte
	if err := rd.full(mg[:]); err != nil {
		return nil, err
	}
	if mg != magic {
		return nil, ErrFormat
	}
	var h header
	hb := make([]byte, binary.Size(h))
	if err := rd.full(hb); err != nil {
		return nil, err
	}
	_ = binary.Read(bytes.NewReader(hb), binary.LittleEndian, &h) // sizes match
	if h.Version != formatVersion {
		return nil, fmt.Errorf("%w %d (want %d)", ErrVersion, h.Version, formatVersion)
	}
	if err := h.check(); err != nil {
		return nil, err
	}
	x := &Index{
		dim: int(h.Dim), m: int(h.M), m0: int(h.M0), efC: int(h.EfC), efS: int(h.EfS),
		metric: Metric(h.Metric), seed: h.Seed, entry: int32(h.Entry), top: int(h.Top),
		nDead: int(h.Dead),
	}
	x.init()
	if err := x.readSections(rd, h); err != nil {
		return nil, err
	}
	want := rd.sum.Sum32()
	var tail [4]byte
	if err := rd.full(tail[:]); err != nil {
		return nil, err
	}
	if binary.LittleEndian.Uint32(tail[:]) != want {
		return nil, ErrChecksum
	}
	if err := x.validate(); err != nil {
		return nil, err
	}
	return x, nil
}

func (h *header) check() error {
	bad := func(what string, v any) error { return fmt.Errorf("%w: %s %v", ErrCorrupt, what, v) }
	switch {
	case h.Dim < 1 || h.Dim > maxDim:
		return bad("dimension", h.Dim)
	case !Metric(h.Metric).valid():
		return bad("metric", h.Metric)
	case h.M < 2 || h.M > maxM || h.M0 != 2*h.M:
		return bad("M/M0", [2]uint32{h.M, h.M0})
	case h.EfC < 1 || h.EfS < 1 || h.EfC > 1<<20 || h.EfS > 1<<20:
		return bad("ef", [2]uint32{h.EfC, h.EfS})
	case h.Slots > maxSlots || h.Dead > h.Slots:
		return bad("slot counts", [2]uint64{h.Slots, h.Dead})
	case h.Entry < -1 || h.Entry >= int64(h.Slots) || (h.Entry < 0) != (h.Slots == 0):
		return bad("entry", h.Entry)
	case h.Top > maxLevelCap:
		return bad("top level", h.Top)
	case h.UpperLen > h.Slots*maxLevelCap*uint64(1+h.M):
		return bad("upper slab length", h.UpperLen)
	}
	return nil
}

func (x *Index) readSections(rd *sumReader, h header) error {
	n := int(h.Slots)
	var err error
	if x.ids, err = readSlice[uint64](rd, n); err != nil {
		return err
	}
	if x.levels, err = readSlice[uint8](rd, n); err != nil {
		return err
	}
	if _, err = readSlice[uint8](rd, pad8(n)); err != nil {
		return err
	}
	if x.dead, err = readSlice[uint64](rd, words(n)); err != nil {
		return err
	}
	if x.vecs, err = readSlice[float32](rd, n*x.dim); err != nil {
		return err
	}
	if x.l0, err = readSlice[uint32](rd, n*x.stride0); err != nil {
		return err
	}
	if x.upOff, err = readSlice[uint32](rd, n); err != nil {
		return err
	}
	x.upper, err = readSlice[uint32](rd, int(h.UpperLen))
	return err
}

// sumReader checksums what it reads and, when the source tells its size,
// knows how many bytes are left so that a short file fails before any
// large allocation.
type sumReader struct {
	r     io.Reader
	sum   hash.Hash32
	left  int64 // -1 when unknown
	chunk []byte
}

func newSumReader(r io.Reader) *sumReader {
	rd := &sumReader{r: r, sum: crc32.New(crcTable), left: -1}
	switch v := r.(type) {
	case interface{ Len() int }:
		rd.left = int64(v.Len())
	case *os.File:
		if st, err := v.Stat(); err == nil && st.Mode().IsRegular() {
			if pos, err := v.Seek(0, io.SeekCurrent); err == nil {
				rd.left = st.Size() - pos
			}
		}
	}
	return rd
}

func (rd *sumReader) full(p []byte) error {
	if rd.left >= 0 && int64(len(p)) > rd.left {
		return ErrTruncated
	}
	n, err := io.ReadFull(rd.r, p)
	rd.sum.Write(p[:n])
	if rd.left >= 0 {
		rd.left -= int64(n)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return ErrTruncated
	}
	return err
}

// validate checks every structural bound, rebuilds the id table and counts
// tombstones; after it, no search or insert can index out of range.
func (x *Index) validate() error {
	n := len(x.ids)
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, a...)...)
	}
	if n%64 != 0 && len(x.dead) > 0 && x.dead[len(x.dead)-1]>>(n%64) != 0 {
		return bad("tombstone bits past the last slot")
	}
	dead := 0
	for _, w := range x.dead {
		dead += bits.OnesCount64(w)
	}
	if dead != x.nDead {
		return bad("%d tombstones, header says %d", dead, x.nDead)
	}
	if err := x.validateLists(); err != nil {
		return err
	}
	if x.entry >= 0 && int(x.levels[x.entry]) != x.top {
		return bad("entry slot %d is not on the top level", x.entry)
	}
	x.table.init(n - dead)
	for s := range uint32(n) {
		if x.isDead(s) {
			continue
		}
		if _, dup := x.table.find(x.ids[s], x.ids); dup {
			return bad("id %d twice", x.ids[s])
		}
		x.table.insert(x.ids[s], s, x.ids)
	}
	return nil
}

func (x *Index) validateLists() error {
	n := uint32(len(x.ids))
	for s := range n {
		lv := int(x.levels[s])
		if lv > maxLevelCap {
			return fmt.Errorf("%w: slot %d level %d", ErrCorrupt, s, lv)
		}
		if lv > 0 && uint64(x.upOff[s])+uint64(lv*x.strideUpper) > uint64(len(x.upper)) {
			return fmt.Errorf("%w: slot %d upper lists out of range", ErrCorrupt, s)
		}
		for l := 0; l <= lv; l++ {
			lst := x.list(s, l)
			if int(lst[0]) > x.maxLinks(l) {
				return fmt.Errorf("%w: slot %d level %d has %d links", ErrCorrupt, s, l, lst[0])
			}
			for _, nb := range lst[1 : 1+lst[0]] {
				if nb >= n || nb == s || int(x.levels[nb]) < l {
					return fmt.Errorf("%w: slot %d level %d links to %d", ErrCorrupt, s, l, nb)
				}
			}
		}
	}
	return nil
}

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
	adviseHuge(s)
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
