package graph

import (
	"context"
	"database/sql"
	"path/filepath"
	"sync"

	"github.com/pi-actors/pi-actors/knowledge/store"
)

// Store is the knowledge graph of one store file. It is safe for
// concurrent use.
type Store struct {
	db *store.DB
	r  *sql.DB

	mu      sync.Mutex
	indexes map[string]*globIndex // context match index per project id
	linker  AtomLinker            // recomputes an atom's code links (SetAtomLinker)
}

// New returns the knowledge graph of db.
func New(db *store.DB) *Store {
	return &Store{db: db, r: db.Reader(), indexes: map[string]*globIndex{}}
}

// AtomMatcher returns a function that lists the atoms whose path
// patterns match an absolute file path, in every project whose root
// holds it (each project's root lookup is remembered per directory for
// the matcher's life: one ingest).
func (s *Store) AtomMatcher() func(ctx context.Context, abs string) ([]string, error) {
	projects := map[string][]string{} // dir → project ids whose root holds it
	return func(ctx context.Context, abs string) ([]string, error) {
		dir := filepath.Dir(abs)
		pids, ok := projects[dir]
		if !ok {
			var err error
			if pids, err = projectsAt(ctx, s.r, dir); err != nil {
				return nil, err
			}
			projects[dir] = pids
		}
		var atoms []string
		for _, pid := range pids {
			root, err := projectRoot(ctx, s.r, pid)
			if err != nil {
				return nil, err
			}
			rel, ok := normalizePath(abs, root)
			if !ok {
				continue
			}
			ix, err := s.index(ctx, pid)
			if err != nil {
				return nil, err
			}
			ix.match(rel, func(a int32) { atoms = append(atoms, ix.atoms[a]) })
		}
		return atoms, nil
	}
}
