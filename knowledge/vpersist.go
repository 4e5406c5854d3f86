package knowledge

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/pi-actors/pi-actors/internal/fsutil"
	"github.com/pi-actors/pi-actors/knowledge/hnsw"
)

// An index file holds one domain's HNSW graph next to the store:
// <db>.<domain>.hnsw. Layout (little endian): magic "PIVGIX\x00\x01",
// embedder id (u16 length + bytes), the highest vector id included (u64),
// the vector count (u64), the store's delete generation of that embedder
// (u64), then the knowledge/hnsw format (which carries its own checksum).
// A file whose embedder, delete generation or count does not match
// SQLite is stale and ignored; vectors newer than its vector id are added
// after loading. Only graphs are persisted: an exact-scan domain loads
// from SQLite, which is as fast.
var indexMagic = []byte("PIVGIX\x00\x01")

// errStaleIndex marks an index file that does not match the store.
var errStaleIndex = errors.New("stale index file")

type indexHeader struct {
	embedder string
	vid      int64
	count    int64
	delGen   int64
}

func indexPath(db, domain string) string { return db + "." + domain + ".hnsw" }

// writeIndex writes vi's graph atomically (temp file, fsync, rename,
// fsync dir). It holds vi's read lock while writing.
func writeIndex(path, embedder string, delGen int64, vi *vindex) error {
	vi.mu.RLock()
	defer vi.mu.RUnlock()
	if vi.graph == nil || vi.building {
		return nil
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write index %s: %w", path, err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	w := bufio.NewWriterSize(f, 1<<20)
	hdr := make([]byte, 0, 64)
	hdr = append(hdr, indexMagic...)
	hdr = binary.LittleEndian.AppendUint16(hdr, uint16(len(embedder)))
	hdr = append(hdr, embedder...)
	hdr = binary.LittleEndian.AppendUint64(hdr, uint64(vi.vid))
	hdr = binary.LittleEndian.AppendUint64(hdr, uint64(vi.count))
	hdr = binary.LittleEndian.AppendUint64(hdr, uint64(delGen))
	if _, err := w.Write(hdr); err != nil {
		return fmt.Errorf("write index %s: %w", path, err)
	}
	if _, err := vi.graph.WriteTo(w); err != nil {
		return fmt.Errorf("write index %s: %w", path, err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write index %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("write index %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write index %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write index %s: %w", path, err)
	}
	ok = true
	vi.dirty = false
	return fsutil.SyncDir(dir)
}

// readIndexHeader reads the header of an index file.
func readIndexHeader(r io.Reader) (indexHeader, error) {
	var h indexHeader
	fixed := make([]byte, len(indexMagic)+2)
	if _, err := io.ReadFull(r, fixed); err != nil {
		return h, fmt.Errorf("%w: %v", errStaleIndex, err)
	}
	if string(fixed[:len(indexMagic)]) != string(indexMagic) {
		return h, fmt.Errorf("%w: not an index file", errStaleIndex)
	}
	emb := make([]byte, binary.LittleEndian.Uint16(fixed[len(indexMagic):]))
	rest := make([]byte, 24)
	if _, err := io.ReadFull(r, emb); err != nil {
		return h, fmt.Errorf("%w: %v", errStaleIndex, err)
	}
	if _, err := io.ReadFull(r, rest); err != nil {
		return h, fmt.Errorf("%w: %v", errStaleIndex, err)
	}
	h.embedder = string(emb)
	h.vid = int64(binary.LittleEndian.Uint64(rest))
	h.count = int64(binary.LittleEndian.Uint64(rest[8:]))
	h.delGen = int64(binary.LittleEndian.Uint64(rest[16:]))
	return h, nil
}

// readIndex opens an index file and returns its header and graph when
// accept approves the header; errStaleIndex (wrapped) otherwise.
func readIndex(path string, accept func(indexHeader) bool) (indexHeader, *hnsw.Index, error) {
	f, err := os.Open(path)
	if err != nil {
		return indexHeader{}, nil, fmt.Errorf("%w: %v", errStaleIndex, err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	h, err := readIndexHeader(br)
	if err != nil {
		return h, nil, err
	}
	if !accept(h) {
		return h, nil, fmt.Errorf("%w: made for another state of the store", errStaleIndex)
	}
	g, err := hnsw.Read(br)
	if err != nil {
		return h, nil, fmt.Errorf("%w: %v", errStaleIndex, err)
	}
	if int64(g.Len()) != h.count {
		return h, nil, fmt.Errorf("%w: %d vectors, header says %d", errStaleIndex, g.Len(), h.count)
	}
	return h, g, nil
}
