package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// globIndex matches file paths against every atom pattern of one project
// without trying every pattern: patterns hang in a trie under their
// literal leading segments (the segments before the first one with glob
// syntax), so a path only meets the patterns along its own directory
// chain; fully literal patterns are a map lookup. The final test is
// always doublestar's, except that a pattern whose rest is a lone "**"
// matches everything that reaches its node.
type globIndex struct {
	gen   int64
	atoms []string           // atom ids, by index
	exact map[string][]int32 // literal pattern → atoms
	root  *trieNode
}

type trieNode struct {
	kids map[string]*trieNode
	pats []globPat
}

type globPat struct {
	atom    int32
	pattern string
	all     bool // the rest after the literal prefix is "**"
}

func hasMeta(seg string) bool { return strings.ContainsAny(seg, `*?[{\`) }

func newGlobIndex(gen int64) *globIndex {
	return &globIndex{gen: gen, exact: map[string][]int32{}, root: &trieNode{}}
}

func (ix *globIndex) add(atomID string, patterns []string) {
	a := int32(len(ix.atoms))
	ix.atoms = append(ix.atoms, atomID)
	for _, p := range patterns {
		if !hasMeta(p) {
			ix.exact[p] = append(ix.exact[p], a)
			continue
		}
		segs := strings.Split(p, "/")
		n := ix.root
		i := 0
		for ; !hasMeta(segs[i]); i++ {
			if n.kids == nil {
				n.kids = map[string]*trieNode{}
			}
			k := n.kids[segs[i]]
			if k == nil {
				k = &trieNode{}
				n.kids[segs[i]] = k
			}
			n = k
		}
		n.pats = append(n.pats, globPat{atom: a, pattern: p, all: i == len(segs)-1 && segs[i] == "**"})
	}
}

// match calls hit for every atom with a pattern matching path (an atom
// may be reported more than once).
func (ix *globIndex) match(path string, hit func(atom int32)) {
	for _, a := range ix.exact[path] {
		hit(a)
	}
	n := ix.root
	rest := path
	for {
		for _, p := range n.pats {
			if p.all || doublestar.MatchUnvalidated(p.pattern, path) {
				hit(p.atom)
			}
		}
		if rest == "" || n.kids == nil {
			return
		}
		seg, after, _ := strings.Cut(rest, "/")
		if n = n.kids[seg]; n == nil {
			return
		}
		rest = after
	}
}

// index returns the project's match index, rebuilt when any atom's paths
// changed since it was built (graph_meta atoms_gen, bumped by triggers,
// also for writes by other processes).
func (s *Store) index(ctx context.Context, projectID string) (*globIndex, error) {
	var gen int64
	if err := s.r.QueryRowContext(ctx, `SELECT value FROM graph_meta WHERE key = 'atoms_gen'`).Scan(&gen); err != nil {
		return nil, fmt.Errorf("read atoms generation: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ix := s.indexes[projectID]; ix != nil && ix.gen == gen {
		return ix, nil
	}
	rows, err := s.r.QueryContext(ctx, `SELECT id, paths FROM graph_atoms WHERE project_id = ? ORDER BY id`, projectID)
	if err != nil {
		return nil, fmt.Errorf("read atom paths: %w", err)
	}
	defer rows.Close()
	ix := newGlobIndex(gen)
	var pats []string
	for rows.Next() {
		var id, paths string
		if err := rows.Scan(&id, &paths); err != nil {
			return nil, fmt.Errorf("read atom paths: %w", err)
		}
		pats = pats[:0]
		if err := json.Unmarshal([]byte(paths), &pats); err != nil {
			return nil, fmt.Errorf("atom %s: stored paths: %w", id, err)
		}
		ix.add(id, pats)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read atom paths: %w", err)
	}
	s.indexes[projectID] = ix
	return ix, nil
}
