package fsutil

import (
	"errors"
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
