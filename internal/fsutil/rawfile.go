package fsutil

import (
	"errors"
	"io"
	"io/fs"

	"golang.org/x/sys/unix"
)

// RawFile is an open file descriptor used with plain system calls. The
// hot paths of the mailbox (every append, every follow, every lock) open
// a file for a few calls and close it again; os.OpenFile costs five
// system calls more per open than this (it tries to register the
// descriptor with the runtime's poller, which regular files refuse), which
// is half of a short append. A RawFile is not safe for concurrent use and
// must be closed.
type RawFile struct {
	fd   int
	name string
}

// OpenRaw opens path with flags (O_CLOEXEC is added) and perm for a new
// file. A missing file wraps fs.ErrNotExist, as os.OpenFile's error does.
func OpenRaw(path string, flags int, perm fs.FileMode) (*RawFile, error) {
	for {
		fd, err := unix.Open(path, flags|unix.O_CLOEXEC, uint32(perm.Perm()))
		if err == nil {
			return &RawFile{fd: fd, name: path}, nil
		}
		if !errors.Is(err, unix.EINTR) {
			return nil, &fs.PathError{Op: "open", Path: path, Err: err}
		}
	}
}

// Name is the path the file was opened with.
func (f *RawFile) Name() string { return f.name }

// Stat is fstat(2): the size, device and inode of the open file.
func (f *RawFile) Stat() (size int64, dev, ino uint64, err error) {
	var st unix.Stat_t
	if err := retry(func() error { return unix.Fstat(f.fd, &st) }); err != nil {
		return 0, 0, 0, &fs.PathError{Op: "stat", Path: f.name, Err: err}
	}
	return st.Size, uint64(st.Dev), st.Ino, nil
}

// ReadAt reads len(b) bytes at off (pread(2)); fewer bytes come with
// io.EOF.
func (f *RawFile) ReadAt(b []byte, off int64) (int, error) {
	n := 0
	for n < len(b) {
		var k int
		err := retry(func() (err error) { k, err = unix.Pread(f.fd, b[n:], off+int64(n)); return err })
		if err != nil {
			return n, &fs.PathError{Op: "read", Path: f.name, Err: err}
		}
		if k == 0 {
			return n, io.EOF
		}
		n += k
	}
	return n, nil
}

// Write writes all of b (write(2), repeated after a short write).
func (f *RawFile) Write(b []byte) (int, error) {
	n := 0
	for n < len(b) {
		var k int
		err := retry(func() (err error) { k, err = unix.Write(f.fd, b[n:]); return err })
		if err != nil {
			return n, &fs.PathError{Op: "write", Path: f.name, Err: err}
		}
		if k == 0 {
			return n, &fs.PathError{Op: "write", Path: f.name, Err: io.ErrShortWrite}
		}
		n += k
	}
	return n, nil
}

// Chmod is fchmod(2).
func (f *RawFile) Chmod(perm fs.FileMode) error {
	if err := retry(func() error { return unix.Fchmod(f.fd, uint32(perm.Perm())) }); err != nil {
		return &fs.PathError{Op: "chmod", Path: f.name, Err: err}
	}
	return nil
}

// Truncate is ftruncate(2).
func (f *RawFile) Truncate(size int64) error {
	if err := retry(func() error { return unix.Ftruncate(f.fd, size) }); err != nil {
		return &fs.PathError{Op: "truncate", Path: f.name, Err: err}
	}
	return nil
}

// Sync is fsync(2).
func (f *RawFile) Sync() error {
	if err := retry(func() error { return unix.Fsync(f.fd) }); err != nil {
		return &fs.PathError{Op: "sync", Path: f.name, Err: err}
	}
	return nil
}

// Close closes the descriptor; a second Close is an error, as for os.File.
func (f *RawFile) Close() error {
	if f.fd < 0 {
		return &fs.PathError{Op: "close", Path: f.name, Err: fs.ErrClosed}
	}
	fd := f.fd
	f.fd = -1
	// close(2) is not retried on EINTR: on Linux the descriptor is gone
	// either way.
	if err := unix.Close(fd); err != nil && !errors.Is(err, unix.EINTR) {
		return &fs.PathError{Op: "close", Path: f.name, Err: err}
	}
	return nil
}

// flock takes (how = LOCK_EX|LOCK_NB…) or releases the file's lock.
func (f *RawFile) flock(how int) error {
	return retry(func() error { return unix.Flock(f.fd, how) })
}

func retry(call func() error) error {
	for {
		if err := call(); !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}
