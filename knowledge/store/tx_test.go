package store

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/knowledge/api/op"
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

// A write that loses a race with another process — its lock held past
// the busy timeout, or a live vector node's key written meanwhile — is a
// busy CONFLICT (exit 75, run it again), not a raw SQLite error.
func TestWriteRaceIsBusyConflict(t *testing.T) {
	path := t.TempDir() + "/k.db"
	a := openDB(t, path)
	b, err := Open(path, Options{BusyTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	busy := func(what string, err error) {
		t.Helper()
		e, ok := op.AsError(err)
		if !ok || e.Exit() != 75 || e.Details["reason"] != op.ReasonBusy || strings.Contains(e.Message, "SQLITE") || strings.Contains(e.Message, "constraint") {
			t.Fatalf("%s: %v", what, err)
		}
	}
	held, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := a.Write(t.Context(), func(tx *Tx) (any, error) {
			close(held)
			<-release
			return nil, nil
		})
		done <- err
	}()
	<-held
	_, err = b.Write(t.Context(), func(tx *Tx) (any, error) { return nil, nil })
	close(release)
	busy("lock held", err)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	node := func(tx *Tx, id string) error {
		_, err := tx.ExecContext(t.Context(), `INSERT INTO vg_nodes(id, key, domain, type, name, content_hash, trust, created_at, updated_at)
			VALUES (?, 'file:/a.go', 'code', 'file', 'a.go', 'h', 100, 'now', 'now')`, id)
		return err
	}
	if _, err := a.Write(t.Context(), func(tx *Tx) (any, error) { return nil, node(tx, "n1") }); err != nil {
		t.Fatal(err)
	}
	_, err = b.Write(t.Context(), func(tx *Tx) (any, error) { return nil, node(tx, "n2") })
	busy("live key written meanwhile", err)
}
