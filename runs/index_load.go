package runs

import (
	"encoding/json"
	"errors"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// rebuildReader loads state directories for Rebuild, one per worker: the
// common case — an ended run, run.json and result.json — is read with
// plain system calls, each file opened relative to the runs root (the
// open walks "<name>/run.json", not every component of an absolute
// path) into a buffer the reader reuses; anything else (a live run, a
// tombstone, a file that does not parse) goes through load.
type rebuildReader struct {
	root   string
	rootFD int // -1: not open (every run goes through load)
	buf    []byte
}

func newRebuildReader(root string) *rebuildReader {
	r := &rebuildReader{root: root, rootFD: -1, buf: make([]byte, 0, 8<<10)}
	for {
		fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err == nil {
			r.rootFD = fd
		}
		return r
	}
}

func (r *rebuildReader) close() {
	if r.rootFD >= 0 {
		unix.Close(r.rootFD)
		r.rootFD = -1
	}
}

// load returns what a runs index entry needs of the state directory
// named name under the runs root.
func (r *rebuildReader) load(name string) (*Info, error) {
	dir := Dir(filepath.Join(r.root, name))
	if in := r.quick(name, dir); in != nil {
		return in, nil
	}
	return loadHead(dir)
}

// quick reads an ended run's result.json — and its run.json head when
// the result does not carry the run's identity (an older supervisor's) —
// for only what an index entry needs: the identity fields, status,
// reason, code and completedAt; or returns nil when dir is not that.
func (r *rebuildReader) quick(name string, dir Dir) *Info {
	if r.rootFD < 0 {
		return nil
	}
	data, err := r.read(name + "/" + ResultFile)
	if err != nil {
		return nil
	}
	res, ok := scanResultStatus(data)
	if !ok {
		res = &Result{}
		if json.Unmarshal(data, res) != nil {
			return nil
		}
	}
	m := &Meta{Run: res.Run, Address: "run:" + res.Run, StateDir: string(dir), OwnerID: res.OwnerID, Recipe: res.Recipe, Tool: res.Tool}
	if res.Run == "" {
		if data, err = r.read(name + "/" + RunFile); err != nil {
			return nil
		}
		if m, err = metaHeadOf(data, dir.Path(RunFile)); err != nil {
			return nil
		}
	}
	in := &Info{Dir: dir, Meta: m, Result: res}
	in.ended()
	return in
}

// read reads the file at name (relative to the runs root) into r.buf,
// which it grows as needed; the result is valid until the next read.
func (r *rebuildReader) read(name string) ([]byte, error) {
	var fd int
	var err error
	for {
		if fd, err = unix.Openat(r.rootFD, name, unix.O_RDONLY|unix.O_CLOEXEC, 0); !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	b := r.buf[:0]
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		room := cap(b) - len(b)
		n, err := unix.Read(fd, b[len(b):cap(b)])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, err
		}
		b = b[:len(b)+n]
		// A read of a regular file returns all that was asked for unless
		// the file ends first: a short read is the end (no second read
		// to see 0).
		if n < room {
			break
		}
	}
	r.buf = b
	return b, nil
}
