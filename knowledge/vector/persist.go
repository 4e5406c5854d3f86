package vector

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/pi-actors/pi-actors/internal/fsutil"
	"github.com/pi-actors/pi-actors/knowledge/api/vectorop"
	"github.com/pi-actors/pi-actors/knowledge/hnsw"
)

// An index file holds one domain's HNSW graph next to the store:
// <db>.<domain>.hnsw. Layout (little endian): magic "PIVGIX\x00\x01",
// embedder id (u16 length + bytes), the highest vector id included (u64),
// the vector count (u64), the store's delete generation of that embedder
// (u64), then the knowledge/hnsw format (which carries its own checksum),
// then the node types: the type names (u16 count, each u8 length +
// bytes), the node seqs (u64 count + u64 each), one u8 type index per
// seq, and a CRC-32C of this type section.
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

	// from the type section
	seqs  []uint64
	codes []uint8
}

// typeNames lists the node type names by code.
var typeNames = func() []string {
	names := make([]string, len(typeCodes))
	for n, c := range typeCodes {
		names[c] = n
	}
	return names
}()

func indexPath(db, domain string) string { return db + "." + domain + ".hnsw" }

// A graph is written to a temp file next to it, .<db>.<domain>.hnsw.tmp-<digits>
// (os.CreateTemp's pattern), locked (flock) while it is written: a
// process killed mid-write leaves it behind unlocked, up to the size of
// the graph.
const tmpInfix, tmpSuffix = ".hnsw", ".tmp-"

// isIndexTemp reports whether name is the temp file of one of db's
// (base name) graphs: exactly .<db>.<domain>.hnsw.tmp-<digits>.
func isIndexTemp(db, name string) bool {
	for _, d := range vectorop.AllDomains {
		digits, ok := strings.CutPrefix(name, "."+db+"."+d+tmpInfix+tmpSuffix)
		if ok && digits != "" && strings.Trim(digits, "0123456789") == "" {
			return true
		}
	}
	return false
}

// removeStaleTemps removes the temp files of db's graphs that no process
// is writing (their writer's lock is gone: it was killed mid-write), and
// returns how many it removed. A temp file another process is writing is
// left alone.
func removeStaleTemps(db string) (int, error) {
	dir, base := filepath.Dir(db), filepath.Base(db)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("remove stale index temp files of %s: %w", db, err)
	}
	n := 0
	var errs []error
	for _, e := range entries {
		if !e.Type().IsRegular() || !isIndexTemp(base, e.Name()) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		f, err := os.OpenFile(p, os.O_RDONLY|unix.O_NOFOLLOW, 0)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("remove stale index temp file %s: %w", p, err))
			}
			continue
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			f.Close() // a live writer holds it (or flock failed): leave it
			continue
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove stale index temp file %s: %w", p, err))
		} else if err == nil {
			n++
		}
		f.Close()
	}
	return n, errors.Join(errs...)
}

// writeIndex writes vi's graph atomically (temp file locked while it is
// written, fsync, rename, fsync dir). It holds vi's read lock while
// writing.
func writeIndex(path, embedder string, delGen int64, vi *domainIndex) error {
	vi.mu.RLock()
	defer vi.mu.RUnlock()
	if vi.graph == nil || vi.building {
		return nil
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+tmpSuffix+"*")
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
	// Locked until closed (or the process dies): removeStaleTemps of
	// another process leaves it alone meanwhile.
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		return fmt.Errorf("write index %s: lock %s: %w", path, tmp, err)
	}
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
	if _, err := w.Write(typeSection(vi)); err != nil {
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

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// typeSection encodes the node types of vi's vectors.
func typeSection(vi *domainIndex) []byte {
	b := binary.LittleEndian.AppendUint16(nil, uint16(len(typeNames)))
	for _, n := range typeNames {
		b = append(append(b, byte(len(n))), n...)
	}
	var seqs []uint64
	var codes []byte
	for seq, t := range vi.types {
		if t != 0 {
			seqs, codes = append(seqs, uint64(seq)), append(codes, t-1)
		}
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(len(seqs)))
	for _, s := range seqs {
		b = binary.LittleEndian.AppendUint64(b, s)
	}
	b = append(b, codes...)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// readTypes reads the type section into h, mapping the file's type
// names to this binary's codes.
func readTypes(r io.Reader, h *indexHeader) error {
	var sum []byte
	read := func(n int) ([]byte, error) {
		p := make([]byte, n)
		if _, err := io.ReadFull(r, p); err != nil {
			return nil, fmt.Errorf("%w: type section: %v", errStaleIndex, err)
		}
		sum = append(sum, p...)
		return p, nil
	}
	p, err := read(2)
	if err != nil {
		return err
	}
	names := make([]string, binary.LittleEndian.Uint16(p))
	for i := range names {
		l, err := read(1)
		if err != nil {
			return err
		}
		if p, err = read(int(l[0])); err != nil {
			return err
		}
		names[i] = string(p)
	}
	if p, err = read(8); err != nil {
		return err
	}
	n := binary.LittleEndian.Uint64(p)
	if n != uint64(h.count) {
		return fmt.Errorf("%w: %d types for %d vectors", errStaleIndex, n, h.count)
	}
	if p, err = read(int(9 * n)); err != nil {
		return err
	}
	tail := make([]byte, 4)
	if _, err := io.ReadFull(r, tail); err != nil || binary.LittleEndian.Uint32(tail) != crc32.Checksum(sum, castagnoli) {
		return fmt.Errorf("%w: type section checksum", errStaleIndex)
	}
	h.seqs, h.codes = make([]uint64, n), make([]uint8, n)
	for i := range h.seqs {
		h.seqs[i] = binary.LittleEndian.Uint64(p[8*i:])
		c := int(p[8*int(n)+i])
		if c >= len(names) {
			return fmt.Errorf("%w: type index %d", errStaleIndex, c)
		}
		code, ok := typeCodes[names[c]]
		if !ok {
			return fmt.Errorf("%w: unknown node type %q", errStaleIndex, names[c])
		}
		h.codes[i] = code
	}
	return nil
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
	if err := readTypes(br, &h); err != nil {
		return h, nil, err
	}
	for _, seq := range h.seqs {
		if !g.Contains(seq) {
			return h, nil, fmt.Errorf("%w: node %d has a type but no vector", errStaleIndex, seq)
		}
	}
	return h, g, nil
}
