package mailbox

import (
	"errors"
	"fmt"
)

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
	var buf []byte
	for _, r := range records {
		b, err := encodeLine(r)
		if err != nil {
			return fmt.Errorf("append %s: %w", tx.path, err)
		}
		buf = append(append(buf, b...), '\n')
	}
	return appendLocked(tx.path, buf, false)
}

// Rewrite is Rewrite without taking the lock (Update holds it), with the
// same guarantee: a malformed line is never dropped.
func (tx *Tx) Rewrite(fn func(lines []Line) ([]Line, error)) error {
	if tx.done {
		return errTxDone
	}
	return rewriteLocked(tx.path, fn)
}

// Find returns the first record whose id is id, or nil: the duplicate
// check of an idempotent append.
func (tx *Tx) Find(id string) (Record, error) {
	if tx.done {
		return nil, errTxDone
	}
	return findID(tx.path, id)
}
