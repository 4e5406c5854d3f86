package vector

import (
	"context"
	"slices"

	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/api/vectorop"
)

// goodSimilarity is the cosine at which smart_search counts a hit as a
// good answer (with the local embedder, a short text that shares most of
// the query's words scores 0.4-0.7; unrelated texts stay below 0.1).
const goodSimilarity = 0.35

// smartRounds are the per-domain candidate counts of smart_search's
// rounds: it widens until confident or out of budget.
var smartRounds = []int{6, 12, 24, 48, 96, 192}

// hitTokens estimates the tokens a hit takes in an answer (about four
// characters a token, plus the fixed fields).
func hitTokens(h *scored) int {
	return (len(h.Name)+len(h.Path)+len(h.Snippet)+len(h.Warning))/4 + 16
}

// confident reports whether the hits answer the query well enough for
// the thoroughness: quick wants one good hit, moderate three; thorough is
// never satisfied early (it fills the budget).
func confident(hs []scored, thoroughness string) bool {
	good := 0
	for i := range hs {
		if hs[i].Similarity >= goodSimilarity {
			good++
		}
	}
	switch thoroughness {
	case "quick":
		return good >= 1
	case "thorough":
		return false
	}
	return good >= 3
}

// SmartSearch runs smart_search: rounds of widening searches over the
// domains; each round ranks all candidates and keeps hits by score while
// they fit the token budget. It stops when confident, when the budget is
// full, or when a wider round finds nothing new. req must have passed
// Validate.
func (s *Store) SmartSearch(ctx context.Context, req *vectorop.SmartSearch) (*vectorop.SmartSearchResult, error) {
	budget := op.LimitOr(req.TokenBudget, vectorop.DefaultTokenBudget)
	th := req.Thoroughness
	if th == "" {
		th = "moderate"
	}
	domains := domainsOr(req.Domains)
	res := &vectorop.SmartSearchResult{Query: req.Query, Status: vectorop.StatusOK, TokenBudget: budget, Store: s.db.Layer()}
	var sel []scored
	prev := -1
	var g *mirror
	for i, kc := range smartRounds {
		res.Rounds = i + 1
		per, _, gg, err := s.ranked(ctx, req.Query, domains, "", kc)
		if err != nil {
			return nil, err
		}
		g = gg
		all := merged(per)
		sel, res.TokensUsed = sel[:0], 0
		full := false
		for j := range all {
			t := hitTokens(&all[j])
			if res.TokensUsed+t > budget {
				full = true
				break
			}
			sel = append(sel, all[j])
			res.TokensUsed += t
		}
		res.Confident = confident(sel, th)
		// Candidates come nearest first: if none of the first kc clears the
		// similarity floor, wider rounds find none either.
		if res.Confident || full || len(all) <= prev || len(all) == 0 {
			break
		}
		prev = len(all)
	}
	if err := s.enrich(ctx, sel, req.Query); err != nil {
		return nil, err
	}
	res.Hits = hitsOf(sel)
	for _, d := range vectorop.AllDomains {
		if !slices.Contains(domains, d) && g.filters.MayMatch(d, req.Query) {
			res.AlsoExistsIn = append(res.AlsoExistsIn, d)
		}
	}
	if len(sel) == 0 {
		res.Status = vectorop.StatusNoMatches
		res.Hint = noMatchHint(domains, res.AlsoExistsIn, "")
	}
	return res, nil
}
