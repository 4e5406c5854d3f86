package graph

import (
	"context"
	"slices"
	"strings"

	"github.com/pi-actors/pi-actors/knowledge/api/graphop"
	"github.com/pi-actors/pi-actors/knowledge/store"
)

// AtomLinker recomputes one atom's links to the code nodes of the same
// store file inside tx (the atom's write transaction): it drops the
// atom's links (unless created: a new atom has none), then, unless target
// is nil (a deleted atom), links every code node whose path lies under
// the root target gives and matches (match gets the path relative to
// root, slash-separated; root "" links nothing). target is called only
// when the store has code nodes at all (atoms written before any ingest
// cost one lookup each). scopes bound the lookup: each is a
// path relative to root, a directory ending in "/" ("" for all of root)
// or a file. Package knowledge sets the vector graph's (vector.LinkAtom).
type AtomLinker func(ctx context.Context, tx *store.Tx, atomID string, created bool, target func() (root string, scopes []string, match func(rel string) bool, err error)) error

// SetAtomLinker makes every create, paths update and delete of an atom
// recompute its links with l (nil: none).
func (s *Store) SetAtomLinker(l AtomLinker) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.linker = l
}

func (s *Store) atomLinker() AtomLinker {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.linker
}

// relinkAtom recomputes a's links (a == nil: the atom id was deleted;
// created: a was just inserted).
func (s *Store) relinkAtom(ctx context.Context, tx *store.Tx, id string, a *graphop.Atom, created bool) error {
	l := s.atomLinker()
	if l == nil {
		return nil
	}
	if a == nil {
		return l(ctx, tx, id, created, nil)
	}
	return l(ctx, tx, id, created, func() (string, []string, func(string) bool, error) {
		root, err := projectRoot(ctx, tx, a.ProjectID)
		if err != nil || root == "" {
			return "", nil, nil, err
		}
		ix := newGlobIndex(0)
		ix.add(id, a.Paths)
		match := func(rel string) bool {
			hit := false
			ix.match(rel, func(int32) { hit = true })
			return hit
		}
		return root, patternScopes(a.Paths), match, nil
	})
}

// patternScopes is where files matching any of patterns can be: a
// literal pattern is its file, a glob the directory of its literal
// leading segments ("" for a glob in its first segment); scopes inside
// another scope are left out.
func patternScopes(patterns []string) []string {
	var out []string
	for _, p := range patterns {
		if !hasMeta(p) {
			out = append(out, p)
			continue
		}
		segs := strings.Split(p, "/")
		i := 0
		for !hasMeta(segs[i]) {
			i++
		}
		dir := strings.Join(segs[:i], "/")
		if dir != "" {
			dir += "/"
		}
		out = append(out, dir)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	kept := out[:0]
	for _, sc := range out {
		// Sorted: the scopes inside a directory scope follow it.
		if n := len(kept); n > 0 && (kept[n-1] == "" || strings.HasSuffix(kept[n-1], "/")) && strings.HasPrefix(sc, kept[n-1]) {
			continue
		}
		kept = append(kept, sc)
	}
	return kept
}
