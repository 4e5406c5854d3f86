package vector

import (
	"context"
	"fmt"

	"github.com/pi-actors/pi-actors/knowledge/api/vectorop"
)

// Status reports the vector graph: embedder, counts, each domain's
// index and filter, and the background embedding's progress. It does not
// load the indexes: a store whose vector graph was not used in this
// process reports its domains as unloaded.
func (s *Store) Status(ctx context.Context) (*vectorop.VectorStatus, error) {
	emb := s.opts.Embedder
	st := &vectorop.VectorStatus{Embedder: emb.ID(), Dim: emb.Dim(), Domains: []vectorop.IndexStatus{}}
	err := s.r.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM vg_nodes), (SELECT count(*) FROM vg_edges),
		(SELECT count(*) FROM vg_conflicts WHERE resolved = 0), (SELECT count(*) `+embedPendingQ+`)`, emb.ID()).
		Scan(&st.Nodes, &st.Edges, &st.Conflicts, &st.Pending)
	if err != nil {
		return nil, fmt.Errorf("vector status of %s: %w", s.db.Path(), err)
	}
	counts := map[string]int{}
	rows, err := s.r.QueryContext(ctx, `SELECT domain, count(*) FROM vg_nodes GROUP BY domain`)
	if err != nil {
		return nil, fmt.Errorf("vector status of %s: %w", s.db.Path(), err)
	}
	defer rows.Close()
	for rows.Next() {
		var d string
		var n int
		if err := rows.Scan(&d, &n); err != nil {
			return nil, fmt.Errorf("vector status of %s: %w", s.db.Path(), err)
		}
		counts[d] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("vector status of %s: %w", s.db.Path(), err)
	}
	s.mu.Lock()
	g := s.mirror
	s.mu.Unlock()
	var idx map[string]*domainIndex
	if g != nil && g.loadedFast() {
		idx = g.indexes()
		g.emu.Lock()
		st.Embedding = g.eprog
		g.emu.Unlock()
	}
	for _, d := range vectorop.AllDomains {
		is := vectorop.IndexStatus{Domain: d, Nodes: counts[d], Index: "unloaded"}
		if vi := idx[d]; vi != nil {
			is.Vectors, is.Index = vi.len(), vi.mode()
			fs := g.filters.Set(d).Stats()
			is.FilterKeys, is.FilterPending = fs.Keys, fs.ExactKeys
		}
		st.Domains = append(st.Domains, is)
	}
	return st, nil
}
