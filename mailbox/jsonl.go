package mailbox

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/pi-actors/pi-actors/internal/fsutil"
)

// LockWait is how long a JSONL operation waits for the file's lock before
// it fails with an error wrapping fsutil.ErrLockTimeout.
const LockWait = 5 * time.Second

// filePerm is the mode of JSONL files and lock files this package creates:
// messages can carry anything, so only the owner reads them.
const (
	filePerm = 0o600
	dirPerm  = 0o700
)

// Line is one line of a JSONL file. A line that is not exactly one JSON
// object is reported with Err set (wrapping ErrMalformed) and its bytes in
// Raw; it is never dropped.
type Line struct {
	N       int            // 1-based line number (blank lines count); 0 from Tail
	Off     int64          // byte offset of the line's first byte
	Raw     []byte         // the line without its newline
	Value   map[string]any // the decoded object (numbers as json.Number); nil if Err
	Err     error          // why the line is malformed; nil for a record
	Partial bool           // the file's last line, without a newline: torn or still being written
}

// Set sets one field of a record line, keeping the order of the other keys
// and the exact bytes of their values. It refuses a malformed line.
func (l *Line) Set(key string, v any) error {
	if l.Value == nil && l.Err == nil {
		l.decode() // a lazy line
	}
	if l.Err != nil {
		return fmt.Errorf("set %s on line %d: %w", key, l.N, l.Err)
	}
	o, err := parseObject(l.Raw)
	if err != nil {
		return fmt.Errorf("set %s on line %d: %w: %v", key, l.N, ErrMalformed, err)
	}
	if err := o.set(key, v); err != nil {
		return err
	}
	l.Raw = o.bytes()
	if l.Value == nil {
		l.Value = map[string]any{}
	}
	l.Value[key] = v
	return nil
}

// SetAll sets several top-level fields (key, value, key, value, …) with
// one parse and one encoding of the line — what a claim or a status change
// costs per record.
func (l *Line) SetAll(kv ...any) error {
	if l.Value == nil && l.Err == nil {
		l.decode() // a lazy line
	}
	if l.Err != nil {
		return fmt.Errorf("set fields on line %d: %w", l.N, l.Err)
	}
	o, err := parseObject(l.Raw)
	if err != nil {
		return fmt.Errorf("set fields on line %d: %w: %v", l.N, ErrMalformed, err)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		key := kv[i].(string)
		if err := o.set(key, kv[i+1]); err != nil {
			return err
		}
		l.Value[key] = kv[i+1]
	}
	l.Raw = o.bytes()
	return nil
}

// LockPath is what guards a JSONL file: its directory, flock'ed — one
// lock for every JSONL file in it (a run's events, inbox, outbox and wake
// files) and no lock file to create. (The data file itself cannot be the
// lock: a rewrite replaces its inode.) No operation of this package takes
// it twice.
func LockPath(path string) string {
	return filepath.Dir(path)
}

// Append appends each record as one JSON line under the file's lock,
// creating the file (mode 0600) and its directory if needed. Records must
// encode as JSON objects. All lines of one call go out in a single write,
// so they land together and never interleave with another writer's. If the
// file ends in a torn line (a crash mid-write), a newline is written first:
// the fragment stays as its own malformed line and the new records stay
// intact. A failed write is truncated away. Append does not fsync: the line
// survives any process crash; use AppendSync to survive power loss too.
func Append(path string, records ...any) error {
	return appendRecords(path, false, records)
}

// AppendSync is Append followed by fsync of the file (and of its directory
// when the file was new) before the lock is released.
func AppendSync(path string, records ...any) error {
	return appendRecords(path, true, records)
}

func appendRecords(path string, sync bool, records []any) error {
	if len(records) == 0 {
		return nil
	}
	buf, err := encodeLines(path, records)
	if err != nil {
		return err
	}
	unlock, err := lockFile(path)
	if err != nil {
		return err
	}
	defer unlock()
	return appendLocked(path, buf, sync)
}

// Create writes a new JSONL file path (mode 0600; it must not exist)
// holding records, without the lock or an fsync: for a directory no
// other process opens yet (a state directory being staged).
func Create(path string, records ...any) error {
	buf, err := encodeLines(path, records)
	if err != nil {
		return err
	}
	return fsutil.CreateFile(path, buf, 0o600, false)
}

// encodeLines encodes records as JSON lines, each ending in a newline;
// path names the file in the error.
func encodeLines(path string, records []any) ([]byte, error) {
	var buf []byte
	for _, r := range records {
		b, err := encodeLine(r)
		if err != nil {
			return nil, fmt.Errorf("append %s: %w", path, err)
		}
		buf = append(append(buf, b...), '\n')
	}
	return buf, nil
}

// encodeLine encodes a record as one line of compact JSON.
func encodeLine(r any) ([]byte, error) {
	b, err := marshal(r)
	if err != nil {
		return nil, err
	}
	if len(b) == 0 || b[0] != '{' {
		return nil, fmt.Errorf("record is not a JSON object: %.40s", b)
	}
	if bytes.IndexByte(b, '\n') >= 0 { // cannot happen with encoding/json; guard the format
		return nil, errors.New("record encodes with a raw newline")
	}
	return b, nil
}

// lockFile takes the lock of a JSONL file, creating its directory if
// needed.
func lockFile(path string) (func(), error) {
	lp := LockPath(path)
	unlock, err := fsutil.LockDir(lp, LockWait)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(path), dirPerm); err != nil {
			return nil, fmt.Errorf("append %s: %w", path, err)
		}
		unlock, err = fsutil.LockDir(lp, LockWait)
	}
	return unlock, err
}

// appendLocked writes buf (complete lines) to the end of path. The caller
// holds the lock.
func appendLocked(path string, buf []byte, sync bool) error {
	f, err := fsutil.OpenRaw(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, filePerm)
	if err != nil {
		return fmt.Errorf("append %s: %w", path, err)
	}
	defer f.Close()
	size, _, _, err := f.Stat()
	if err != nil {
		return fmt.Errorf("append %s: %w", path, err)
	}
	if size > 0 {
		var last [1]byte
		if _, err := f.ReadAt(last[:], size-1); err != nil {
			return fmt.Errorf("append %s: %w", path, err)
		}
		if last[0] != '\n' { // torn tail: close it off as its own line
			buf = append([]byte{'\n'}, buf...)
		}
	}
	if _, err := f.Write(buf); err != nil {
		f.Truncate(size) // best effort: leave no fragment of ours behind
		return fmt.Errorf("append %s: %w", path, err)
	}
	if sync {
		if err := f.Sync(); err != nil {
			return fmt.Errorf("sync %s: %w", path, err)
		}
		if size == 0 {
			if err := fsutil.SyncDir(filepath.Dir(path)); err != nil {
				return err
			}
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("append %s: %w", path, err)
	}
	return nil
}

// Read returns every line of a JSONL file, malformed ones included, except
// blank lines (only spaces, tabs and CRs). A missing file has no lines. Read takes no lock: it sees each
// line either whole or, for a line being written right now, as the
// Partial last line.
func Read(path string) ([]Line, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	lines := splitLines(data, 0, 1)
	for i := range lines {
		lines[i].decode()
	}
	return lines, nil
}

// tailChunk is the first read size of Tail; it doubles up to tailChunkMax.
const (
	tailChunk    = 16 << 10
	tailChunkMax = 4 << 20
)

// Tail returns the last n non-blank lines of a JSONL file (fewer if the
// file has fewer), reading backwards from the end: its cost depends on the
// size of those lines, not of the file. Line.N is 0 (unknown); Off is
// exact. A missing file has no lines.
func Tail(path string, n int) ([]Line, error) {
	if n <= 0 {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("tail %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("tail %s: %w", path, err)
	}
	pos := fi.Size()
	chunk := int64(tailChunk)
	var buf []byte
	for {
		read := min(chunk, pos)
		pos -= read
		b := make([]byte, int(read)+len(buf))
		if n, err := f.ReadAt(b[:read], pos); n < int(read) {
			return nil, fmt.Errorf("tail %s: file shrank while reading: %w", path, err)
		}
		copy(b[read:], buf)
		buf = b
		start := 0
		if pos > 0 {
			// Bytes before the first newline belong to a line that starts
			// earlier in the file.
			i := bytes.IndexByte(buf, '\n')
			if i < 0 {
				chunk = min(chunk*2, tailChunkMax)
				continue
			}
			start = i + 1
		}
		lines := splitLines(buf[start:], pos+int64(start), 0)
		if pos == 0 || len(lines) >= n {
			if len(lines) > n {
				lines = lines[len(lines)-n:]
			}
			for i := range lines {
				lines[i].decode()
			}
			return lines, nil
		}
		chunk = min(chunk*2, tailChunkMax)
	}
}

// splitLines cuts data into its non-blank lines (not yet decoded). base is
// the file offset of data[0]; firstN the number of its first line, or 0
// to leave N unset.
func splitLines(data []byte, base int64, firstN int) []Line {
	var lines []Line
	n := firstN
	for off := 0; off < len(data); {
		end := bytes.IndexByte(data[off:], '\n')
		partial := end < 0
		if partial {
			end = len(data)
		} else {
			end += off
		}
		raw := data[off:end:end]
		if !blank(raw) {
			lines = append(lines, Line{N: n, Off: base + int64(off), Raw: raw, Partial: partial})
		}
		if n > 0 {
			n++
		}
		off = end + 1
	}
	return lines
}

// blank reports whether a line holds only JSON whitespace (space, tab,
// CR). Such a line carries nothing: readers skip it and rewrites drop it.
// Any other byte, even a Unicode space, makes it a (malformed) line.
func blank(raw []byte) bool {
	return len(bytes.Trim(raw, " \t\r")) == 0
}

// Decode sets Value, or Err for a malformed line, from Raw (lines from a
// Lazy Follower come undecoded).
func (l *Line) Decode() { l.decode() }

func (l *Line) decode() {
	v, err := decodeObject(l.Raw)
	if err != nil {
		l.Value, l.Err = nil, fmt.Errorf("%w: %v", ErrMalformed, err)
		return
	}
	l.Value, l.Err = v, nil
}

// Rewrite replaces a JSONL file through fn under the file's lock. fn gets
// every non-blank line in order (malformed ones included, Set edits a
// record) and returns the lines to keep; blank lines are not passed and
// not written. If nothing changed the file is
// left alone; otherwise the result is written atomically (temp file,
// fsync, rename, fsync dir), one line per element, which also closes off a
// torn last line. fn may drop or add records but never a malformed line:
// dropping one is an error and nothing is written (C19: no inbox ever
// loses a line).
func Rewrite(path string, fn func(lines []Line) ([]Line, error)) error {
	return rewrite(path, false, fn)
}

// RewriteLazy is Rewrite with the lines passed undecoded (Value and Err
// unset): fn decodes the lines it looks at (Line.Decode; Line.Peek reads
// one field of a line without decoding it; Line.Set decodes first), so a
// scan that stops early or skips most lines does not pay for decoding
// every line. The guarantees are Rewrite's.
func RewriteLazy(path string, fn func(lines []Line) ([]Line, error)) error {
	return rewrite(path, true, fn)
}

func rewrite(path string, lazy bool, fn func(lines []Line) ([]Line, error)) error {
	unlock, err := fsutil.LockDir(LockPath(path), LockWait)
	if errors.Is(err, fs.ErrNotExist) {
		// No directory, so no file: do not create either just to find
		// that out (a claim on a branch that never got a message).
		out, err := fn(nil)
		if err != nil || len(out) == 0 {
			return err
		}
		if unlock, err = lockFile(path); err != nil {
			return err
		}
		defer unlock()
		return rewriteLocked(path, false, func(lines []Line) ([]Line, error) {
			if len(lines) > 0 {
				return nil, fmt.Errorf("rewrite %s: the file appeared while it was being created; retry", path)
			}
			return out, nil
		})
	}
	if err != nil {
		return err
	}
	defer unlock()
	return rewriteLocked(path, lazy, fn)
}

func rewriteLocked(path string, lazy bool, fn func(lines []Line) ([]Line, error)) error {
	var perm fs.FileMode = filePerm
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("rewrite %s: %w", path, err)
	default:
		if fi, err := os.Stat(path); err == nil {
			perm = fi.Mode().Perm()
		}
	}
	in := splitLines(data, 0, 1)
	orig := make([]Line, len(in))
	for i := range in {
		if !lazy {
			in[i].decode()
		}
		orig[i] = in[i]
	}
	out, err := fn(in)
	if err != nil {
		return err
	}
	if !changed(orig, out) {
		return nil
	}
	kept := make(map[int64][][]byte, len(out)) // added lines may reuse an offset
	size := 0
	for _, l := range out {
		if bytes.IndexByte(l.Raw, '\n') >= 0 {
			return fmt.Errorf("rewrite %s: line %d contains a raw newline", path, l.N)
		}
		kept[l.Off] = append(kept[l.Off], l.Raw)
		size += len(l.Raw) + 1
	}
	for _, l := range orig {
		if slices.ContainsFunc(kept[l.Off], func(raw []byte) bool { return bytes.Equal(raw, l.Raw) }) {
			continue
		}
		if l.Value == nil && l.Err == nil {
			l.decode() // a lazy line that is dropped: only a record may be
		}
		if l.Err != nil {
			return fmt.Errorf("rewrite %s: line %d is malformed and would be dropped; malformed lines are kept", path, l.N)
		}
	}
	buf := make([]byte, 0, size)
	for _, l := range out {
		buf = append(append(buf, l.Raw...), '\n')
	}
	return fsutil.WriteFile(path, buf, perm)
}

// changed reports whether out differs from the lines read.
func changed(orig, out []Line) bool {
	if len(orig) != len(out) {
		return true
	}
	for i := range orig {
		if orig[i].Off != out[i].Off || !bytes.Equal(orig[i].Raw, out[i].Raw) {
			return true
		}
	}
	return false
}

// CountLines counts a file's lines (a JSONL file's records, for views
// that show its newest) (newlines, plus an unterminated last
// line); a missing file has none.
func CountLines(path string) (int, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("count lines of %s: %w", path, err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	n, last := 0, byte('\n')
	for {
		k, err := f.Read(buf)
		if k > 0 {
			n += bytes.Count(buf[:k], []byte{'\n'})
			last = buf[k-1]
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("count lines of %s: %w", path, err)
		}
	}
	if last != '\n' {
		n++
	}
	return n, nil
}
