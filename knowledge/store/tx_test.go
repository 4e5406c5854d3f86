package store

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestConcurrentWritesPrepareWithoutDeadlock: writers that each use
// statements new to the cache run at once. After its commit a writer
// prepares its statements on the writer connection; it must not hold the
// cache's lock while it waits for that connection, which the next
// transaction holds while it needs the lock (it hung until the request's
// 2-minute timeout: concurrent `knowledge node_add`).
func TestConcurrentWritesPrepareWithoutDeadlock(t *testing.T) {
	s := openDB(t, t.TempDir()+"/k.db")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, err := s.Write(ctx, func(tx *Tx) (any, error) {
		return tx.ExecContext(ctx, `CREATE TABLE scratch (x TEXT)`)
	}); err != nil {
		t.Fatal(err)
	}
	const writers, each = 4, 40
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for g := range writers {
		wg.Go(func() {
			for i := range each {
				// A statement no transaction used before (its comment differs),
				// twice: the second use goes through the cache or the
				// transaction's own prepared copy.
				q := fmt.Sprintf(`INSERT INTO scratch (x) VALUES (?) -- w%d-%d`, g, i)
				_, err := s.Write(ctx, func(tx *Tx) (any, error) {
					if _, err := tx.ExecContext(ctx, q, "a"); err != nil {
						return nil, err
					}
					return tx.ExecContext(ctx, q, "b")
				})
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("a write failed (a deadlock ends at the context's deadline): %v", err)
	}
	var n int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM scratch`).Scan(&n); err != nil || n != writers*each*2 {
		t.Fatalf("rows %d (%v), want %d", n, err, writers*each*2)
	}
}
