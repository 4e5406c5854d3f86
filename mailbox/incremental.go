package mailbox

// This file holds two ways to build on the JSONL primitive beyond single
// calls: a Follower that reads what a file gained since last time, and an
// Update transaction that holds a file's lock across several steps.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/pi-actors/pi-actors/internal/fsutil"
)

// fingerprintLen is how many bytes before its offset a Follower keeps to
// recognise the file it read: a rewrite renames a new file over the old
// one, and the new file may get the old inode number back.
const fingerprintLen = 64

// Follower reads a JSONL file as it grows: each Next returns the complete
// lines appended since the previous call, decoded like Read's (Line.N
// counts from the start of the file). A line still being written — or torn
// by a crashed writer until the next Append closes it off — is left for a
// later call. When the file was replaced (a rewrite or compaction renamed
// a new file over it), truncated or removed, Next starts again from the
// beginning of the current file and reports reset: the caller then holds
// the whole file again and must deduplicate what it already saw (by record
// id or timestamp).
//
// A Follower takes no lock; its methods must not be called concurrently.
type Follower struct {
	Path string
	// Lazy leaves the lines undecoded (Value and Err unset until
	// Line.Decode): for callers that count lines or look at few of them.
	Lazy bool

	dev, ino uint64
	off      int64
	n        int    // lines consumed, blank ones included
	fp       []byte // the bytes just before off
}

// NewFollower returns a follower positioned at the start of path.
func NewFollower(path string) *Follower { return &Follower{Path: path} }

// Offset is the byte offset up to which the file has been returned.
func (f *Follower) Offset() int64 { return f.off }

// Next returns the complete lines added since the last call (every line
// of the file on the first call and after a reset).
func (f *Follower) Next() (lines []Line, reset bool, err error) {
	lines, reset, err = f.next()
	if !f.Lazy {
		for i := range lines {
			lines[i].decode()
		}
	}
	return lines, reset, err
}

// Lines is the number of newline-terminated lines returned so far since
// the start of the file, blank ones included: the file's line count.
func (f *Follower) Lines() int { return f.n }

// next is Next without decoding the lines.
func (f *Follower) next() (lines []Line, reset bool, err error) {
	file, err := fsutil.OpenRaw(f.Path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		reset = f.ino != 0 || f.off != 0
		f.forget()
		return nil, reset, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("follow %s: %w", f.Path, err)
	}
	defer file.Close()
	size, dev, ino, err := file.Stat()
	if err != nil {
		return nil, false, fmt.Errorf("follow %s: %w", f.Path, err)
	}
	if f.ino != 0 || f.off != 0 {
		if dev != f.dev || ino != f.ino || size < f.off || !f.sameFile(file) {
			f.forget()
			reset = true
		}
	}
	f.dev, f.ino = dev, ino
	if size == f.off {
		return nil, reset, nil
	}
	buf := make([]byte, size-f.off)
	k, err := file.ReadAt(buf, f.off)
	if err != nil && err != io.EOF {
		return nil, reset, fmt.Errorf("follow %s: %w", f.Path, err)
	}
	buf = buf[:k]
	end := bytes.LastIndexByte(buf, '\n')
	if end < 0 {
		return nil, reset, nil
	}
	buf = buf[:end+1]
	lines = splitLines(buf, f.off, f.n+1)
	f.n += bytes.Count(buf, []byte{'\n'})
	f.off += int64(len(buf))
	f.fp = append(f.fp, buf[max(0, len(buf)-fingerprintLen):]...)
	f.fp = f.fp[max(0, len(f.fp)-fingerprintLen):]
	return lines, reset, nil
}

// sameFile reports whether the bytes before off are still those read.
func (f *Follower) sameFile(file *fsutil.RawFile) bool {
	if len(f.fp) == 0 {
		return f.off == 0
	}
	got := make([]byte, len(f.fp))
	if _, err := file.ReadAt(got, f.off-int64(len(f.fp))); err != nil {
		return false
	}
	return bytes.Equal(got, f.fp)
}

func (f *Follower) forget() {
	f.dev, f.ino, f.off, f.n, f.fp = 0, 0, 0, 0, f.fp[:0]
}

// errTxDone is the use of a Tx after its Update returned.
var errTxDone = errors.New("mailbox: transaction used after Update returned")

// Tx is a JSONL file whose lock is held for the length of one Update call:
// its appends and rewrites take no lock of their own, so several reads and
// writes (of this file and of the other files guarded by the same lock —
// every file in its directory) form one step that no other writer
// interleaves with.
type Tx struct {
	path string
	done bool
}

// Update runs fn while holding path's lock (the lock of its directory,
// see LockPath), creating the directory if needed, and releases it when fn
// returns. Inside fn, use tx for the JSONL file and plain atomic writes
// (internal/fsutil) for other files in the same directory; calling a
// locking function of this package on a file of that directory would wait
// for the lock fn holds and time out.
func Update(path string, fn func(tx *Tx) error) error {
	unlock, err := lockFile(path)
	if err != nil {
		return err
	}
	defer unlock()
	tx := &Tx{path: path}
	defer func() { tx.done = true }()
	return fn(tx)
}

// Path is the JSONL file of the transaction.
func (tx *Tx) Path() string { return tx.path }

// Append is Append without taking the lock (Update holds it): each record
// becomes one line, all lines go out in one write, a torn tail is closed
// off first.
func (tx *Tx) Append(records ...any) error {
	if tx.done {
		return errTxDone
	}
	if len(records) == 0 {
		return nil
	}
	buf, err := encodeLines(tx.path, records)
	if err != nil {
		return err
	}
	return appendLocked(tx.path, buf, false)
}

// AppendFile is Append without taking the lock for another JSONL file
// guarded by the same lock (a file of the same directory), so writes to
// several files of a state directory are one step.
func (tx *Tx) AppendFile(path string, records ...any) error {
	if err := tx.guards(path); err != nil {
		return err
	}
	return (&Tx{path: path}).Append(records...)
}

// guards reports whether the lock tx holds guards path.
func (tx *Tx) guards(path string) error {
	if tx.done {
		return errTxDone
	}
	if filepath.Clean(LockPath(path)) != filepath.Clean(LockPath(tx.path)) {
		return fmt.Errorf("mailbox: %s is not guarded by the lock of %s", path, LockPath(tx.path))
	}
	return nil
}

// Rewrite is Rewrite without taking the lock (Update holds it), with the
// same guarantee: a malformed line is never dropped.
func (tx *Tx) Rewrite(fn func(lines []Line) ([]Line, error)) error {
	if tx.done {
		return errTxDone
	}
	return rewriteLocked(tx.path, false, fn)
}

// Find returns the first record whose id is id, or nil: the duplicate
// check of an idempotent append.
func (tx *Tx) Find(id string) (Record, error) {
	if tx.done {
		return nil, errTxDone
	}
	return findID(tx.path, id)
}
