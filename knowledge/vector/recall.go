package vector

import (
	"context"

	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/api/vectorop"
)

// Recall runs recall over stores (project first): it drops a later
// store's hit that duplicates an earlier one (same natural key, or same
// domain, name and content hash), merges by score and tags every hit with
// its store. r must have passed Validate.
func Recall(ctx context.Context, ss []*Store, r *vectorop.Recall) (*vectorop.RecallResult, error) {
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
