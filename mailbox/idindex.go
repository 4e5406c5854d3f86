package mailbox

import (
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"

	"github.com/pi-actors/pi-actors/internal/fsutil"
)

// The duplicate check of an idempotent append (findID) must know whether
// an inbox already holds a record with a caller's id. Reading the whole
// inbox for every message makes n messages to one inbox cost O(n²) bytes
// read: 16,000 branch messages copied into one run's inbox took minutes.
// So a process keeps, for the few largest inboxes it searched last, where
// each id's first record starts, and reads only what a file gained since
// (a Follower; a rewrite or replacement starts the index over). Small
// files are still read whole: that is as cheap as the index.

// idIndexMin is the file size from which findID uses an index.
const idIndexMin = 64 << 10

// idIndexMax bounds the inboxes indexed at once (the least recently
// searched is dropped), and so the memory: 16 bytes and a map slot per
// record of each.
const idIndexMax = 16

// idIndex is one inbox's index: the offset of the first record of each
// id, keyed by a hash of the id (a collision is caught when the line at
// the offset is checked, and answered by a full scan).
type idIndex struct {
	mu   sync.Mutex
	f    *Follower
	offs map[uint64]int64
	used uint64
}

var idIndexes = struct {
	mu    sync.Mutex
	m     map[string]*idIndex
	clock uint64
	seed  maphash.Seed
}{m: map[string]*idIndex{}, seed: maphash.MakeSeed()}

// indexFor returns path's index, making it (and dropping the least
// recently used one past idIndexMax) if needed.
func indexFor(path string) *idIndex {
	idIndexes.mu.Lock()
	defer idIndexes.mu.Unlock()
	idIndexes.clock++
	x := idIndexes.m[path]
	if x == nil {
		if len(idIndexes.m) >= idIndexMax {
			var oldest string
			for p, y := range idIndexes.m {
				if oldest == "" || y.used < idIndexes.m[oldest].used {
					oldest = p
				}
			}
			delete(idIndexes.m, oldest)
		}
		x = &idIndex{f: &Follower{Path: path, Lazy: true}, offs: map[uint64]int64{}}
		idIndexes.m[path] = x
	}
	x.used = idIndexes.clock
	return x
}

func idHash(id string) uint64 { return maphash.String(idIndexes.seed, id) }

// findID returns the first record with id, or nil. The caller holds the
// lock. Ids are tokens, which JSON writes without escapes, so a record with
// the id contains the bytes "<id>" (quoted): only lines with that are
// decoded.
func findID(path, id string) (Record, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if fi.Size() < idIndexMin {
		return scanID(path, id)
	}
	rec, sure, err := indexFor(path).find(id)
	if err != nil || sure {
		return rec, err
	}
	return scanID(path, id)
}

// find looks id up after reading what the file gained. sure is false when
// the index cannot answer (the line it points at is not that record):
// the caller scans the file.
func (x *idIndex) find(id string) (rec Record, sure bool, err error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	lines, reset, err := x.f.next()
	if err != nil {
		return nil, false, err
	}
	if reset {
		clear(x.offs)
	}
	for i := range lines {
		l := &lines[i]
		key, ok := l.Peek("id")
		if ok {
			key = strings.TrimSpace(key)
		} else if l.decode(); l.Err == nil {
			key = Record(l.Value).ID()
		}
		if key == "" {
			continue
		}
		if h := idHash(key); !hasKey(x.offs, h) {
			x.offs[h] = l.Off
		}
	}
	off, ok := x.offs[idHash(id)]
	if !ok {
		// Certain unless the file ends in a line without its newline (a
		// torn write), which the follower leaves unread.
		fi, err := os.Stat(x.f.Path)
		return nil, err == nil && fi.Size() == x.f.Offset(), nil
	}
	raw, err := lineAt(x.f.Path, off)
	if err != nil {
		return nil, false, err
	}
	l := Line{Raw: raw}
	if l.decode(); l.Err == nil && Record(l.Value).ID() == id {
		return Record(l.Value), true, nil
	}
	return nil, false, nil
}

func hasKey(m map[uint64]int64, k uint64) bool { _, ok := m[k]; return ok }

// lineAt reads the line that starts at off (without its newline).
func lineAt(path string, off int64) ([]byte, error) {
	f, err := fsutil.OpenRaw(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	var line []byte
	buf := make([]byte, 4096)
	for {
		n, err := f.ReadAt(buf, off)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			return append(line, buf[:i]...), nil
		}
		line = append(line, buf[:n]...)
		off += int64(n)
		if err == io.EOF || n == 0 {
			return line, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		buf = make([]byte, 2*len(buf))
	}
}

// scanID is findID reading the whole file.
func scanID(path, id string) (Record, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	needle := []byte(`"` + id + `"`)
	for off := 0; ; {
		i := bytes.Index(data[off:], needle)
		if i < 0 {
			return nil, nil
		}
		i += off
		start := bytes.LastIndexByte(data[:i], '\n') + 1
		end := bytes.IndexByte(data[i:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += i
		}
		l := Line{Raw: data[start:end]}
		if l.decode(); l.Err == nil && Record(l.Value).ID() == id {
			return Record(l.Value), nil
		}
		off = end
	}
}
