package vector

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/viterin/vek/vek32"
	"golang.org/x/text/unicode/norm"

	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/api/vectorop"
	"github.com/pi-actors/pi-actors/knowledge/embed"
	"github.com/pi-actors/pi-actors/knowledge/filter"
)

// minSimilarity drops candidates that share next to nothing with the
// query (cosine below it): a search never pads its hits with noise. A
// hit by name (byName) is kept whatever its similarity.
const minSimilarity = 0.1

// nameLookupMax bounds each lookup by name (byName).
const nameLookupMax = 20

// namePhrase is what a node's name must hold, case-insensitively, to be
// a hit by name: the query with its spaces collapsed, in lower case.
func namePhrase(query string) string {
	return strings.Join(strings.Fields(strings.ToLower(query)), " ")
}

// nameMatches reports whether name holds phrase (case-insensitive;
// runs of spaces count as one). Words of the query scattered over a
// name do not: "raft election" is not a name lookup of "Raft leader
// election".
func nameMatches(name, phrase string) bool {
	return phrase != "" && strings.Contains(namePhrase(name), phrase)
}

// nameExact reports whether name is phrase (case-insensitive), or its
// member name is: the part after the first '.' of a name whose first
// part is an identifier (a method's Recv.name; not a file's path.ext).
func nameExact(name, phrase string) bool {
	n := namePhrase(name)
	if n == phrase {
		return phrase != ""
	}
	i := strings.IndexByte(n, '.')
	return i > 0 && !strings.ContainsAny(n[:i], "/ ") && n[i+1:] == phrase
}

// byName finds, through indexes, the nodes of domains (and of type typ,
// when set) asked for by name, which vector similarity can miss (a run's
// id among 40 lines of its output, a method among thousands): runs whose
// id is a word of the query as given or in lower case (vg_nodes_run),
// nodes whose name starts with the query (vg_nodes_name) and nodes whose
// member name does (vg_nodes_member: Pool.fill for fill), at most
// nameLookupMax per lookup, as candidates with their cosine similarity
// to q (0 without a vector of this embedder). The caller keeps those
// whose name holds the query (nameMatches).
func (s *Store) byName(ctx context.Context, g *mirror, query string, domains []string, typ string, q []float32) ([]cand, error) {
	const cols = `SELECT n.seq, n.domain, n.type, v.vec FROM vg_nodes n
		LEFT JOIN vg_vectors v ON v.seq = n.seq AND v.embedder = ? WHERE `
	var out []cand
	read := func(where string, args ...any) error {
		rows, err := s.r.QueryContext(ctx, cols+where+` LIMIT ?`, append(append([]any{g.emb.ID()}, args...), nameLookupMax)...)
		if err != nil {
			return fmt.Errorf("look up names: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var seq int64
			var d, t string
			var vec []byte
			if err := rows.Scan(&seq, &d, &t, &vec); err != nil {
				return fmt.Errorf("look up names: %w", err)
			}
			if !slices.Contains(domains, d) || (typ != "" && t != typ) {
				continue
			}
			c := cand{seq: uint64(seq)}
			if v := decodeVec(vec); len(v) == len(q) && len(q) > 0 {
				c.sim = vek32.Dot(q, v)
			}
			out = append(out, c)
		}
		return rows.Err()
	}
	words := strings.Fields(query)
	for _, w := range words[:min(len(words), 5)] {
		ids := []string{w}
		if l := strings.ToLower(w); l != w {
			ids = append(ids, l) // run ids are mostly lower case
		}
		for _, id := range ids {
			if err := read(`n.run_id = ? AND n.run_id != ''`, id); err != nil {
				return nil, err
			}
		}
	}
	lo := namePhrase(query)
	if lo == "" {
		return out, nil
	}
	const member = `lower(substr(n.name, instr(n.name, '.') + 1))`
	for _, d := range domains {
		if err := read(`n.domain = ? AND lower(n.name) >= ? AND lower(n.name) < ?`, d, lo, lo+"\U0010FFFF"); err != nil {
			return nil, err
		}
		if err := read(`n.domain = ? AND instr(n.name, '.') > 0 AND `+member+` >= ? AND `+member+` < ?`, d, lo, lo+"\U0010FFFF"); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// maxWordsQuery bounds the words of a query looked up in the node word
// index: a longer query is a sentence, left to similarity.
const maxWordsQuery = 8

// wordsMatch is the FTS5 query of a search's words (letters and digits),
// every one required as a whole token; "" for a query with none or with
// more than maxWordsQuery.
func wordsMatch(query string) string {
	words := strings.FieldsFunc(query, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if len(words) == 0 || len(words) > maxWordsQuery {
		return ""
	}
	for i, w := range words {
		words[i] = `"` + w + `"`
	}
	return strings.Join(words, " ")
}

// byWords finds, through the node word index (vg_nodes_fts), the live
// nodes of domains (and of type typ, when set) whose name or content
// holds every word of the query, best first, at most k, as candidates
// with their cosine similarity to q: a rare word in a long text leaves
// its vector far from the query's, and such a node is what the query
// asks for. The caller keeps them whatever their similarity.
func (s *Store) byWords(ctx context.Context, g *mirror, query string, domains []string, typ string, q []float32, k int) ([]cand, error) {
	match := wordsMatch(query)
	if match == "" {
		return nil, nil
	}
	where, args := `vg_nodes_fts MATCH ? AND n.superseded_by IS NULL AND n.domain IN (?`+strings.Repeat(", ?", len(domains)-1)+`)`, []any{g.emb.ID(), match}
	for _, d := range domains {
		args = append(args, d)
	}
	if typ != "" {
		where, args = where+` AND n.type = ?`, append(args, typ)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT n.seq, v.vec FROM vg_nodes_fts f JOIN vg_nodes n ON n.seq = f.rowid
		LEFT JOIN vg_vectors v ON v.seq = n.seq AND v.embedder = ? WHERE `+where+` ORDER BY f.rank LIMIT ?`, append(args, k)...)
	if err != nil {
		if strings.Contains(err.Error(), "fts5") {
			return nil, nil // words FTS5 will not take as terms: left to similarity
		}
		return nil, fmt.Errorf("look up words: %w", err)
	}
	defer rows.Close()
	var out []cand
	for rows.Next() {
		var seq int64
		var vec []byte
		if err := rows.Scan(&seq, &vec); err != nil {
			return nil, fmt.Errorf("look up words: %w", err)
		}
		c := cand{seq: uint64(seq), words: true}
		if v := decodeVec(vec); len(v) == len(q) && len(q) > 0 {
			c.sim = vek32.Dot(q, v)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// candidates is how many nearest neighbours a domain search asks the
// index for to return k hits after rescoring.
func candidates(k int) int { return min(max(3*k, 30), 300) }

// embedQuery makes the query's vector (unit length).
func (g *mirror) embedQuery(ctx context.Context, query string) ([]float32, error) {
	if l, ok := g.emb.(*embed.Local); ok {
		return l.Vector(query), nil
	}
	vs, err := g.emb.Embed(ctx, []string{query})
	if err != nil {
		return nil, fmt.Errorf("embed query with %s: %w", g.emb.ID(), err)
	}
	return unit(vs[0]), nil
}

// ranked searches each domain: its topic filter first (a domain that
// cannot hold any of the query's topics answers no_matches without
// touching the index or SQLite), then the index for kc candidates, then
// their rows, scored. Each domain's hits are sorted by score; a domain
// without hits has status no_matches.
func (s *Store) ranked(ctx context.Context, query string, domains []string, typ string, kc int) (map[string][]scored, map[string]string, *mirror, error) {
	// Composed (NFC), as text mostly is: a query typed decomposed (é as
	// e and a combining accent, as macOS file names are) matched nothing.
	query = norm.NFC.String(query)
	g, err := s.load(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	keys := filter.Tokens(query)
	status := map[string]string{}
	var live []string
	for _, d := range domains {
		status[d] = vectorop.StatusNoMatches
		if g.filters.MayMatchKeys(d, keys) {
			live = append(live, d)
		}
	}
	per := map[string][]scored{}
	// The filter knows whole tokens: a name's prefix (Retr), a word
	// without its accents (cafe) or a member name it never saw rule out
	// every domain, yet the name and word indexes find them. They are
	// asked (cheap lookups; the embedder, maybe a network call, only when
	// they found something).
	lookups := func(in []string, q []float32) ([]cand, error) {
		named, err := s.byName(ctx, g, query, in, typ, q)
		if err != nil {
			return nil, err
		}
		worded, err := s.byWords(ctx, g, query, in, typ, q, kc)
		return append(named, worded...), err
	}
	looked := live
	if len(live) == 0 {
		looked = domains
		found, err := lookups(domains, nil)
		if err != nil {
			return nil, nil, nil, err
		}
		if len(found) == 0 {
			return per, status, g, nil
		}
	}
	q, err := g.embedQuery(ctx, query)
	if err != nil {
		return nil, nil, nil, err
	}
	var code uint8
	if typ != "" {
		code = typeCodes[typ] + 1
	}
	idx := g.indexes()
	var cands []cand
	for _, d := range live {
		g.searches.Add(1)
		cands = append(cands, idx[d].search(q, kc, code)...)
	}
	phrase := namePhrase(query)
	found, err := lookups(looked, q)
	if err != nil {
		return nil, nil, nil, err
	}
	hs, err := s.hits(ctx, g, append(cands, found...), time.Now())
	if err != nil {
		return nil, nil, nil, err
	}
	for _, h := range hs {
		h.byName = (typ == "" || h.Type == typ) && slices.Contains(looked, h.Domain) && nameMatches(h.Name, phrase)
		h.exact = h.byName && nameExact(h.Name, phrase)
		if h.words {
			h.Score = round3(math.Min(1, h.Score+bonusWords))
		}
		if h.byName || h.words || h.Similarity >= minSimilarity {
			per[h.Domain] = append(per[h.Domain], h)
		}
	}
	for d, l := range per {
		sortScored(l)
		status[d] = vectorop.StatusOK
	}
	return per, status, g, nil
}

// sortScored orders hits whose name holds the query first (a
// run id, a file path, a decision's name: asked for by name) — those
// named exactly so (or whose member name is: a method) before those
// whose name only holds it — then by score.
func sortScored(l []scored) {
	slices.SortStableFunc(l, func(a, b scored) int {
		if a.exact != b.exact {
			if a.exact {
				return -1
			}
			return 1
		}
		if a.byName != b.byName {
			if a.byName {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Similarity, a.Similarity); c != 0 {
			return c
		}
		return cmp.Compare(a.seq, b.seq)
	})
}

func hitsOf(l []scored) []vectorop.Hit {
	out := make([]vectorop.Hit, len(l))
	for i := range l {
		out[i] = l[i].Hit
	}
	return out
}

// merged is every domain's hits in one list, by score.
func merged(per map[string][]scored) []scored {
	var all []scored
	for _, d := range vectorop.AllDomains {
		all = append(all, per[d]...)
	}
	sortScored(all)
	return all
}

func domainsOr(l op.StringList) []string {
	if len(l) == 0 {
		return vectorop.AllDomains
	}
	var out []string
	for _, d := range vectorop.AllDomains {
		if slices.Contains(l, d) {
			out = append(out, d)
		}
	}
	return out
}

// Search runs search. req must have passed Validate.
func (s *Store) Search(ctx context.Context, req *vectorop.Search) (*vectorop.SearchResult, error) {
	domains := vectorop.AllDomains
	if req.Domain != "" {
		domains = []string{req.Domain}
	}
	limit := op.LimitOr(req.Limit, vectorop.DefaultSearchLimit)
	per, _, g, err := s.ranked(ctx, req.Query, domains, req.Type, candidates(limit))
	if err != nil {
		return nil, err
	}
	all := merged(per)
	all = all[:min(limit, len(all))]
	if err := s.enrich(ctx, all, req.Query); err != nil {
		return nil, err
	}
	res := &vectorop.SearchResult{Query: req.Query, Status: vectorop.StatusOK, Domain: req.Domain, Hits: hitsOf(all), Store: s.db.Layer()}
	if req.Domain != "" {
		res.AlsoExistsIn = g.filters.AlsoExistsIn(req.Query, req.Domain)
	}
	if len(all) == 0 {
		res.Status = vectorop.StatusNoMatches
		res.Hint = noMatchHint(domains, res.AlsoExistsIn, req.Type)
	}
	return res, nil
}

// noMatchHint says where nothing matched and what to try: another domain
// that holds the query's topics, search_all, or — with a type filter —
// the same search without it (the filter, not the words, may be what
// found nothing).
func noMatchHint(searched, also []string, typ string) string {
	if typ != "" {
		return "nothing of type " + typ + " in " + strings.Join(searched, ", ") + " matches; the same search without type= looks at every type"
	}
	h := "nothing in " + strings.Join(searched, ", ") + " matches"
	if len(also) > 0 {
		h += "; its topics may exist in " + strings.Join(also, ", ") + " (search domain=" + also[0] + ")"
	} else if len(searched) < len(vectorop.AllDomains) {
		h += "; try search_all"
	}
	return h
}

// SearchAll runs search_all. req must have passed Validate.
func (s *Store) SearchAll(ctx context.Context, req *vectorop.SearchAll) (*vectorop.SearchAllResult, error) {
	domains := domainsOr(req.Domains)
	limit := op.LimitOr(req.LimitPerDomain, vectorop.DefaultLimitPerDomain)
	per, status, _, err := s.ranked(ctx, req.Query, domains, "", candidates(limit))
	if err != nil {
		return nil, err
	}
	var top []scored
	for _, d := range domains {
		per[d] = per[d][:min(limit, len(per[d]))]
		top = append(top, per[d]...)
	}
	if err := s.enrich(ctx, top, req.Query); err != nil {
		return nil, err
	}
	res := &vectorop.SearchAllResult{Query: req.Query, Results: []vectorop.DomainResult{}, Store: s.db.Layer()}
	i := 0
	for _, d := range domains {
		n := len(per[d])
		res.Results = append(res.Results, vectorop.DomainResult{Domain: d, Status: status[d], Hits: hitsOf(top[i : i+n])})
		i += n
	}
	return res, nil
}
