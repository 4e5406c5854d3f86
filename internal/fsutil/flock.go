package fsutil

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ErrLockTimeout is returned by LockTimeout when the lock stays taken for
// the whole timeout.
var ErrLockTimeout = errors.New("lock timed out")

// maxBlocked bounds the waiters blocked in flock(2) at once, each holding
// an OS thread (abandoned ones included, see waitLock): past it, a
// contended lock is waited for by polling instead.
const maxBlocked = 64

// Poll interval bounds for the polling wait: start short (most critical
// sections are one write), back off to at most lockPollMax.
const (
	lockPollMin = 50 * time.Microsecond
	lockPollMax = 2 * time.Millisecond
)

var (
	blocked   atomic.Int32 // waiters in a blocking flock(2) now
	abandoned atomic.Int32 // of those, the ones whose caller gave up
)

// LockTimeout takes an exclusive flock(2) on path (a file created mode
// 0600 if needed; the parent directory must exist) and returns its release
// function. A free lock is taken at once; a held one is waited for in a
// blocking flock, so it is handed over the moment its holder lets go, and
// after timeout the wait gives up with an error wrapping ErrLockTimeout;
// a timeout <= 0 tries exactly once. (A waiter that gave up still takes
// the lock for an instant when it is released, and lets go at once: a
// try-once right after a release may find it taken.)
//
// The lock belongs to the open file, not the process: two goroutines of one
// process exclude each other as two processes do. The kernel drops it when
// the holder dies, so a crash never leaves a stale lock. The lock file is
// never removed (removing it would let two holders lock different inodes).
// unlock is safe to call more than once.
func LockTimeout(path string, timeout time.Duration) (unlock func(), err error) {
	f, err := OpenRaw(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return lockOpen(f, path, timeout)
}

// LockDir is LockTimeout on a directory: the directory itself is the lock
// (nothing is created; a missing directory is fs.ErrNotExist).
func LockDir(dir string, timeout time.Duration) (unlock func(), err error) {
	f, err := OpenRaw(dir, os.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return lockOpen(f, dir, timeout)
}

func lockOpen(f *RawFile, path string, timeout time.Duration) (unlock func(), err error) {
	err = f.flock(unix.LOCK_EX | unix.LOCK_NB)
	switch {
	case err == nil:
	case !errors.Is(err, unix.EWOULDBLOCK):
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	case timeout <= 0:
		f.Close()
		return nil, fmt.Errorf("lock %s: %w after %s", path, ErrLockTimeout, timeout)
	case blocked.Add(1) > maxBlocked:
		blocked.Add(-1)
		err = pollLock(f, path, timeout)
	default:
		err = waitLock(f, path, timeout) // releases its blocked slot
	}
	if err != nil {
		return nil, err
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			f.flock(unix.LOCK_UN)
			f.Close()
		})
	}, nil
}

// waitLock waits for a held lock in a blocking flock(2) on a goroutine of
// its own. If the timeout comes first, that goroutine is abandoned: it
// releases the lock and closes the file as soon as it gets the lock. On
// every error path f is closed.
func waitLock(f *RawFile, path string, timeout time.Duration) error {
	var mu sync.Mutex
	gaveUp := false
	got := make(chan error, 1)
	go func() {
		err := f.flock(unix.LOCK_EX)
		blocked.Add(-1)
		mu.Lock()
		defer mu.Unlock()
		if gaveUp {
			if err == nil {
				f.flock(unix.LOCK_UN)
			}
			f.Close()
			abandoned.Add(-1)
			return
		}
		got <- err
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	var err error
	select {
	case err = <-got:
	case <-t.C:
		mu.Lock()
		select {
		case err = <-got: // it came just in time
		default:
			gaveUp = true
			abandoned.Add(1)
			mu.Unlock()
			return fmt.Errorf("lock %s: %w after %s", path, ErrLockTimeout, timeout)
		}
		mu.Unlock()
	}
	if err != nil {
		f.Close()
		return fmt.Errorf("lock %s: %w", path, err)
	}
	return nil
}

// pollLock waits for a held lock by retrying LOCK_NB, backing off from
// lockPollMin to lockPollMax with jitter (so many waiters do not poll in
// lockstep). On every error path f is closed.
func pollLock(f *RawFile, path string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	wait := lockPollMin
	for {
		err := f.flock(unix.LOCK_EX | unix.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return fmt.Errorf("lock %s: %w", path, err)
		}
		left := time.Until(deadline)
		if left <= 0 {
			f.Close()
			return fmt.Errorf("lock %s: %w after %s", path, ErrLockTimeout, timeout)
		}
		d := wait/2 + rand.N(wait/2+1)
		time.Sleep(min(d, left))
		wait = min(wait*2, lockPollMax)
	}
}
