package knowledge

import (
	"context"
	"path/filepath"

	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/api/vectorop"
	"github.com/pi-actors/pi-actors/knowledge/store"
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
func (l *Layers) vectorOp(ctx context.Context, c store.Caller, req op.Request) (v any, ok bool, err error) {
	switch r := req.(type) {
	case *vectorop.Search:
		v, err = withStore(l, r.Store, func(s *Store) (any, error) { return s.Search(ctx, r) })
	case *vectorop.SearchAll:
		v, err = withStore(l, r.Store, func(s *Store) (any, error) { return s.SearchAll(ctx, r) })
	case *vectorop.SmartSearch:
		v, err = withStore(l, r.Store, func(s *Store) (any, error) { return s.SmartSearch(ctx, r) })
	case *vectorop.NodeAdd:
		v, err = withStore(l, r.Store, func(s *Store) (any, error) { return s.AddNode(ctx, c, r) })
	case *vectorop.Ingest:
		v, err = withStore(l, r.Store, func(s *Store) (any, error) {
			p := r.Path
			if !filepath.IsAbs(p) {
				if !filepath.IsAbs(c.Cwd) {
					return nil, op.Invalid("path", "path %q is relative but the caller's cwd is unknown: pass an absolute path", p)
				}
				p = filepath.Join(c.Cwd, p)
			}
			return Ingest(ctx, s, IngestRequest{Path: p, Glob: r.Glob}, progressOf(ctx))
		})
	case *vectorop.Recall:
		v, err = l.recall(ctx, r)
	case *vectorop.NodeGet:
		v, err = l.byID(r.Store, "id", func(s *Store) (any, error) { return s.NodeGet(ctx, r) })
	case *vectorop.Traverse:
		v, err = l.byID(r.Store, "id", func(s *Store) (any, error) { return s.Traverse(ctx, r) })
	case *vectorop.Conflicts:
		if r.Operation == "resolve" {
			v, err = l.byID(r.Store, "id", func(s *Store) (any, error) { return s.Conflicts(ctx, r) })
			break
		}
		v, err = pages(l, r.Store, op.LimitOr(r.Limit, op.DefaultLimit), op.LimitOr(r.Offset, 0),
			func(s *Store, limit, offset int) (*op.Page[vectorop.ConflictRecord], error) {
				q := *r
				q.Limit, q.Offset = &limit, &offset
				p, err := s.Conflicts(ctx, &q)
				if err != nil {
					return nil, err
				}
				return p.(*op.Page[vectorop.ConflictRecord]), nil
			})
	default:
		return nil, false, nil
	}
	return v, true, err
}

func withStore(l *Layers, choice string, fn func(*Store) (any, error)) (any, error) {
	s, err := l.writeStore(choice)
	if err != nil {
		return nil, err
	}
	return fn(s)
}

// recall searches the chosen stores (project first), drops a personal
// hit that duplicates a project one (same natural key, or same domain,
// name and content hash), merges by score and tags every hit with its
// store.
func (l *Layers) recall(ctx context.Context, r *vectorop.Recall) (*vectorop.RecallResult, error) {
	ss, err := l.stores(r.Store)
	if err != nil {
		return nil, err
	}
	limit := op.LimitOr(r.Limit, vectorop.DefaultSearchLimit)
	domains := vectorop.AllDomains
	if r.Domain != "" {
		domains = []string{r.Domain}
	}
	res := &vectorop.RecallResult{Query: r.Query, Status: vectorop.StatusOK, Stores: []string{}}
	seen := map[string]bool{}
	var all []scored
	for _, s := range ss {
		per, _, _, err := s.ranked(ctx, r.Query, domains, r.Type, candidates(limit))
		if err != nil {
			return nil, err
		}
		res.Stores = append(res.Stores, s.Layer())
		hs := merged(per)
		for _, h := range hs[:min(limit, len(hs))] {
			id := h.key
			if id == "" {
				id = h.Domain + "\x00" + h.Name + "\x00" + h.hash
			}
			if !seen[id] {
				seen[id] = true
				all = append(all, h)
			}
		}
	}
	sortScored(all)
	out := all[:min(limit, len(all))]
	for _, s := range ss {
		var mine []scored
		var at []int
		for i := range out {
			if out[i].from == s {
				mine, at = append(mine, out[i]), append(at, i)
			}
		}
		if err := s.enrich(ctx, mine, r.Query); err != nil {
			return nil, err
		}
		for j, i := range at {
			out[i] = mine[j]
		}
	}
	res.Hits = hitsOf(out)
	if len(out) == 0 {
		res.Status = vectorop.StatusNoMatches
	}
	return res, nil
}
