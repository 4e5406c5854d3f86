package hnsw

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestPersistRoundTrip(t *testing.T) {
	const dim, n = 32, 2000
	data := clustered(n, dim, 20, 16, 3, 1)
	queries := clustered(50, dim, 20, 16, 3, 2)
	for _, m := range []Metric{Cosine, L2, InnerProduct} {
		t.Run(m.String(), func(t *testing.T) {
			x := build(t, dim, data, Options{Metric: m, M: 8, EfSearch: 40})
			for i := uint64(0); i < 100; i++ {
				x.Delete(1000 + 3*i)
			}
			// Deleting the entry point lowers the top level below that of
			// dead slots; the file must still load.
			top := x.top
			for x.top == top {
				x.Delete(x.ids[x.entry])
			}
			path := filepath.Join(t.TempDir(), "index.hnsw")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			wn, err := x.WriteTo(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			if st, _ := os.Stat(path); st.Size() != wn {
				t.Fatalf("WriteTo returned %d, file has %d bytes", wn, st.Size())
			}
			f, err = os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			y, err := Read(f)
			if err != nil {
				t.Fatal(err)
			}
			if y.Len() != x.Len() || y.Options() != x.Options() || y.Dim() != dim {
				t.Fatalf("loaded Len %d Options %+v, want %d %+v", y.Len(), y.Options(), x.Len(), x.Options())
			}
			for i := range 50 {
				q := queries[i*dim : (i+1)*dim]
				a, b := x.Search(q, 10, 0), y.Search(q, 10, 0)
				if !slices.Equal(a, b) {
					t.Fatalf("query %d: before %v, after %v", i, a, b)
				}
			}
			// The loaded index keeps working: deletes, adds, the same ids.
			if !y.Delete(1001) || y.Contains(1001) || y.Delete(1000) {
				t.Fatal("delete after load")
			}
			if err := y.Add(1000, data[:dim]); err != nil {
				t.Fatal(err)
			}
			if err := y.Add(1002, data[:dim]); !errors.Is(err, ErrDuplicate) {
				t.Fatalf("Add of a loaded live id: %v, want ErrDuplicate", err)
			}
		})
	}
}

func TestPersistEmpty(t *testing.T) {
	var buf bytes.Buffer
	if _, err := New(3, Options{}).WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	y, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if y.Len() != 0 || y.Search([]float32{1, 2, 3}, 5, 0) != nil {
		t.Fatal("empty index not empty after load")
	}
	if err := y.Add(1, []float32{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if r := y.Search([]float32{1, 2, 3}, 5, 0); len(r) != 1 || r[0].ID != 1 {
		t.Fatalf("search after add: %v", r)
	}
}

// onlyReader hides the Len method of a bytes.Reader, so Read cannot know
// the size in advance.
type onlyReader struct{ r *bytes.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

func TestReadRejects(t *testing.T) {
	const dim = 8
	x := build(t, dim, clustered(300, dim, 5, 4, 4, 1), Options{M: 4})
	var buf bytes.Buffer
	if _, err := x.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	if _, err := Read(bytes.NewReader(good)); err != nil {
		t.Fatalf("good data: %v", err)
	}
	for _, cut := range []int{0, 4, 8, 20, 80, 81, len(good) / 2, len(good) - 5, len(good) - 1} {
		for _, sized := range []bool{true, false} {
			var r = bytes.NewReader(good[:cut])
			var err error
			if sized {
				_, err = Read(r)
			} else {
				_, err = Read(onlyReader{r})
			}
			if !errors.Is(err, ErrTruncated) {
				t.Errorf("cut at %d (sized %v): %v, want ErrTruncated", cut, sized, err)
			}
		}
	}
	foreign := [][]byte{
		[]byte("SQLite format 3\x00 and then some more bytes to fill a header"),
		bytes.Repeat([]byte{0}, 200),
	}
	for _, f := range foreign {
		if _, err := Read(bytes.NewReader(f)); !errors.Is(err, ErrFormat) {
			t.Errorf("foreign %q: %v, want ErrFormat", f[:8], err)
		}
	}
	flipped := slices.Clone(good)
	flipped[len(flipped)-200] ^= 0x10
	if _, err := Read(bytes.NewReader(flipped)); !errors.Is(err, ErrChecksum) {
		t.Errorf("flipped byte: %v, want ErrChecksum", err)
	}
	// A link out of range under a valid checksum: caught by validation.
	n := len(x.ids)
	l0 := 8 + binary.Size(header{}) + 8*n + n + pad8(n) + 8*words(n) + 4*n*dim
	corrupt := slices.Clone(good)
	binary.LittleEndian.PutUint32(corrupt[l0+4:], 1<<30) // slot 0's first link
	if _, err := Read(bytes.NewReader(withChecksum(corrupt))); !errors.Is(err, ErrCorrupt) {
		t.Errorf("link out of range: %v, want ErrCorrupt", err)
	}
	version := slices.Clone(good)
	version[8] = 9
	if _, err := Read(bytes.NewReader(version)); !errors.Is(err, ErrVersion) {
		t.Errorf("version 9: %v, want ErrVersion", err)
	}
}
