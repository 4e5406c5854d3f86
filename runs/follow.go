package runs

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"slices"
	"syscall"
	"time"
)

// Follower reads a capped log (see Log) line by line from a point on and
// keeps reading across rotations: it holds its file open, so a file
// renamed (or removed) by a rotation is read to its end before the next
// one is opened. It loses lines only when the writer rotates more than
// keep times between two polls, and then says so (TakeGap).
type Follower struct {
	path string
	// gap: the file read was rotated past keep before its successor was
	// found; files between may be gone.
	gap     bool
	f       *os.File
	ino     uint64
	partial []byte
	buf     []byte
	// skipLine drops the first line read: the rest of a line that began
	// before the starting point.
	skipLine bool
	// fromOldest: the log had no file when the follower started, so every
	// file it finds later is new output; the first one to read is the
	// oldest (the writer may have rotated before the first poll).
	fromOldest bool
}

// maxPartial bounds a line held back while waiting for its end; a longer
// one is emitted in pieces.
const maxPartial = 1 << 20

func inodeOf(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return 0
}

// FollowTail returns the last n lines of the capped log at path (from its
// rotated files too when the current one holds fewer) and a Follower that
// continues right after them: no line is both in the tail and followed,
// none falls between.
func FollowTail(path string, n int) ([]string, *Follower) {
	fl := &Follower{path: path}
	f, err := os.Open(path)
	if err != nil {
		files := LogFiles(path)
		fl.fromOldest = len(files) == 0
		lines, _ := tailOf(files, n)
		return lines, fl
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fl
	}
	fl.f, fl.ino = f, inodeOf(st)
	// The tail is the complete lines; a line still being written is
	// left to the follower.
	lines, end := linesBefore(f, st.Size(), n)
	f.Seek(end, io.SeekStart)
	// Older files join on only when the window reached this one's start.
	if len(lines) < n && st.Size() <= tailWindowBytes {
		var older []string
		for _, p := range LogFiles(path) {
			if fi, err := os.Stat(p); err == nil && inodeOf(fi) != fl.ino {
				older = append(older, p)
			}
		}
		if extra, _ := tailOf(older, n-len(lines)); len(extra) > 0 {
			lines = append(extra, lines...)
		}
	}
	return lines, fl
}

// FollowSince returns a Follower positioned at the first line written at
// or after t (to the resolution of the time marks: up to a second
// early), and whether anything was written since.
func FollowSince(path string, t time.Time) (*Follower, bool) {
	fl := &Follower{path: path}
	file, off, ok := Since(path, t)
	if !ok {
		// Nothing since t: follow from the current end.
		_, fl = FollowTail(path, 0)
		return fl, false
	}
	f, err := os.Open(file)
	if err != nil {
		_, fl = FollowTail(path, 0)
		return fl, false
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fl, false
	}
	fl.f, fl.ino = f, inodeOf(st)
	if off > 0 {
		// A mark may fall inside a line begun earlier: start after it.
		b := make([]byte, 1)
		if _, err := f.ReadAt(b, off-1); err == nil && b[0] != '\n' {
			fl.skipLine = true
		}
	}
	f.Seek(off, io.SeekStart)
	return fl, true
}

// Poll emits every complete line written since the last poll, following
// rotations, and reports whether it read anything.
func (fl *Follower) Poll(emit func(line []byte)) (bool, error) {
	got := false
	for range maxRotated + 2 {
		if fl.f == nil {
			first := fl.path
			if fl.fromOldest {
				if files := LogFiles(fl.path); len(files) > 0 {
					first = files[0]
				}
			}
			f, err := os.Open(first)
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return got, nil // not written yet
				}
				return got, err
			}
			st, err := f.Stat()
			if err != nil {
				f.Close()
				return got, err
			}
			fl.f, fl.ino, fl.fromOldest = f, inodeOf(st), false
		}
		n, err := fl.drain(emit)
		got = got || n > 0
		if err != nil {
			return got, err
		}
		if st, err := os.Stat(fl.path); err == nil && inodeOf(st) == fl.ino {
			return got, nil // still the current file: all read
		}
		// Ours was rotated away: what was written before the rename is
		// there now; read it, then go on with the next file.
		n, err = fl.drain(emit)
		got = got || n > 0
		if err != nil {
			return got, err
		}
		f, ino := fl.openSuccessor()
		if f == nil {
			return got, nil // not created yet, or rotating: the next poll finds it
		}
		fl.f.Close()
		fl.f, fl.ino = f, ino
	}
	return got, nil
}

// TakeGap reports (once) whether output may have been skipped since the
// last call: the log rotated past its kept files faster than it was
// followed, so the follower went on at the oldest file still kept.
func (fl *Follower) TakeGap() bool {
	g := fl.gap
	fl.gap = false
	return g
}

// openSuccessor opens the file written after ours: the next newer one
// among the log's files, or the oldest when ours is gone (rotated past
// keep). The writer renames every file one step older at each rotation,
// so a name read a moment ago may hold another file now: the successor
// is taken from a listing two passes agree on, and the file opened by its
// name must be that one (else the listing is taken again). It returns
// nil when there is none yet, or the log rotates too fast to tell.
func (fl *Follower) openSuccessor() (*os.File, uint64) {
	for range 8 {
		names, inos := logSnapshot(fl.path)
		i := slices.Index(inos, fl.ino)
		next := 0
		switch {
		case i >= 0 && i+1 < len(inos):
			next = i + 1
		case i >= 0 || len(inos) == 0:
			return nil, 0
		default:
			fl.gap = true // ours is gone: on at the oldest kept
		}
		f, err := os.Open(names[next])
		if err != nil {
			continue
		}
		st, err := f.Stat()
		if err == nil && inodeOf(st) == inos[next] {
			return f, inos[next]
		}
		f.Close()
	}
	return nil, 0
}

// logSnapshot lists a capped log's files, oldest first, with their inodes,
// as two passes in a row saw them: a rotation renaming files during a
// pass would give names that never held those files together. Nil when
// no two passes agreed.
func logSnapshot(path string) ([]string, []uint64) {
	var prevNames []string
	var prevInos []uint64
	for range 8 {
		names := LogFiles(path)
		inos := make([]uint64, 0, len(names))
		for _, p := range names {
			if st, err := os.Stat(p); err == nil {
				inos = append(inos, inodeOf(st))
			}
		}
		if len(inos) == len(names) && prevInos != nil && slices.Equal(names, prevNames) && slices.Equal(inos, prevInos) {
			return names, inos
		}
		prevNames, prevInos = names, inos
	}
	return nil, nil
}

// drain reads the open file to its end, emitting complete lines.
func (fl *Follower) drain(emit func([]byte)) (int, error) {
	if fl.buf == nil {
		fl.buf = make([]byte, 64<<10)
	}
	total := 0
	for {
		k, err := fl.f.Read(fl.buf)
		total += k
		data := fl.buf[:k]
		for len(data) > 0 {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				fl.partial = append(fl.partial, data...)
				if len(fl.partial) >= maxPartial {
					fl.emit(emit, fl.partial)
					fl.partial = fl.partial[:0]
				}
				break
			}
			if len(fl.partial) > 0 {
				fl.partial = append(fl.partial, data[:i]...)
				fl.emit(emit, fl.partial)
				fl.partial = fl.partial[:0]
			} else {
				fl.emit(emit, data[:i])
			}
			data = data[i+1:]
		}
		if err == io.EOF || k == 0 {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// emit hands a line on, unless it is the rest of a line that began
// before the follower's starting point.
func (fl *Follower) emit(emit func([]byte), line []byte) {
	if fl.skipLine {
		fl.skipLine = false
		return
	}
	emit(line)
}

// Flush emits the last line when it has no newline (the run is over).
func (fl *Follower) Flush(emit func(line []byte)) {
	if len(fl.partial) > 0 {
		fl.emit(emit, fl.partial)
		fl.partial = fl.partial[:0]
	}
}

// Close releases the open file.
func (fl *Follower) Close() error {
	if fl.f == nil {
		return nil
	}
	err := fl.f.Close()
	fl.f = nil
	return err
}

// linesBefore returns the last n complete lines of f's first size bytes
// (reading at most 1 MiB back) and the offset where the line after them
// starts.
func linesBefore(f *os.File, size int64, n int) ([]string, int64) {
	if size == 0 {
		return nil, 0
	}
	off := max(0, size-tailWindowBytes)
	// One byte more in front: the window's first line is cut unless the
	// byte before it ends a line.
	from := max(0, off-1)
	buf := make([]byte, size-from)
	k, _ := f.ReadAt(buf, from)
	buf = buf[:k]
	cut := false
	if off > 0 && len(buf) > 0 {
		cut, buf = buf[0] != '\n', buf[1:]
	}
	nl := bytes.LastIndexByte(buf, '\n')
	if nl < 0 {
		if off == 0 {
			return nil, 0 // one line, not finished
		}
		return nil, size // a line longer than the window: follow from here
	}
	end := off + int64(nl) + 1
	if n <= 0 {
		return nil, end
	}
	return lastLines(buf[:nl+1], cut, n), end
}

// lastLines splits data into lines and keeps the last n; cut says the
// first line is the end of a longer one (it began before the window): it
// is kept after "…", so the line that straddles the window still shows
// its end (output that ran on for a MiB without a newline included).
func lastLines(data []byte, cut bool, n int) []string {
	text := string(bytes.TrimRight(data, "\n"))
	if text == "" {
		return nil
	}
	lines := bytes.Split([]byte(text), []byte{'\n'})
	if cut {
		lines[0] = append([]byte("…"), lines[0]...)
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = string(l)
	}
	return out
}

// tailOf is the last n lines of files read as one stream (oldest first),
// each file read at most 1 MiB back (tailWindowBytes). cut reports fewer
// than n lines although there are earlier ones: a file's window did not
// reach its start, and the lines of older files would not join on.
func tailOf(files []string, n int) (out []string, cut bool) {
	for i := len(files) - 1; i >= 0 && len(out) < n; i-- {
		lines, whole := tailWindow(files[i], n-len(out))
		out = append(lines, out...)
		if !whole && len(out) < n {
			return out, true
		}
	}
	return out, false
}

// Tail returns the last n lines of a capped log, reading back through its
// rotated files as far as needed (a last line still being written
// included); cut reports fewer than n although the log holds more (at
// most 1 MiB is read back from the end of each file).
func Tail(path string, n int) (lines []string, cut bool) { return tailOf(LogFiles(path), n) }
