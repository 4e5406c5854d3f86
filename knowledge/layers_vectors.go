package knowledge

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/api/vectorop"
	"github.com/pi-actors/pi-actors/knowledge/store"
	"github.com/pi-actors/pi-actors/knowledge/vector"
)

// progressKey carries an ingest progress callback in a context.
type progressKey struct{}

// WithProgress returns a context whose ingest requests (through
// Layers.Execute) report progress to fn: files done of total.
func WithProgress(ctx context.Context, fn func(done, total int)) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

func progressOf(ctx context.Context) func(done, total int) {
	fn, _ := ctx.Value(progressKey{}).(func(done, total int))
	return fn
}

// vectorOp routes the vector graph's operations; ok is false for other
// requests.
//
//   - search, search_all, smart_search, ingest and node_add use one
//     store: store=, else the project store when there is one, else the
//     personal store;
//   - recall searches every chosen store (project first) and merges;
//   - node_get, traverse and conflicts resolve go to the store holding
//     the id; conflicts list pages across the stores.
//
// nameBase is the directory ingest names files under p relative to: the
// project's root for a project store (the directory holding its .pi/),
// else the repository p lies in.
func nameBase(s *Store, p string) string {
	if s.Layer() == op.StoreProject { // <root>/.pi/knowledge.db
		return filepath.Dir(filepath.Dir(s.Path()))
	}
	d := p
	if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
		d = filepath.Dir(p)
	}
	return store.RepoRoot(d)
}

func (l *Layers) vectorOp(ctx context.Context, c store.Caller, req op.Request) (v any, ok bool, err error) {
	switch r := req.(type) {
	case *vectorop.Search:
		v, err = withStore(l, r.Store, func(s *Store) (any, error) { return s.vectors.Search(ctx, r) })
	case *vectorop.SearchAll:
		v, err = withStore(l, r.Store, func(s *Store) (any, error) { return s.vectors.SearchAll(ctx, r) })
	case *vectorop.SmartSearch:
		v, err = withStore(l, r.Store, func(s *Store) (any, error) { return s.vectors.SmartSearch(ctx, r) })
	case *vectorop.NodeAdd:
		v, err = withStore(l, r.Store, func(s *Store) (any, error) { return s.vectors.AddNode(ctx, c, r) })
	case *vectorop.Ingest:
		v, err = withStore(l, r.Store, func(s *Store) (any, error) {
			p := r.Path
			if !filepath.IsAbs(p) {
				if !filepath.IsAbs(c.Cwd) {
					return nil, op.Invalid("path", "path %q is relative but the caller's cwd is unknown: pass an absolute path", p)
				}
				p = filepath.Join(c.Cwd, p)
			}
			return s.vectors.Ingest(ctx, vector.IngestRequest{Path: p, Glob: r.Glob, Base: nameBase(s, p), Atoms: s.graph.AtomMatcher()}, progressOf(ctx))
		})
	case *vectorop.Recall:
		var ss []*Store
		if ss, err = l.stores(r.Store); err == nil {
			vs := make([]*vector.Store, len(ss))
			for i, s := range ss {
				vs[i] = s.vectors
			}
			v, err = vector.Recall(ctx, vs, r)
		}
	case *vectorop.NodeGet:
		v, err = l.byID(r.Store, "id", func(s *Store) (any, error) { return s.vectors.NodeGet(ctx, r) })
	case *vectorop.Traverse:
		v, err = l.byID(r.Store, "id", func(s *Store) (any, error) { return s.vectors.Traverse(ctx, r) })
	case *vectorop.Conflicts:
		if r.Operation == "resolve" {
			// Conflict ids are per store: an id both stores hold is not
			// resolved in whichever comes first (a resolution is final).
			if err = l.oneConflict(ctx, r); err == nil {
				v, err = l.byID(r.Store, "id", func(s *Store) (any, error) { return s.vectors.Conflicts(ctx, r) })
			}
			break
		}
		v, err = pagesOf[vectorop.ConflictRecord](l, r.Store, op.LimitOr(r.Limit, op.DefaultLimit), op.LimitOr(r.Offset, 0),
			func(s *Store, limit, offset *int) (any, error) {
				q := *r
				q.Limit, q.Offset = limit, offset
				return s.vectors.Conflicts(ctx, &q)
			})
	default:
		return nil, false, nil
	}
	return v, true, err
}

// oneConflict refuses a resolve without store= of a conflict id more
// than one store holds.
func (l *Layers) oneConflict(ctx context.Context, r *vectorop.Conflicts) error {
	if r.Store != "" || r.ID == nil {
		return nil
	}
	ss, err := l.stores("")
	if err != nil {
		return err
	}
	var in []string
	for _, s := range ss {
		if ok, err := s.vectors.HasConflict(ctx, *r.ID); err != nil {
			return err
		} else if ok {
			in = append(in, s.db.Layer())
		}
	}
	if len(in) > 1 {
		return op.Invalid("store", "conflict #%d is in the %s stores (ids are per store): give store=%s or store=%s; a resolution is final", *r.ID, strings.Join(in, " and "), in[0], in[1])
	}
	return nil
}

func withStore(l *Layers, choice string, fn func(*Store) (any, error)) (any, error) {
	s, err := l.writeStore(choice)
	if err != nil {
		return nil, err
	}
	return fn(s)
}
