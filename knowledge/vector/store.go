package vector

import (
	"database/sql"
	"fmt"
	"sync"

	"github.com/pi-actors/pi-actors/knowledge/embed"
	"github.com/pi-actors/pi-actors/knowledge/store"
)

// Options configure a Store.
type Options struct {
	// Embedder makes the vectors (default the local feature-hashing
	// embedder). Vectors of other embedders are re-embedded in the
	// background.
	Embedder embed.Embedder
	// ExactBelow is the vector count below which a domain is searched by
	// an exact scan rather than an HNSW graph (default DefaultExactBelow).
	ExactBelow int
}

// Store is the vector graph of one store file. It is safe for concurrent
// use; its background goroutines stop in Close.
type Store struct {
	db   *store.DB
	r    *sql.DB
	opts Options

	mu     sync.Mutex
	mirror *mirror // the in-memory side, made on first use
	closed bool

	ingestMu sync.Mutex // one Ingest at a time
}

// New returns the vector graph of db.
func New(db *store.DB, opts Options) *Store {
	if opts.Embedder == nil {
		opts.Embedder = embed.NewLocal()
	}
	if opts.ExactBelow <= 0 {
		opts.ExactBelow = DefaultExactBelow
	}
	return &Store{db: db, r: db.Reader(), opts: opts}
}

// Layer is the store's layer tag.
func (s *Store) Layer() string { return s.db.Layer() }

// Close stops the background workers and writes every domain graph that
// changed next to the store. It does not close the store file.
func (s *Store) Close() error {
	s.mu.Lock()
	g := s.mirror
	s.mirror, s.closed = nil, true
	s.mu.Unlock()
	if g == nil {
		return nil
	}
	if err := g.close(); err != nil {
		return fmt.Errorf("close vector graph of %s: %w", s.db.Path(), err)
	}
	return nil
}
