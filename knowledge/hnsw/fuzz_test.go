package hnsw

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"
)

// FuzzRead feeds Read arbitrary bytes, and the same bytes with the
// checksum trailer recomputed so that mutations reach the structural
// checks. Read must never panic, and an index it accepts must survive
// searches, adds, deletes and a second round trip.
func FuzzRead(f *testing.F) {
	for _, seed := range fuzzSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, b := range [][]byte{data, withChecksum(data)} {
			x, err := Read(bytes.NewReader(b))
			if err != nil {
				continue
			}
			exercise(t, x)
		}
	})
}

func fuzzSeeds(f *testing.F) [][]byte {
	var out [][]byte
	for _, n := range []int{0, 1, 5, 40} {
		x := New(3, Options{M: 2, EfConstruction: 4})
		for i := range n {
			v := []float32{float32(i), float32(i % 3), 1}
			if err := x.Add(uint64(i), v); err != nil {
				f.Fatal(err)
			}
		}
		if n > 3 {
			x.Delete(2)
		}
		var buf bytes.Buffer
		if _, err := x.WriteTo(&buf); err != nil {
			f.Fatal(err)
		}
		out = append(out, buf.Bytes())
	}
	// An index that already holds the id exercise adds (CI found it).
	x := New(3, Options{M: 2, EfConstruction: 4})
	if err := x.Add(1<<63, []float32{1, 2, 3}); err != nil {
		f.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := x.WriteTo(&buf); err != nil {
		f.Fatal(err)
	}
	return append(out, buf.Bytes(), []byte("PIHNSW\x00\n"), []byte{})
}

// withChecksum returns data with its last four bytes replaced by the
// CRC-32C of the rest.
func withChecksum(data []byte) []byte {
	if len(data) < 4 {
		return data
	}
	b := bytes.Clone(data)
	n := len(b) - 4
	binary.LittleEndian.PutUint32(b[n:], crc32.Checksum(b[:n], crcTable))
	return b
}

func exercise(t *testing.T, x *Index) {
	dim := x.Dim()
	q := make([]float32, dim)
	for i := range q {
		q[i] = float32(i%5) - 2
	}
	x.Search(q, 5, 0)
	x.SearchFilter(q, 3, 8, func(id uint64) bool { return id%2 == 0 })
	x.SearchExact(q, 2, nil)
	// A fuzzed index may hold any id, 1<<63 included: add one it lacks.
	id := uint64(1 << 63)
	for x.Contains(id) {
		id++
	}
	if err := x.Add(id, q); err != nil {
		t.Fatalf("add to a loaded index: %v", err)
	}
	x.Delete(id)
	x.Delete(0)
	x.Search(q, 5, 0)
	var buf bytes.Buffer
	if _, err := x.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(&buf); err != nil {
		t.Fatalf("an accepted index does not round-trip: %v", err)
	}
}
