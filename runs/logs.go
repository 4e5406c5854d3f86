package runs

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

// MarksSuffix names a log's time marks: <log>.times holds one
// "<unix_ms> <offset>\n" record per second of writing (at most), the time a
// write at that byte offset of <log> happened; `logs --since` starts from
// them. Each rotated log keeps its marks (<log>.1.times).
const MarksSuffix = ".times"

// markEvery is the resolution of the time marks.
const markEvery = time.Second

// Log is an append-only log file capped in size: past max bytes it is
// rotated to <name>.1 (… up to keep files) and started afresh, so a chatty
// service never fills the disk. Every line lies whole in one file,
// whatever the sizes of the writes: whole lines go into the current file
// while they fit, and the file is rotated before the first line that does
// not fit. A line a write leaves unfinished is written at once (nothing
// read from a leaf is held back, so a killed supervisor loses nothing it
// took) and is finished in the file it began in, which then passes max by
// the rest of that line; a line longer than max gets a file of its own.
// Only output that runs on for lineCut bytes without a newline is cut
// (there, into the next file). Read oldest first (<name>.keep … <name>.1,
// <name>) the files are the output in order, and a Follower reads across
// a rotation without losing a line.
type Log struct {
	mu       sync.Mutex
	path     string
	f        *os.File
	size     int64
	max      int64
	keep     int
	closed   bool
	lineLen  int64 // bytes of the current file's unfinished last line (0: it ends a line)
	marks    *os.File
	lastMark time.Time
}

// lineCut is where a Log cuts output that has no newline: 8 × max, at
// least 1 MiB.
func (l *Log) lineCut() int64 { return max(8*l.max, 1<<20) }

// OpenLog returns a capped log appending to path. The file is created on
// the first write (a run that prints nothing costs no file); max <= 0 means
// no cap.
func OpenLog(path string, max int64, keep int) (*Log, error) {
	l := &Log{path: path, max: max, keep: max0(keep)}
	if st, err := os.Stat(path); err == nil {
		l.size = st.Size()
		l.lineLen = unfinishedLine(path, st.Size())
	}
	return l, nil
}

// unfinishedLine returns how many bytes of a file of size bytes follow its
// last newline (looking 64 KiB back at most: a longer rest counts as that).
func unfinishedLine(path string, size int64) int64 {
	if size == 0 {
		return 0
	}
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	n := min(size, 64<<10)
	b := make([]byte, n)
	if _, err := f.ReadAt(b, size-n); err != nil {
		return 0
	}
	return n - int64(bytes.LastIndexByte(b, '\n')) - 1
}

func (l *Log) open() error {
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open log: %w", err)
	}
	l.f = f
	return nil
}

// Write appends p (see Log for where each line goes).
func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return 0, os.ErrClosed
	}
	if l.f == nil {
		if err := l.open(); err != nil {
			return 0, err
		}
	}
	if l.max <= 0 {
		return l.write(p)
	}
	return l.place(p)
}

// place writes p into the log's files, rotating before a line that would
// pass the cap. It returns how many bytes of p were written: all of them,
// or those written before the error.
func (l *Log) place(all []byte) (written int, err error) {
	p := all
	defer func() { written = len(all) - len(p) }()
	// write writes p[:n] and moves p past what was written.
	write := func(n int) error {
		w, err := l.write(p[:n])
		p = p[w:]
		return err
	}
	for len(p) > 0 {
		if l.lineLen > 0 {
			// Finish the line where it began; only output that runs on for
			// lineCut bytes without a newline is cut.
			end := bytes.IndexByte(p, '\n') + 1
			seg := p
			if end > 0 {
				seg = p[:end]
			}
			if room := max(l.lineCut()-l.lineLen, 0); int64(len(seg)) > room {
				if err := write(int(room)); err != nil {
					return 0, err
				}
				if err := l.rotate(); err != nil {
					return 0, err
				}
				continue
			}
			if err := write(len(seg)); err != nil {
				return 0, err
			}
			continue
		}
		// At a line's start: the whole lines that fit, then rotate.
		room := max(l.max-l.size, 0)
		if whole := bytes.LastIndexByte(p, '\n') + 1; whole > 0 {
			n := whole
			if int64(n) > room {
				n = bytes.LastIndexByte(p[:room], '\n') + 1
			}
			switch {
			case n > 0:
			case l.size > 0:
				if err := l.rotate(); err != nil {
					return 0, err
				}
				continue
			default:
				// An empty file and a first line longer than max: the line
				// alone, whole (cut at lineCut like any line).
				n = min(bytes.IndexByte(p, '\n')+1, int(min(l.lineCut(), int64(len(p)))))
			}
			if err := write(n); err != nil {
				return 0, err
			}
			continue
		}
		// p begins a line it does not finish: into a file it fits in.
		if int64(len(p)) > room && l.size > 0 {
			if err := l.rotate(); err != nil {
				return 0, err
			}
		}
		if err := write(int(min(int64(len(p)), l.lineCut()))); err != nil {
			return 0, err
		}
	}
	return 0, nil
}

// write appends p to the current file, with a time mark first when the
// last one is a second old.
func (l *Log) write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if now := time.Now(); now.Sub(l.lastMark) >= markEvery {
		l.mark(now)
	}
	n, err := l.f.Write(p)
	l.size += int64(n)
	if i := bytes.LastIndexByte(p[:n], '\n'); i >= 0 {
		l.lineLen = int64(n - i - 1)
	} else {
		l.lineLen += int64(n)
	}
	if err != nil {
		return n, fmt.Errorf("write log: %w", err)
	}
	return n, nil
}

// mark records that the byte at the current size is written now. Marks
// are a best-effort index: a failure only makes --since coarser.
func (l *Log) mark(now time.Time) {
	l.lastMark = now
	if l.marks == nil {
		f, err := os.OpenFile(l.path+MarksSuffix, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return
		}
		l.marks = f
	}
	var buf [48]byte
	b := strconv.AppendInt(buf[:0], now.UnixMilli(), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, l.size, 10)
	l.marks.Write(append(b, '\n'))
}

func (l *Log) rotate() error {
	l.f.Close()
	if l.marks != nil {
		l.marks.Close()
		l.marks = nil
	}
	for i := l.keep; i >= 1; i-- {
		src := l.path
		if i > 1 {
			src = l.path + "." + strconv.Itoa(i-1)
		}
		dst := l.path + "." + strconv.Itoa(i)
		if err := os.Rename(src+MarksSuffix, dst+MarksSuffix); err != nil {
			os.Remove(dst + MarksSuffix) // no marks for src: none may stay for dst
		}
		os.Rename(src, dst)
	}
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o600)
	if err != nil {
		l.f = nil
		return fmt.Errorf("rotate log: %w", err)
	}
	l.f, l.size, l.lineLen, l.lastMark = f, 0, 0, time.Time{}
	return nil
}

// Close closes the log.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	if l.marks != nil {
		l.marks.Close()
		l.marks = nil
	}
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	if err != nil {
		return fmt.Errorf("close log: %w", err)
	}
	return nil
}

// LogFiles lists a capped log's files that exist, oldest first:
// <path>.N … <path>.1, <path>. It looks for rotated files past one
// missing number, not two: a rotation in progress moves a single hole
// from the oldest name to the newest, and the files beyond it are not
// gone.
func LogFiles(path string) []string {
	var rotated []string
	for i, missing := 1, 0; i <= maxRotated && missing < 2; i++ {
		p := path + "." + strconv.Itoa(i)
		if _, err := os.Stat(p); err != nil {
			missing++
			continue
		}
		missing = 0
		rotated = append(rotated, p)
	}
	out := make([]string, 0, len(rotated)+1)
	for i := len(rotated) - 1; i >= 0; i-- {
		out = append(out, rotated[i])
	}
	if _, err := os.Stat(path); err == nil {
		out = append(out, path)
	}
	return out
}

// maxRotated bounds how many rotated files readers look for.
const maxRotated = 64

// readMarks reads a log file's time marks: (unix ms, offset) pairs in the
// order written; a torn or foreign line is skipped.
func readMarks(logPath string) [][2]int64 {
	data, err := os.ReadFile(logPath + MarksSuffix)
	if err != nil {
		return nil
	}
	var out [][2]int64
	for _, line := range bytes.Split(data, []byte{'\n'}) {
		ms, off, ok := bytes.Cut(line, []byte{' '})
		if !ok {
			continue
		}
		t, err1 := strconv.ParseInt(string(ms), 10, 64)
		o, err2 := strconv.ParseInt(string(off), 10, 64)
		if err1 == nil && err2 == nil && o >= 0 {
			out = append(out, [2]int64{t, o})
		}
	}
	return out
}

// Since finds where the output written at or after t starts in a capped
// log: the file (one of LogFiles) and the byte offset in it, to the
// resolution of the time marks (it may start up to a second early). ok is
// false when nothing was written since t.
//
// A mark (time T, offset) starts a segment whose bytes were all written in
// [T, T+markEvery): the writer marks again before any later write. So the
// output since t starts at the first segment that may hold a byte written
// at or after t — the first mark with T+markEvery > t.
func Since(path string, t time.Time) (file string, off int64, ok bool) {
	files := LogFiles(path)
	if len(files) == 0 {
		return "", 0, false
	}
	if st, err := os.Stat(files[len(files)-1]); err != nil || st.ModTime().Add(markEvery).Before(t) {
		return "", 0, false // not written to since
	}
	// From the newest mark back, while segments may still be newer than
	// t: the last one found starts the output since t.
	ms, every := t.UnixMilli(), markEvery.Milliseconds()
	anyMarks, found := false, ""
scan:
	for i := len(files) - 1; i >= 0; i-- {
		marks := readMarks(files[i])
		for j := len(marks) - 1; j >= 0; j-- {
			anyMarks = true
			if marks[j][0]+every <= ms {
				break scan
			}
			found, off = files[i], marks[j][1]
		}
	}
	switch {
	case found != "":
		st, err := os.Stat(found)
		if err != nil {
			return "", 0, false
		}
		return found, min(off, st.Size()), true
	case !anyMarks:
		return files[0], 0, true // no marks to go by: everything
	}
	return "", 0, false // every segment is older than t
}

func max0(n int) int {
	if n < 1 {
		return 1
	}
	return n
}
