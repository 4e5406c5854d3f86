// Package dirwatch watches directories with inotify, each watch with its
// own event mask. fsnotify fixes the mask of every watch (a write is
// always an event); a kernel that watches the state directories of runs
// printing thousands of lines a second needs to leave those writes out,
// and to ask for them again only while someone follows the output.
package dirwatch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Masks of a watch (inotify(7) bits).
const (
	// Written is a file written and closed, or renamed into the
	// directory: a complete write by a writer that closes (JSONL appends,
	// atomic state files), but no event per write of a file held open.
	Written uint32 = unix.IN_CLOSE_WRITE | unix.IN_MOVED_TO
	// Modified adds every write, of files held open too.
	Modified = Written | unix.IN_MODIFY
)

// ErrOverflow is sent on Errors when the kernel's event queue overflowed:
// events were lost, so what the watches cover may have changed unseen.
var ErrOverflow = errors.New("inotify event queue overflowed: events were lost")

// Event is one change in a watched directory.
type Event struct {
	Path string // the watched directory joined with the entry's name
	Mask uint32 // inotify bits (Written, Modified, unix.IN_*)
}

// Watcher is one inotify instance. Safe for concurrent use.
type Watcher struct {
	fd     int // the descriptor (f.Fd() would make f blocking)
	f      *os.File
	events chan Event
	errs   chan error
	done   chan struct{}
	close  sync.Once

	mu     sync.Mutex
	closed bool // the descriptor is closed (its number may be reused)
	byWD   map[int32]string
	byPath map[string]int32
}

// New starts a watcher; Close ends it.
func New() (*Watcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("inotify: %w", err)
	}
	w := &Watcher{
		fd: fd,
		// A non-blocking descriptor: reads wait in the runtime's poller
		// and Close ends a pending one.
		f:      os.NewFile(uintptr(fd), "inotify"),
		events: make(chan Event),
		errs:   make(chan error),
		done:   make(chan struct{}),
		byWD:   map[int32]string{},
		byPath: map[string]int32{},
	}
	go w.read()
	return w, nil
}

// Events delivers the changes; it is closed when the watcher ends.
func (w *Watcher) Events() <-chan Event { return w.events }

// Errors delivers ErrOverflow, and a read error before Events and it
// close (the watcher then watches nothing).
func (w *Watcher) Errors() <-chan error { return w.errs }

// Add watches dir with mask, or sets the mask of its watch.
func (w *Watcher) Add(dir string, mask uint32) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return fmt.Errorf("watch %s: %w", dir, os.ErrClosed)
	}
	wd, err := unix.InotifyAddWatch(w.fd, dir, mask|unix.IN_ONLYDIR)
	if err != nil {
		return fmt.Errorf("watch %s: %w", dir, err)
	}
	w.byWD[int32(wd)] = dir
	w.byPath[dir] = int32(wd)
	return nil
}

// Remove ends the watch of dir (no error when it has none).
func (w *Watcher) Remove(dir string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	wd, ok := w.byPath[dir]
	if !ok || w.closed {
		return nil
	}
	delete(w.byPath, dir)
	delete(w.byWD, wd)
	if _, err := unix.InotifyRmWatch(w.fd, uint32(wd)); err != nil && !errors.Is(err, unix.EINVAL) {
		// EINVAL: the directory is gone and its watch with it.
		return fmt.Errorf("unwatch %s: %w", dir, err)
	}
	return nil
}

// Close ends the watcher and its watches.
func (w *Watcher) Close() error {
	var err error
	w.close.Do(func() {
		close(w.done)
		w.mu.Lock()
		w.closed = true
		w.mu.Unlock()
		err = w.f.Close()
	})
	return err
}

// read turns what the descriptor gives into Events until Close.
func (w *Watcher) read() {
	defer close(w.events)
	defer close(w.errs)
	var buf [64 << 10]byte
	for {
		n, err := w.f.Read(buf[:])
		if err != nil {
			if !errors.Is(err, os.ErrClosed) {
				w.sendErr(fmt.Errorf("inotify read: %w", err)) // then the streams end
			}
			return
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			raw := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(raw.Len)]
			off += unix.SizeofInotifyEvent + int(raw.Len)
			if !w.dispatch(raw.Wd, raw.Mask, name) {
				return
			}
		}
	}
}

// dispatch delivers one raw event; false once the watcher is closed.
func (w *Watcher) dispatch(wd int32, mask uint32, name []byte) bool {
	if mask&unix.IN_Q_OVERFLOW != 0 {
		return w.sendErr(ErrOverflow)
	}
	w.mu.Lock()
	dir, ok := w.byWD[wd]
	if ok && mask&unix.IN_IGNORED != 0 {
		// The directory was removed (or unwatched): its watch is gone.
		delete(w.byWD, wd)
		if w.byPath[dir] == wd {
			delete(w.byPath, dir)
		}
	}
	w.mu.Unlock()
	if !ok || mask&unix.IN_IGNORED != 0 {
		return true
	}
	for len(name) > 0 && name[len(name)-1] == 0 {
		name = name[:len(name)-1] // NUL padding
	}
	path := dir
	if len(name) > 0 {
		path = filepath.Join(dir, string(name))
	}
	select {
	case w.events <- Event{Path: path, Mask: mask}:
		return true
	case <-w.done:
		return false
	}
}

func (w *Watcher) sendErr(err error) bool {
	select {
	case w.errs <- err:
		return true
	case <-w.done:
		return false
	}
}
