package vector

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/api/vectorop"
	"github.com/pi-actors/pi-actors/knowledge/store"
)

// Score weights of seed 001's context quality scorer.
const (
	weightSimilarity = 0.35
	weightTrust      = 0.25
	weightFreshness  = 0.25
	bonusVerified    = 0.15
	snippetLen       = 300 // characters of content in a hit
	supersededFresh  = 0.1
	// bonusWords is added to the score of a hit whose name or content
	// holds every word of the query (byWords).
	bonusWords = 0.15
)

// scored is a hit with what ranking and deduplication need.
type scored struct {
	vectorop.Hit
	seq  int64
	key  string
	hash string
	from *Store
	// byName: the node's name holds the query (nameMatches; ranked
	// before the hits by similarity alone).
	byName bool
	// exact: the name, or its member name (a method's), is the query
	// (nameExact; ranked before the other hits by name).
	exact bool
	// words: the node holds every word of the query (byWords; its score
	// has bonusWords, and it is kept whatever its similarity).
	words bool
}

// rowCols are the columns a hit is scored from.
const rowCols = `n.seq, n.id, coalesce(n.key, ''), n.domain, n.type, n.name, n.path, n.line_start, n.line_end,
	substr(n.content, 1, 400), n.content_hash, n.trust, n.verified, n.created_at, n.expires_at, coalesce(n.superseded_by, '')`

// hits reads the nodes of the candidates and scores them (unsorted).
func (s *Store) hits(ctx context.Context, g *mirror, cands []cand, now time.Time) ([]scored, error) {
	if len(cands) == 0 {
		return nil, nil
	}
	sim := make(map[int64]float32, len(cands))
	words := map[int64]bool{}
	args := make([]any, 0, len(cands))
	for _, c := range cands {
		if _, dup := sim[int64(c.seq)]; !dup {
			args = append(args, int64(c.seq))
		}
		sim[int64(c.seq)] = max(sim[int64(c.seq)], c.sim)
		if c.words {
			words[int64(c.seq)] = true
		}
	}
	g.rowReads.Add(1)
	rows, err := s.r.QueryContext(ctx, `SELECT `+rowCols+` FROM vg_nodes n WHERE n.seq IN (?`+strings.Repeat(", ?", len(args)-1)+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("read hits: %w", err)
	}
	defer rows.Close()
	out := make([]scored, 0, len(args))
	for rows.Next() {
		var h scored
		var content, expires string
		err := rows.Scan(&h.seq, &h.ID, &h.key, &h.Domain, &h.Type, &h.Name, &h.Path, &h.LineStart, &h.LineEnd,
			&content, &h.hash, &h.Trust, &h.Verified, &h.CreatedAt, &expires, &h.SupersededBy)
		if err != nil {
			return nil, fmt.Errorf("read hits: %w", err)
		}
		h.Snippet = clipRunes(content, snippetLen)
		h.Store, h.from = s.db.Layer(), s
		rank(&h.Hit, float64(sim[h.seq]), expires, now)
		h.words = words[h.seq]
		out = append(out, h)
	}
	return out, rows.Err()
}

// rank sets a hit's similarity, effective trust, freshness, warning and
// score (seed 001's trust hierarchy, freshness decay and quality score).
func rank(h *vectorop.Hit, sim float64, expires string, now time.Time) {
	h.Similarity = round3(math.Max(0, math.Min(1, sim)))
	created, _ := time.Parse(store.TimeLayout, h.CreatedAt)
	days := now.Sub(created).Hours() / 24
	if h.Domain == vectorop.DomainHistory && h.Verified {
		switch {
		case days < 7:
			h.Trust = min(h.Trust, vectorop.TrustRecent)
		case days < 30:
			h.Trust = min(h.Trust, vectorop.TrustAcademic)
		default:
			h.Trust = min(h.Trust, vectorop.TrustOldHistory)
		}
	}
	fresh := 1.0
	switch h.Domain {
	case vectorop.DomainHistory:
		fresh = math.Max(0.2, 1-days/180*0.8)
		if days > 30 {
			h.Warning = fmt.Sprintf("%d days old: may be outdated", int(days))
		}
	case vectorop.DomainAcademic:
		fresh = math.Max(0.3, 1-days/365*0.7)
		if days > 180 {
			h.Warning = fmt.Sprintf("%d days old: check it still holds", int(days))
		}
	}
	if exp, err := time.Parse(store.TimeLayout, expires); err == nil && now.After(exp) {
		fresh *= 0.5
		h.Warning = "expired: should be refreshed"
	}
	switch h.SupersededBy {
	case "":
	case h.ID: // a node of a deleted file (ingest retires it)
		fresh = supersededFresh
		h.Warning = "deleted: the file no longer exists"
	default:
		fresh = supersededFresh
		h.Warning = "superseded by " + h.SupersededBy + ": newer information exists"
	}
	if h.Warning == "" {
		h.Warning = trustWarning(h.Trust)
	}
	h.Freshness = round3(fresh)
	score := weightSimilarity*h.Similarity + weightTrust*float64(h.Trust)/100 + weightFreshness*fresh
	if h.Verified {
		score += bonusVerified
	}
	h.Score = round3(math.Min(1, score))
}

// trustWarning is seed 001's warning for low-trust content.
func trustWarning(trust int) string {
	switch {
	case trust >= vectorop.TrustAcademic:
		return ""
	case trust >= vectorop.TrustOldHistory:
		return "old history: verify it is still accurate"
	case trust >= vectorop.TrustBlog:
		return "informal source: verify independently"
	}
	return "unverified (model output or inference): may be wrong"
}

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }

// clipRunes shortens s to n characters, marking the cut with "…".
func clipRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// enrich attaches query-focused snippets, provenance, unresolved
// conflicts and linked atoms to the hits (four queries for all of them).
func (s *Store) enrich(ctx context.Context, hs []scored, query string) error {
	if len(hs) == 0 {
		return nil
	}
	if err := s.snippets(ctx, hs, query); err != nil {
		return err
	}
	ids := make([]string, len(hs))
	for i := range hs {
		ids[i] = hs[i].ID
	}
	x, err := extrasOf(ctx, s.r, ids)
	if err != nil {
		return err
	}
	for i := range hs {
		h := &hs[i]
		h.Provenance = op.NonNil(x.prov[h.ID])
		h.Conflicts = x.conflicts[h.ID]
		h.Atoms = x.atoms[h.ID]
	}
	return nil
}

// extras are what a hit or a node carries besides its row: provenance,
// unresolved conflicts and linked atoms, by node id.
type extras struct {
	prov      map[string][]vectorop.Provenance
	conflicts map[string][]vectorop.ConflictRef
	atoms     map[string][]vectorop.AtomRef
}

// extrasOf reads the extras of the nodes ids (three queries for all).
func extrasOf(ctx context.Context, q store.Querier, ids []string) (*extras, error) {
	in, args := store.In(ids)
	prov, err := grouped(ctx, q, "provenance", `SELECT node_id, source, ref, task_id, at, verified FROM vg_provenance
		WHERE node_id IN `+in+` ORDER BY rowid`, args, func(p *vectorop.Provenance) []any {
		return []any{&p.Source, &p.Ref, &p.TaskID, &p.At, &p.Verified}
	})
	if err != nil {
		return nil, err
	}
	conflicts, err := conflictsOf(ctx, q, ids)
	if err != nil {
		return nil, err
	}
	atoms, err := grouped(ctx, q, "linked atoms", `SELECT l.node_id, a.id, a.name FROM vg_atom_links l JOIN graph_atoms a ON a.id = l.atom_id
		WHERE l.node_id IN `+in+` ORDER BY a.name`, args, func(a *vectorop.AtomRef) []any { return []any{&a.ID, &a.Name} })
	if err != nil {
		return nil, err
	}
	return &extras{prov: prov, conflicts: conflicts, atoms: atoms}, nil
}

// grouped runs a query whose rows are a node id and the columns dest
// points into, and collects the values by node id.
func grouped[T any](ctx context.Context, q store.Querier, what, query string, args []any, dest func(*T) []any) (map[string][]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	defer rows.Close()
	out := map[string][]T{}
	for rows.Next() {
		var id string
		var v T
		if err := rows.Scan(append([]any{&id}, dest(&v)...)...); err != nil {
			return nil, fmt.Errorf("read %s: %w", what, err)
		}
		out[id] = append(out[id], v)
	}
	return out, rows.Err()
}
