package vector

import (
	"context"
	"fmt"
	"strings"

	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/api/vectorop"
	"github.com/pi-actors/pi-actors/knowledge/store"
)

// Edge types the cross-domain questions follow (seed 001).
var (
	touchEdges    = []string{"modified", "created", "deleted"}                  // history → code
	decisionEdges = []string{"based_on", "references", "validated_by"}          // history → academic
	docEdges      = []string{"documents", "implements_pattern", "uses_library"} // academic ↔ code
)

// maxNodeEdges bounds the edges node_get lists.
const maxNodeEdges = 50

// neighbours returns up to limit nodes one edge away from id in dir
// ("out": id is the source; "in": the target), following only types
// (all when empty), with the edge type of each.
func neighbours(ctx context.Context, q store.Querier, id, dir string, types []string, limit int) ([]vectorop.NodeRef, []string, error) {
	self, other := "e.source_id", "e.target_id"
	if dir == "in" {
		self, other = other, self
	}
	query := `SELECT e.type, ` + refCols + ` FROM vg_edges e JOIN vg_nodes n ON n.id = ` + other + ` WHERE ` + self + ` = ?`
	args := []any{id}
	if len(types) > 0 {
		query += ` AND e.type IN (?` + strings.Repeat(", ?", len(types)-1) + `)`
		for _, t := range types {
			args = append(args, t)
		}
	}
	query += ` ORDER BY e.type, n.seq LIMIT ?`
	rows, err := q.QueryContext(ctx, query, append(args, limit)...)
	if err != nil {
		return nil, nil, fmt.Errorf("read edges of %s: %w", id, err)
	}
	defer rows.Close()
	var refs []vectorop.NodeRef
	var via []string
	for rows.Next() {
		var t string
		var r vectorop.NodeRef
		if err := rows.Scan(&t, &r.ID, &r.Domain, &r.Type, &r.Name, &r.Path, &r.CreatedAt, &r.SupersededBy); err != nil {
			return nil, nil, fmt.Errorf("read edges of %s: %w", id, err)
		}
		refs, via = append(refs, r), append(via, t)
	}
	return refs, via, rows.Err()
}

// Traverse runs traverse: a breadth-first walk from the node, at most
// depth hops (≤ 5), following at most fanOut edges per node and
// returning at most limit nodes; every node is visited once, so cycles
// end the walk rather than loop. req must have passed Validate.
func (s *Store) Traverse(ctx context.Context, req *vectorop.Traverse) (*vectorop.TraverseResult, error) {
	start, err := s.loadNode(ctx, s.r, "id", req.ID)
	if err != nil {
		return nil, err
	}
	depth := op.LimitOr(req.Depth, vectorop.DefaultDepth)
	fan := op.LimitOr(req.FanOut, vectorop.DefaultFanOut)
	limit := op.LimitOr(req.Limit, vectorop.DefaultWalkLimit)
	dirs := []string{"out", "in"}
	if req.Direction == "out" || req.Direction == "in" {
		dirs = []string{req.Direction}
	}
	res := &vectorop.TraverseResult{Start: start.NodeRef, Nodes: []vectorop.Step{}, Store: s.db.Layer()}
	seen := map[string]bool{start.ID: true}
	frontier := []string{start.ID}
	for d := 1; d <= depth && len(frontier) > 0; d++ {
		var next []string
		for _, from := range frontier {
			var steps []vectorop.Step
			for _, dir := range dirs {
				refs, via, err := neighbours(ctx, s.r, from, dir, req.EdgeTypes, fan+1)
				if err != nil {
					return nil, err
				}
				for i, r := range refs {
					steps = append(steps, vectorop.Step{NodeRef: r, Depth: d, Via: via[i], From: from, Direction: dir})
				}
			}
			if len(steps) > fan {
				steps, res.Truncated = steps[:fan], true
			}
			for _, st := range steps {
				if seen[st.ID] {
					continue
				}
				if len(res.Nodes) == limit {
					res.Truncated = true
					return res, nil
				}
				seen[st.ID] = true
				res.Nodes = append(res.Nodes, st)
				next = append(next, st.ID)
			}
		}
		frontier = next
	}
	return res, nil
}

// versions returns id and the ids of the older versions it supersedes
// (up to five generations back).
func versions(ctx context.Context, q store.Querier, id string) ([]string, error) {
	ids := []string{id}
	cur := []string{id}
	for range 5 {
		var older []string
		for _, c := range cur {
			refs, _, err := neighbours(ctx, q, c, "out", []string{"supersedes"}, maxNodeEdges)
			if err != nil {
				return nil, err
			}
			for _, r := range refs {
				older = append(older, r.ID)
			}
		}
		if len(older) == 0 {
			break
		}
		ids, cur = append(ids, older...), older
	}
	return ids, nil
}

// current follows superseded_by up to five times: the live version.
func current(ctx context.Context, q store.Querier, r vectorop.NodeRef) (vectorop.NodeRef, error) {
	for range 5 {
		if r.SupersededBy == "" || r.SupersededBy == r.ID { // live, or a deleted file
			return r, nil
		}
		next, err := queryRefs(ctx, q, `SELECT `+refCols+` FROM vg_nodes n WHERE n.id = ?`, r.SupersededBy)
		if err != nil || len(next) == 0 {
			return r, err
		}
		r = next[0]
	}
	return r, nil
}

// linked returns the distinct nodes of domain one edge of types away
// from any of ids, in dir (both when dir is "").
func linked(ctx context.Context, q store.Querier, ids []string, dir, domain string, types []string) ([]vectorop.NodeRef, error) {
	out := []vectorop.NodeRef{}
	seen := map[string]bool{}
	dirs := []string{"out", "in"}
	if dir != "" {
		dirs = []string{dir}
	}
	for _, id := range ids {
		for _, d := range dirs {
			refs, _, err := neighbours(ctx, q, id, d, types, maxNodeEdges)
			if err != nil {
				return nil, err
			}
			for _, r := range refs {
				if r.Domain == domain && !seen[r.ID] && len(out) < maxNodeEdges {
					seen[r.ID] = true
					out = append(out, r)
				}
			}
		}
	}
	return out, nil
}

// historyForCode returns the history nodes that modified, created or
// deleted a code node or any of its older versions (seed 001's "have we
// had issues with this function before?").
func (s *Store) historyForCode(ctx context.Context, codeID string) ([]vectorop.NodeRef, error) {
	ids, err := versions(ctx, s.r, codeID)
	if err != nil {
		return nil, err
	}
	return linked(ctx, s.r, ids, "in", vectorop.DomainHistory, touchEdges)
}

// codeForHistory returns the code a history node touched, each resolved
// to its current version.
func (s *Store) codeForHistory(ctx context.Context, historyID string) ([]vectorop.NodeRef, error) {
	refs, err := linked(ctx, s.r, []string{historyID}, "out", vectorop.DomainCode, touchEdges)
	if err != nil {
		return nil, err
	}
	for i := range refs {
		if refs[i], err = current(ctx, s.r, refs[i]); err != nil {
			return nil, err
		}
	}
	return refs, nil
}

// academicForCode returns the documents about a code node (documents,
// implements_pattern and uses_library edges, either way).
func (s *Store) academicForCode(ctx context.Context, codeID string) ([]vectorop.NodeRef, error) {
	return linked(ctx, s.r, []string{codeID}, "", vectorop.DomainAcademic, docEdges)
}

// NodeGet runs node_get. req must have passed Validate.
func (s *Store) NodeGet(ctx context.Context, req *vectorop.NodeGet) (*vectorop.NodeDetail, error) {
	n, err := s.loadNode(ctx, s.r, "id", req.ID)
	if err != nil {
		return nil, err
	}
	x, err := extrasOf(ctx, s.r, []string{n.ID})
	if err != nil {
		return nil, err
	}
	res := &vectorop.NodeDetail{Node: *n, Provenance: op.NonNil(x.prov[n.ID]), Conflicts: op.NonNil(x.conflicts[n.ID]),
		Atoms: op.NonNil(x.atoms[n.ID]), Edges: []vectorop.EdgeRef{}}
	err = s.r.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM vg_edges WHERE source_id = ?) + (SELECT count(*) FROM vg_edges WHERE target_id = ?)`,
		n.ID, n.ID).Scan(&res.EdgesTotal)
	if err != nil {
		return nil, fmt.Errorf("count edges of %s: %w", n.ID, err)
	}
	for _, dir := range []string{"out", "in"} {
		refs, via, err := neighbours(ctx, s.r, n.ID, dir, nil, maxNodeEdges-len(res.Edges))
		if err != nil {
			return nil, err
		}
		for i, r := range refs {
			res.Edges = append(res.Edges, vectorop.EdgeRef{Type: via[i], Direction: dir, Node: r})
		}
	}
	return res, s.crossDomain(ctx, res)
}

func (s *Store) crossDomain(ctx context.Context, res *vectorop.NodeDetail) error {
	err := s.crossLists(ctx, res)
	for _, l := range []struct {
		name string
		refs []vectorop.NodeRef
	}{{"history", res.History}, {"code", res.Code}, {"academic", res.Academic}} {
		if len(l.refs) >= maxNodeEdges {
			res.LinkedCut = append(res.LinkedCut, l.name)
		}
	}
	return err
}

func (s *Store) crossLists(ctx context.Context, res *vectorop.NodeDetail) error {
	var err error
	id := res.Node.ID
	switch res.Node.Domain {
	case vectorop.DomainCode:
		if res.History, err = s.historyForCode(ctx, id); err == nil {
			res.Academic, err = s.academicForCode(ctx, id)
		}
	case vectorop.DomainHistory:
		if res.Code, err = s.codeForHistory(ctx, id); err == nil {
			res.Academic, err = linked(ctx, s.r, []string{id}, "out", vectorop.DomainAcademic, decisionEdges)
		}
	case vectorop.DomainAcademic:
		res.Code, err = linked(ctx, s.r, []string{id}, "", vectorop.DomainCode, nil)
	}
	return err
}
