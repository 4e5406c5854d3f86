package runs

import (
	"fmt"
	"os"
	"strconv"
	"sync"
)

// Log is an append-only log file capped in size: past max bytes it is
// rotated to <name>.1 (… up to keep files) and started afresh, so a chatty
// service never fills the disk.
type Log struct {
	mu     sync.Mutex
	path   string
	f      *os.File
	size   int64
	max    int64
	keep   int
	closed bool
}

// OpenLog returns a capped log appending to path. The file is created on
// the first write (a run that prints nothing costs no file); max <= 0 means
// no cap.
func OpenLog(path string, max int64, keep int) (*Log, error) {
	l := &Log{path: path, max: max, keep: max0(keep)}
	if st, err := os.Stat(path); err == nil {
		l.size = st.Size()
	}
	return l, nil
}

func (l *Log) open() error {
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open log: %w", err)
	}
	l.f = f
	return nil
}

// Write appends p, rotating first when p would pass the cap.
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
	if l.max > 0 && l.size > 0 && l.size+int64(len(p)) > l.max {
		if err := l.rotate(); err != nil {
			return 0, err
		}
	}
	n, err := l.f.Write(p)
	l.size += int64(n)
	return n, err
}

func (l *Log) rotate() error {
	l.f.Close()
	for i := l.keep; i >= 1; i-- {
		src := l.path
		if i > 1 {
			src = l.path + "." + strconv.Itoa(i-1)
		}
		os.Rename(src, l.path+"."+strconv.Itoa(i))
	}
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o600)
	if err != nil {
		l.f = nil
		return fmt.Errorf("rotate log: %w", err)
	}
	l.f, l.size = f, 0
	return nil
}

// Close closes the log.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

func max0(n int) int {
	if n < 1 {
		return 1
	}
	return n
}
