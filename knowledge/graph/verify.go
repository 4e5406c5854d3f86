package graph

import (
	"context"
	"fmt"

	"github.com/pi-actors/pi-actors/knowledge/api/graphop"
	"github.com/pi-actors/pi-actors/knowledge/store"
)

// live is an entity row as Verify compares it with its history.
type live struct {
	kind    string
	version int
	state   map[string]any
}

// Verify recomputes every atom's and molecule's hash chain from its
// deltas and compares the result with the live rows. A break is a version
// gap, a parent hash that is not the previous hash, a hash that does not
// match its recomputed state, an old value that is not the previous
// state's, a live row that differs from (or outlives, or lacks) its
// history.
func (s *Store) Verify(ctx context.Context) (*graphop.VerifyReport, error) {
	rep := &graphop.VerifyReport{Store: s.db.Layer(), Path: s.db.Path(), Breaks: []graphop.Break{}}
	rows, err := s.liveRows(ctx)
	if err != nil {
		return nil, err
	}
	hist, err := s.r.QueryContext(ctx, "SELECT "+deltaCols+" FROM graph_history ORDER BY entity_id, version")
	if err != nil {
		return nil, fmt.Errorf("verify %s: %w", s.db.Path(), err)
	}
	defer hist.Close()
	var chain []graphop.Delta
	flush := func() {
		if len(chain) > 0 {
			rep.Entities++
			rep.Breaks = append(rep.Breaks, verifyChain(chain, rows)...)
			delete(rows, chain[0].EntityID)
		}
		chain = chain[:0]
	}
	for hist.Next() {
		d, err := scanDelta(hist)
		if err != nil {
			rep.Breaks = append(rep.Breaks, graphop.Break{EntityID: d.EntityID, Version: d.Version, Reason: err.Error()})
			continue
		}
		rep.Deltas++
		if len(chain) > 0 && chain[0].EntityID != d.EntityID {
			flush()
		}
		chain = append(chain, d)
	}
	if err := hist.Err(); err != nil {
		return nil, fmt.Errorf("verify %s: %w", s.db.Path(), err)
	}
	flush()
	for _, id := range sortedKeys(rows) {
		l := rows[id]
		rep.Breaks = append(rep.Breaks, graphop.Break{EntityType: l.kind, EntityID: id, Version: l.version, Reason: "live row has no history"})
	}
	rep.OK = len(rep.Breaks) == 0
	return rep, nil
}

func (s *Store) liveRows(ctx context.Context) (map[string]live, error) {
	out := map[string]live{}
	if err := collectLive(ctx, s, atoms, out); err != nil {
		return nil, err
	}
	if err := collectLive(ctx, s, molecules, out); err != nil {
		return nil, err
	}
	return out, nil
}

// collectLive adds every entity of kind k to out.
func collectLive[T any](ctx context.Context, s *Store, k *kind[T], out map[string]live) error {
	items, err := queryAll(ctx, s.r, k, "SELECT "+k.cols+" FROM "+k.table)
	if err != nil {
		return fmt.Errorf("verify %s: %w", s.db.Path(), err)
	}
	for i := range items {
		f := k.fields(&items[i])
		out[*f.id] = live{k.name, *f.version, stateOf(&items[i])}
	}
	return nil
}

// verifyChain checks one entity's deltas (in version order) and its live
// row, if any.
func verifyChain(chain []graphop.Delta, rows map[string]live) []graphop.Break {
	var breaks []graphop.Break
	add := func(d graphop.Delta, format string, args ...any) {
		breaks = append(breaks, graphop.Break{EntityType: d.EntityType, EntityID: d.EntityID, Version: d.Version, Reason: fmt.Sprintf(format, args...)})
	}
	state := map[string]any{}
	prev := ""
	for i, d := range chain {
		switch {
		case d.Version != i+1:
			add(d, "version %d where %d was expected (a delta is missing)", d.Version, i+1)
		case d.ParentHash != prev:
			add(d, "parent hash %.12s is not the previous hash %.12s", d.ParentHash, prev)
		case (i == 0) != (d.Op == "create"):
			add(d, "op %s at position %d", d.Op, i+1)
		case d.Op == "delete" && i != len(chain)-1:
			add(d, "deltas follow the tombstone")
		}
		next := map[string]any{}
		for k, v := range state {
			next[k] = v
		}
		for f, ch := range d.Changes {
			if store.Canonical(ch[0]) != store.Canonical(state[f]) {
				add(d, "old value of %s does not match version %d", f, d.Version-1)
			}
			next[f] = ch[1]
		}
		content := next
		if d.Op == "delete" {
			content = tombstone(d.CreatedAt, d.TaskID)
		}
		if h := chainHash(content, d.ParentHash); h != d.Hash {
			add(d, "hash %.12s does not match the recomputed %.12s (the delta was altered)", d.Hash, h)
		}
		state, prev = next, d.Hash
	}
	last := chain[len(chain)-1]
	l, ok := rows[last.EntityID]
	switch {
	case last.Op == "delete" && ok:
		add(last, "live row exists after its tombstone")
	case last.Op != "delete" && !ok:
		add(last, "live row is missing without a tombstone")
	case ok && l.version != last.Version:
		add(last, "live row is at version %d, history at %d", l.version, last.Version)
	case ok && store.Canonical(l.state) != store.Canonical(state):
		add(last, "live row differs from its history (changed outside the store)")
	}
	return breaks
}
