package fsutil

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func TestLockTimeoutExcludesAndTimesOut(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".x.lock")
	unlock, err := LockTimeout(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = LockTimeout(path, 30*time.Millisecond)
	if !errors.Is(err, ErrLockTimeout) {
		t.Fatalf("second lock: got %v, want ErrLockTimeout", err)
	}
	if d := time.Since(start); d < 30*time.Millisecond {
		t.Fatalf("gave up after %s, before the timeout", d)
	}
	if _, err := LockTimeout(path, 0); !errors.Is(err, ErrLockTimeout) {
		t.Fatalf("try-once lock: got %v, want ErrLockTimeout", err)
	}
	unlock()
	unlock() // idempotent
	// The waiter that gave up takes the released lock for an instant.
	for deadline := time.Now().Add(5 * time.Second); abandoned.Load() != 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	unlock2, err := LockTimeout(path, 0)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	unlock2()
}

func TestLockTimeoutWaitsForRelease(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".x.lock")
	var mu sync.Mutex
	inside := 0
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				unlock, err := LockTimeout(path, 5*time.Second)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				inside++
				if inside != 1 {
					t.Errorf("%d holders at once", inside)
				}
				mu.Unlock()
				time.Sleep(10 * time.Microsecond)
				mu.Lock()
				inside--
				mu.Unlock()
				unlock()
			}
		}()
	}
	wg.Wait()
}

func TestLockTimeoutMissingDir(t *testing.T) {
	_, err := LockTimeout(filepath.Join(t.TempDir(), "nope", ".x.lock"), time.Second)
	if err == nil || errors.Is(err, ErrLockTimeout) {
		t.Fatalf("got %v, want an open error", err)
	}
}

// A waiter that timed out takes the lock when its holder lets go and
// releases it at once: the lock is free again for the next caller, and
// no descriptor is left open.
func TestLockAbandonedWaiterReleases(t *testing.T) {
	dir := t.TempDir()
	unlock, err := LockDir(dir, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	before := abandoned.Load()
	if _, err := LockDir(dir, 20*time.Millisecond); !errors.Is(err, ErrLockTimeout) {
		t.Fatalf("got %v, want ErrLockTimeout", err)
	}
	if abandoned.Load() != before+1 {
		t.Fatalf("abandoned waiters %d, want %d", abandoned.Load(), before+1)
	}
	unlock()
	deadline := time.Now().Add(5 * time.Second)
	for abandoned.Load() != before {
		if time.Now().After(deadline) {
			t.Fatal("the abandoned waiter never let go")
		}
		time.Sleep(time.Millisecond)
	}
	u, err := LockDir(dir, 0)
	if err != nil {
		t.Fatalf("lock after the abandoned waiter: %v", err)
	}
	u()
}

// A waiter gets a released lock without a polling delay, and the polling
// wait (used past maxAbandoned waiters) still excludes and times out.
func TestLockHandoverAndPolling(t *testing.T) {
	dir := t.TempDir()
	unlock, err := LockDir(dir, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan time.Time, 1)
	go func() {
		u, err := LockDir(dir, 5*time.Second)
		if err != nil {
			t.Error(err)
		}
		got <- time.Now()
		u()
	}()
	time.Sleep(50 * time.Millisecond) // the waiter is blocked by now
	released := time.Now()
	unlock()
	if d := (<-got).Sub(released); d > 500*time.Millisecond {
		t.Fatalf("the waiter took %s to get a released lock", d)
	}

	f, err := OpenRaw(dir, os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	u, err := LockDir(dir, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := pollLock(f, dir, 20*time.Millisecond); !errors.Is(err, ErrLockTimeout) {
		t.Fatalf("poll: got %v, want ErrLockTimeout", err)
	}
	if f.Close() == nil {
		t.Fatal("pollLock left its file open after a timeout")
	}
	u()
	f, _ = OpenRaw(dir, os.O_RDONLY, 0)
	if err := pollLock(f, dir, time.Second); err != nil {
		t.Fatalf("poll a free lock: %v", err)
	}
	f.Close()
}
