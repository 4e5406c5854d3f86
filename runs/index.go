package runs

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/pi-actors/pi-actors/internal/fsutil"
	"github.com/pi-actors/pi-actors/mailbox"
)

// IndexFile is the runs index: an append-only JSONL journal of run
// entries under <runs>/ (the last record of a state dir wins). It is
// rebuilt from a scan when missing or unreadable, and compacted when it
// holds many superseded records.
const IndexFile = "index.jsonl"

// Entry is one run in the index. Terminal statuses never change (archive
// appends a new record); live statuses are re-derived when listed.
type Entry struct {
	Run       string    `json:"run"`
	StateDir  string    `json:"state_dir"`
	Status    string    `json:"status"`
	OwnerID   string    `json:"ownerId,omitempty"`
	Recipe    string    `json:"recipe,omitempty"`
	Tool      string    `json:"tool,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
	Removed   bool      `json:"removed,omitempty"`
}

// Index is the runs index of one agent root.
type Index struct {
	Root string // <runs>
	// Progress, when set, hears a rebuild's progress: (0, total) first,
	// then (done, total) as run dirs are loaded (from several goroutines).
	Progress func(done, total int)

	// wmu serialises this process's writers before they take the index
	// file's lock: a writer waiting here parks its goroutine, where one
	// waiting in flock(2) holds an OS thread (a batch of spawns would
	// leave the kernel with a thread per concurrent spawn).
	wmu sync.Mutex
}

// NewIndex returns the index of <agent>/tmp/pi-actors/runs.
func NewIndex(agentDir string) *Index { return &Index{Root: Root(agentDir)} }

func (x *Index) path() string { return filepath.Join(x.Root, IndexFile) }

// lock takes the index writers' lock — this process's mutex, then the
// file lock of every process — creating the runs root if needed.
func (x *Index) lock() (func(), error) {
	if err := os.MkdirAll(x.Root, 0o700); err != nil {
		return nil, fmt.Errorf("runs index: %w", err)
	}
	x.wmu.Lock()
	unlock, err := fsutil.Lock(x.path() + ".lock")
	if err != nil {
		x.wmu.Unlock()
		return nil, err
	}
	return func() {
		unlock()
		x.wmu.Unlock()
	}, nil
}

// Record appends entries to the journal.
func (x *Index) Record(entries ...Entry) error {
	for i := range entries {
		if entries[i].UpdatedAt.IsZero() {
			entries[i].UpdatedAt = time.Now().UTC()
		}
	}
	buf := encodeEntries(entries)
	unlock, err := x.lock()
	if err != nil {
		return err
	}
	defer unlock()
	f, err := os.OpenFile(x.path(), os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("runs index: %w", err)
	}
	defer f.Close()
	if err := repairTail(f); err != nil {
		return err
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("runs index: %w", err)
	}
	return nil
}

// repairTail terminates a torn last line so the next record stays whole.
func repairTail(f *os.File) error {
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return err
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, st.Size()-1); err != nil {
		return nil // write-only handle on some systems: nothing to repair
	}
	if last[0] != '\n' {
		_, err = f.Write([]byte("\n"))
	}
	return err
}

// Entries returns the current entry of every indexed run (removed runs
// left out), newest first. A missing index is rebuilt from a scan.
func (x *Index) Entries() ([]Entry, error) {
	if keepIndexes.Load() {
		list, err := memoFor(x.path()).entries()
		if errors.Is(err, fs.ErrNotExist) {
			return x.rebuild(true)
		}
		return list, err
	}
	m, err := x.read()
	if errors.Is(err, fs.ErrNotExist) {
		return x.rebuild(true)
	}
	if err != nil {
		return nil, err
	}
	return sorted(m), nil
}

func (x *Index) read() (map[string]Entry, error) {
	f, err := os.Open(x.path())
	if err != nil {
		return nil, err
	}
	defer f.Close()
	hint := 0
	if st, err := f.Stat(); err == nil {
		if st.Size() == 0 {
			// Empty: never written whole (a crash of the machine right
			// after a rewrite, which is not fsynced): rebuild it.
			return nil, fs.ErrNotExist
		}
		hint = int(min(st.Size()/160, 1<<20)) // a record is ~150-250 bytes
	}
	m := make(map[string]Entry, hint)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		applyLine(m, sc.Bytes())
	}
	return m, sc.Err()
}

// applyLine applies one index line to the entries by state dir: the last
// record of a state dir wins, a removal drops it; a torn or foreign line
// is skipped, never fatal.
func applyLine(m map[string]Entry, line []byte) {
	var e Entry
	if !decodeEntry(line, &e) {
		e = Entry{}
		if json.Unmarshal(line, &e) != nil {
			return
		}
	}
	if e.StateDir == "" {
		return
	}
	if e.Removed {
		delete(m, e.StateDir)
		return
	}
	m[e.StateDir] = e
}

// keepIndexes: this process keeps what it read of each runs index and
// reads only the lines appended since at its next listing (KeepIndexes).
var keepIndexes atomic.Bool

// KeepIndexes makes this process keep what it read of each runs index in
// memory, so each later listing reads only what the index gained (the
// whole file again once it was compacted or rebuilt). For a long-lived
// front door that lists runs often (the MCP server); a CLI process lists
// once, and the kernel does not keep what it rarely reads.
func KeepIndexes() { keepIndexes.Store(true) }

// indexMemo is what this process read of one index file.
type indexMemo struct {
	mu     sync.Mutex
	f      *mailbox.Follower
	m      map[string]Entry
	sorted []Entry   // nil: m changed since it was sorted
	live   liveFiles // the files of the live runs it lists
}

var indexMemos sync.Map // index path → *indexMemo

func memoFor(path string) *indexMemo {
	if mo, ok := indexMemos.Load(path); ok {
		return mo.(*indexMemo)
	}
	f := mailbox.NewFollower(path)
	f.Lazy = true
	mo, _ := indexMemos.LoadOrStore(path, &indexMemo{f: f})
	return mo.(*indexMemo)
}

// entries is Entries from the memo: the lines the file gained applied,
// sorted again only when something changed.
func (mo *indexMemo) entries() ([]Entry, error) {
	mo.mu.Lock()
	defer mo.mu.Unlock()
	st, err := os.Stat(mo.f.Path)
	if err != nil {
		return nil, err
	}
	if st.Size() == 0 {
		return nil, fs.ErrNotExist // never written whole: rebuilt (read)
	}
	lines, reset, err := mo.f.Next()
	if err != nil {
		return nil, err
	}
	if reset || mo.m == nil {
		mo.m, mo.sorted = map[string]Entry{}, nil
	}
	for _, l := range lines {
		applyLine(mo.m, l.Raw)
		mo.sorted = nil
	}
	if mo.sorted == nil {
		mo.sorted = sorted(mo.m)
	}
	return slices.Clone(mo.sorted), nil
}

var entryKeys = []string{"run", "state_dir", "status", "ownerId", "recipe", "tool", "updated_at", "removed"}

// decodeEntry decodes an index line in the form Record and write give it
// (a flat object of escape-free strings and booleans) without reflection,
// so listing ten thousand runs stays fast. It reports false for anything
// else; the caller then decodes the line with encoding/json.
func decodeEntry(b []byte, e *Entry) bool {
	n := len(b)
	if n < 2 || b[0] != '{' || b[n-1] != '}' {
		return false
	}
	str := func(i int) (string, int, bool) { // b[i] == '"'
		j := bytes.IndexByte(b[i+1:], '"')
		if j < 0 {
			return "", 0, false
		}
		v, ascii := b[i+1:i+1+j], true
		for _, c := range v {
			if c < 0x20 || c == '\\' {
				return "", 0, false // control characters are invalid, escapes need decoding
			}
			ascii = ascii && c < 0x80
		}
		if !ascii && !utf8.Valid(v) {
			return "", 0, false
		}
		return string(v), i + j + 2, true
	}
	for i := 1; i < n-1; {
		if b[i] != '"' {
			return false
		}
		key, k, ok := str(i)
		if !ok || k >= n-1 || b[k] != ':' {
			return false
		}
		i = k + 1
		var val string
		var flag, isStr bool
		switch {
		case b[i] == '"':
			if val, i, ok = str(i); !ok {
				return false
			}
			isStr = true
		case bytes.HasPrefix(b[i:], []byte("true")):
			flag, i = true, i+4
		case bytes.HasPrefix(b[i:], []byte("false")):
			i += 5
		default:
			return false
		}
		if isStr == (key == "removed") {
			return false // a string where a bool belongs (or the other way), or an unknown key
		}
		switch key {
		case "run":
			e.Run = val
		case "state_dir":
			e.StateDir = val
		case "status":
			e.Status = val
		case "ownerId":
			e.OwnerID = val
		case "recipe":
			e.Recipe = val
		case "tool":
			e.Tool = val
		case "removed":
			e.Removed = flag
		case "updated_at":
			if e.UpdatedAt.UnmarshalText([]byte(val)) != nil {
				return false
			}
		default:
			for _, k := range entryKeys {
				if strings.EqualFold(key, k) {
					return false // encoding/json also matches keys in another case
				}
			}
		}
		if i < n-1 {
			if b[i] != ',' || i+1 == n-1 {
				return false
			}
			i++
		} else if i != n-1 {
			return false
		}
	}
	return true
}

func sorted(m map[string]Entry) []Entry {
	out := make([]Entry, 0, len(m))
	for _, e := range m {
		out = append(out, e)
	}
	sortEntries(out)
	return out
}

// sortEntries orders entries newest first, then by run id.
func sortEntries(es []Entry) {
	slices.SortFunc(es, func(a, b Entry) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.Run, b.Run)
	})
}

// Rebuild scans <runs> for state directories (holding run.json or an
// archive tombstone, directly under it, archived/ copies skipped), keeps
// the indexed runs with a custom state_dir outside it whose directory
// still holds them, and rewrites the index atomically. It holds the writers' lock from the scan
// to the rewrite: an entry recorded meanwhile (a spawn) is in the index
// after it, not lost under a snapshot taken before it.
func (x *Index) Rebuild() ([]Entry, error) { return x.rebuild(false) }

// rebuild is Rebuild; ifMissing (the index was missing or empty) reads
// the index instead when another writer rebuilt it meanwhile.
func (x *Index) rebuild(ifMissing bool) ([]Entry, error) {
	unlock, err := x.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if ifMissing {
		m, err := x.read()
		if err == nil {
			return sorted(m), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	names, err := runDirNames(x.Root)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("runs index: %w", err)
	}
	// Loading is most of the work (a file or two per run): spread it over
	// the CPUs, each worker taking the next run dir by number.
	loaded := make([]*Info, len(names))
	var wg sync.WaitGroup
	var next, done atomic.Int64
	if x.Progress != nil {
		x.Progress(0, len(names))
	}
	for range min(len(names), max(2, runtime.NumCPU())) {
		wg.Go(func() {
			r := newRebuildReader(x.Root)
			defer r.close()
			for i := int(next.Add(1) - 1); i < len(names); i = int(next.Add(1) - 1) {
				if in, err := r.load(names[i]); err == nil {
					loaded[i] = in
				}
				if x.Progress != nil {
					x.Progress(int(done.Add(1)), len(names))
				}
			}
		})
	}
	wg.Wait()
	// One entry per run dir: no journal records to supersede each other.
	entries := make([]Entry, 0, len(names))
	for _, in := range loaded {
		if in != nil {
			entries = append(entries, EntryOf(in))
		}
	}
	// A run with a custom state_dir lives outside the root, where no scan
	// looks: the index is its only record. Such an entry stays while its
	// directory still holds that run.
	entries = append(entries, x.outside()...)
	if err := x.writeLocked(entries); err != nil {
		return nil, err
	}
	sortEntries(entries)
	return entries, nil
}

// outside is the index's entries (as read now, under the writers' lock)
// whose state dir lies outside the runs root and still holds that run
// (run.json or an archive tombstone naming it), freshly loaded.
func (x *Index) outside() []Entry {
	m, err := x.read()
	if err != nil {
		return nil
	}
	var out []Entry
	for sd, e := range m {
		if rel, err := filepath.Rel(x.Root, sd); err == nil && filepath.IsLocal(rel) {
			continue
		}
		in, err := Load(Dir(sd))
		if err != nil || in.Meta == nil || in.Meta.Run != e.Run {
			continue
		}
		out = append(out, EntryOf(in))
	}
	return out
}

// runDirNames lists the directories directly under the runs root that
// may be state directories: not archived/ (copies), tmp/ or a dot-name
// (staging directories, hidden state). A run's own files hold no other
// run, so nothing deeper is looked at. The order is the directory's.
func runDirNames(root string) ([]string, error) {
	f, err := os.Open(root)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	des, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(des))
	for _, d := range des {
		if n := d.Name(); d.IsDir() && runDirName(n) {
			names = append(names, n)
		}
	}
	return names, nil
}

// Compact rewrites the journal with one record per run.
// The journal is read under the writers' lock: a record appended
// between the read and the rewrite would be lost.
func (x *Index) Compact() error {
	unlock, err := x.lock()
	if err != nil {
		return err
	}
	defer unlock()
	m, err := x.read()
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	return x.writeLocked(sorted(m))
}

// writeLocked replaces the index with entries; the caller holds the
// writers' lock.
func (x *Index) writeLocked(entries []Entry) error {
	buf := encodeEntries(entries)
	// The index is rebuilt from the state directories whenever it is
	// missing or empty, so a rewrite needs no fsync (fsutil.WriteSnapshot).
	return fsutil.WriteSnapshot(x.path(), buf.Bytes(), 0o600)
}

// encodeEntries renders entries as JSON lines, byte for byte what
// encoding/json writes for each (appendEntry).
func encodeEntries(entries []Entry) *bytes.Buffer {
	b := make([]byte, 0, 160*len(entries))
	for i := range entries {
		b = appendEntry(b, &entries[i])
		b = append(b, '\n')
	}
	return bytes.NewBuffer(b)
}

// appendEntry appends e as encoding/json marshals it, without its
// reflection (a rebuild writes one per run dir).
func appendEntry(b []byte, e *Entry) []byte {
	b = append(b, `{"run":`...)
	b = appendJSONString(b, e.Run)
	b = append(b, `,"state_dir":`...)
	b = appendJSONString(b, e.StateDir)
	b = append(b, `,"status":`...)
	b = appendJSONString(b, e.Status)
	for _, f := range [...]struct{ key, val string }{{`,"ownerId":`, e.OwnerID}, {`,"recipe":`, e.Recipe}, {`,"tool":`, e.Tool}} {
		if f.val != "" {
			b = append(b, f.key...)
			b = appendJSONString(b, f.val)
		}
	}
	b = append(b, `,"updated_at":`...)
	if y := e.UpdatedAt.Year(); y >= 0 && y <= 9999 {
		b = append(b, '"')
		b = e.UpdatedAt.AppendFormat(b, time.RFC3339Nano)
		b = append(b, '"')
	} else {
		t, _ := json.Marshal(e.UpdatedAt) // refused: encoding/json fails the entry too
		b = append(b, t...)
	}
	if e.Removed {
		b = append(b, `,"removed":true`...)
	}
	return append(b, '}')
}

// appendJSONString appends s quoted as encoding/json does: a plain
// printable ASCII string as is, anything else (escapes, HTML characters,
// other UTF-8) through encoding/json.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// EntryOf summarises a loaded run for the index.
func EntryOf(in *Info) Entry {
	e := Entry{Run: in.Meta.Run, StateDir: string(in.Dir), Status: in.Status, OwnerID: in.Meta.OwnerID,
		Recipe: in.Meta.Recipe, Tool: in.Meta.Tool, UpdatedAt: in.Meta.CreatedAt}
	if in.Progress != nil && in.Progress.UpdatedAt.After(e.UpdatedAt) {
		e.UpdatedAt = in.Progress.UpdatedAt
	}
	if in.Result != nil && in.Result.CompletedAt.After(e.UpdatedAt) {
		e.UpdatedAt = in.Result.CompletedAt
	}
	return e
}

// List returns the indexed runs with current statuses: terminal entries
// are final; live ones are re-derived from their state directory now.
// filter is all/"" , active, terminal, or one status.
func (x *Index) List(filter string) ([]*Info, error) {
	entries, err := x.Entries()
	if err != nil {
		return nil, err
	}
	var live *liveFiles
	var seen map[Dir]bool
	if keepIndexes.Load() {
		live, seen = &memoFor(x.path()).live, map[Dir]bool{}
		defer func() { live.prune(seen) }()
	}
	out := make([]*Info, 0, len(entries))
	for _, e := range entries {
		var in *Info
		if Terminal(e.Status) {
			in = &Info{Dir: Dir(e.StateDir), Status: e.Status, Meta: &Meta{Run: e.Run, Address: "run:" + e.Run, StateDir: e.StateDir, OwnerID: e.OwnerID, Recipe: e.Recipe, Tool: e.Tool, CreatedAt: e.UpdatedAt}}
		} else {
			dir := Dir(e.StateDir)
			var files fileReader = directReader{dir}
			if live != nil {
				files, seen[dir] = live.reader(dir), true
			}
			loaded, err := loadFrom(dir, true, files)
			if err != nil {
				continue // gone since it was indexed
			}
			in = loaded
		}
		if Matches(in.Status, filter) {
			out = append(out, in)
		}
	}
	return out, nil
}

// Matches applies a status filter: all (or ""), active, terminal, or an
// exact status.
func Matches(status, filter string) bool {
	switch filter {
	case "", "all":
		return true
	case "active":
		return !Terminal(status)
	case "terminal":
		return Terminal(status)
	}
	return status == filter
}

// ValidFilter reports whether a status filter is known.
func ValidFilter(f string) bool {
	switch f {
	case "", "all", "active", "terminal", StatusRunning, StatusBackoff, StatusSuspended, StatusDone, StatusFailed, StatusCancelled, StatusKilled, StatusExited, StatusArchived:
		return true
	}
	return false
}
