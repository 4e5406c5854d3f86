package knowledge

import (
	"context"
	"errors"
	"time"

	"github.com/pi-actors/pi-actors/knowledge/api"
	"github.com/pi-actors/pi-actors/knowledge/api/graphop"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/embed"
	"github.com/pi-actors/pi-actors/knowledge/graph"
	"github.com/pi-actors/pi-actors/knowledge/store"
	"github.com/pi-actors/pi-actors/knowledge/vector"
)

// Options configure a Store.
type Options struct {
	// RunExists reports whether a run id exists, or why it is no run id
	// at all (the error); task ids of the form run:<id> must name one
	// (INVALID for a malformed id, NOT_FOUND for one no run has). Nil
	// accepts every run.
	RunExists func(id string) (bool, error)
	// Layer tags every item read from this store ("project" or "personal");
	// empty leaves items untagged.
	Layer string
	// ReadConns is the size of the read pool (default 4).
	ReadConns int
	// BusyTimeout is how long a write waits for another process's lock
	// (default 5 s).
	BusyTimeout time.Duration
	// Embedder makes the vector graph's vectors (default the local
	// feature-hashing embedder). Vectors of other embedders are re-embedded
	// in the background.
	Embedder embed.Embedder
	// ExactBelow is the vector count below which a domain is searched by
	// an exact scan rather than an HNSW graph (default
	// vector.DefaultExactBelow).
	ExactBelow int
}

// Store is one knowledge database. It is safe for concurrent use.
type Store struct {
	db   *store.DB
	opts Options

	graph   *graph.Store
	vectors *vector.Store
}

// Open opens the knowledge store at path (see store.Open).
func Open(path string, opts Options) (*Store, error) {
	db, err := store.Open(path, store.Options{RunExists: opts.RunExists, Layer: opts.Layer,
		ReadConns: opts.ReadConns, BusyTimeout: opts.BusyTimeout})
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, opts: opts, graph: graph.New(db),
		vectors: vector.New(db, vector.Options{Embedder: opts.Embedder, ExactBelow: opts.ExactBelow})}
	// One file: an atom's write relinks its code nodes in its transaction.
	s.graph.SetAtomLinker(s.vectors.LinkAtom)
	return s, nil
}

// Close stops the vector graph's workers (writing changed graphs) and
// closes the store's connections.
func (s *Store) Close() error {
	return errors.Join(s.vectors.Close(), s.db.Close())
}

// Path is the store's absolute file path.
func (s *Store) Path() string { return s.db.Path() }

// Layer is the store's layer tag (Options.Layer).
func (s *Store) Layer() string { return s.db.Layer() }

// Graph is the store's knowledge graph.
func (s *Store) Graph() *graph.Store { return s.graph }

// Vectors is the store's vector graph.
func (s *Store) Vectors() *vector.Store { return s.vectors }

// Status reports the store's path, schema version, size (database and
// WAL), row counts, first projects and vector graph.
func (s *Store) Status(ctx context.Context) (*api.StoreStatus, error) {
	v, err := s.db.Version(ctx)
	if err != nil {
		return nil, err
	}
	counts, err := s.graph.Counts(ctx)
	if err != nil {
		return nil, err
	}
	page, err := s.graph.Projects(ctx, &graphop.ProjectList{Limit: new(op.MaxLimit)})
	if err != nil {
		return nil, err
	}
	vectors, err := s.vectors.Status(ctx)
	if err != nil {
		return nil, err
	}
	return &api.StoreStatus{Store: s.Layer(), Path: s.Path(), SchemaVersion: v, SizeBytes: s.db.Size(), Counts: *counts,
		Projects: page.Items, Vectors: vectors}, nil
}
