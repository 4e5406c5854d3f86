package store

import (
	"context"
	"database/sql"
	"fmt"
)

// Tx is a write transaction that runs statements it has seen before as
// prepared statements of the writer connection (preparing is a good part
// of a small write's cost).
type Tx struct {
	*sql.Tx
	s     *DB
	seen  []string             // statements to prepare after this transaction
	local map[string]*sql.Stmt // statements prepared on this transaction (a big Batch reuses them)
}

// txKey carries a batch's transaction in its context.
type txKey struct{}

// WithTx returns a context whose writes (Write) join tx: a batch of
// operations in one transaction.
func WithTx(ctx context.Context, tx *Tx) context.Context {
	return context.WithValue(ctx, txKey{}, tx)
}

// maxStmts bounds the prepared statement cache (update statements vary
// with the changed columns).
const maxStmts = 128

func (w *Tx) stmt(ctx context.Context, q string) *sql.Stmt {
	w.s.smu.Lock()
	st := w.s.stmts[q]
	w.s.smu.Unlock()
	if st != nil {
		return w.Tx.StmtContext(ctx, st)
	}
	if st := w.local[q]; st != nil {
		return st
	}
	w.seen = append(w.seen, q)
	// The store's cache fills after the transaction (the writer connection
	// is busy until then); inside it, a statement is prepared on the
	// transaction once, so the items of a large Batch share it.
	st, err := w.Tx.PrepareContext(ctx, q)
	if err != nil {
		return nil
	}
	if w.local == nil {
		w.local = map[string]*sql.Stmt{}
	}
	w.local[q] = st
	return st
}

// ExecContext is sql.Tx.ExecContext through the statement cache.
func (w *Tx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	if st := w.stmt(ctx, q); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return w.Tx.ExecContext(ctx, q, args...)
}

// QueryRowContext is sql.Tx.QueryRowContext through the statement cache.
func (w *Tx) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	if st := w.stmt(ctx, q); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return w.Tx.QueryRowContext(ctx, q, args...)
}

// QueryContext is sql.Tx.QueryContext through the statement cache.
func (w *Tx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if st := w.stmt(ctx, q); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return w.Tx.QueryContext(ctx, q, args...)
}

// prepare adds the statements a transaction used to the cache; it runs
// when the writer connection is free again. It never waits for the writer
// connection while it holds the cache's lock: the transaction that holds
// the connection may need the lock (Tx.stmt) to finish, and the two would
// wait for each other.
func (s *DB) prepare(ctx context.Context, qs []string) {
	for _, q := range qs {
		s.smu.Lock()
		_, have := s.stmts[q]
		skip := s.stmts == nil || have || len(s.stmts) >= maxStmts // closed, cached or full
		s.smu.Unlock()
		if skip {
			continue
		}
		st, err := s.w.PrepareContext(ctx, q)
		if err != nil {
			continue
		}
		s.smu.Lock()
		if _, have := s.stmts[q]; s.stmts == nil || have || len(s.stmts) >= maxStmts {
			st.Close() // closed, or another writer cached it meanwhile
		} else {
			s.stmts[q] = st
		}
		s.smu.Unlock()
	}
}

// Write runs fn in one write transaction (BEGIN IMMEDIATE through the
// single writer connection) and commits when fn succeeds. When ctx
// carries a transaction of this DB (WithTx), fn joins it.
func (s *DB) Write(ctx context.Context, fn func(tx *Tx) (any, error)) (any, error) {
	if w, ok := ctx.Value(txKey{}).(*Tx); ok && w.s == s {
		return fn(w)
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, classify(fmt.Errorf("begin write %s: %w", s.path, err))
	}
	w := &Tx{Tx: tx, s: s}
	v, err := fn(w)
	if err != nil {
		tx.Rollback()
	} else if err = tx.Commit(); err != nil {
		err = fmt.Errorf("commit %s: %w", s.path, err)
	}
	if len(w.seen) > 0 {
		s.prepare(ctx, w.seen)
	}
	if err != nil {
		return nil, classify(err)
	}
	return v, nil
}
