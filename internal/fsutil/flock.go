package fsutil

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ErrLockTimeout is returned by LockTimeout when the lock stays taken for
// the whole timeout.
var ErrLockTimeout = errors.New("lock timed out")

// Poll interval bounds for LockTimeout: start short (most critical sections
// are one write), back off to at most lockPollMax so a waiter notices a
// release quickly even behind a slow holder.
const (
	lockPollMin = 50 * time.Microsecond
	lockPollMax = 2 * time.Millisecond
)

// LockTimeout takes an exclusive flock(2) on path (a file created mode
// 0600 if needed; the parent directory must exist) and returns its release
// function. It polls with LOCK_NB, backing off from 50µs to 2ms with
// jitter, and gives up after timeout with an error wrapping
// ErrLockTimeout; a timeout <= 0 tries exactly once.
//
// The lock belongs to the open file, not the process: two goroutines of one
// process exclude each other as two processes do. The kernel drops it when
// the holder dies, so a crash never leaves a stale lock. The lock file is
// never removed (removing it would let two holders lock different inodes).
// unlock is safe to call more than once.
func LockTimeout(path string, timeout time.Duration) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return lockOpen(f, path, timeout)
}

// LockDir is LockTimeout on a directory: the directory itself is the lock
// (nothing is created; a missing directory is fs.ErrNotExist).
func LockDir(dir string, timeout time.Duration) (unlock func(), err error) {
	f, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return lockOpen(f, dir, timeout)
}

func lockOpen(f *os.File, path string, timeout time.Duration) (unlock func(), err error) {
	fd := int(f.Fd())
	deadline := time.Now().Add(timeout)
	wait := lockPollMin
	for {
		err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		left := time.Until(deadline)
		if left <= 0 {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w after %s", path, ErrLockTimeout, timeout)
		}
		// Jitter keeps many waiters from polling in lockstep.
		d := wait/2 + rand.N(wait/2+1)
		time.Sleep(min(d, left))
		wait = min(wait*2, lockPollMax)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			unix.Flock(fd, unix.LOCK_UN)
			f.Close()
		})
	}, nil
}
