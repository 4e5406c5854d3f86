package graph

import (
	"cmp"
	"context"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pi-actors/pi-actors/knowledge/api/graphop"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/store"
)

// Context runs the context operation: every path is matched against every
// atom pattern of the project (all matches, no first-match-wins); matched
// atoms are grouped under their molecules (molecules by name, atoms by
// name), atoms without one are orphanAtoms, paths no atom covers are
// unmatchedPaths (in request order). Paths are relative to the project
// root; an absolute path under the root is made relative, "./" is dropped.
// With withLog, each atom carries its newest logN changelog entries.
func (s *Store) Context(ctx context.Context, c store.Caller, projectID string, paths []string, withLog bool, logN int) (*graphop.Context, error) {
	pid, err := resolveProject(ctx, s.r, projectID, c.Cwd)
	if err != nil {
		return nil, err
	}
	ix, err := s.index(ctx, pid)
	if err != nil {
		return nil, err
	}
	root, err := projectRoot(ctx, s.r, pid)
	if err != nil {
		return nil, err
	}
	res := &graphop.Context{Molecules: []graphop.ContextMolecule{}, OrphanAtoms: []graphop.ContextAtom{}, UnmatchedPaths: []string{}}
	matched := map[int32][]string{}
	seen := map[string]bool{}
	hits := map[int32]bool{}
	for _, p := range paths {
		if seen[p] {
			continue
		}
		seen[p] = true
		clear(hits)
		if norm, ok := normalizePath(p, root); ok {
			ix.match(norm, func(a int32) { hits[a] = true })
		}
		if len(hits) == 0 {
			res.UnmatchedPaths = append(res.UnmatchedPaths, p)
		}
		for a := range hits {
			matched[a] = append(matched[a], p)
		}
	}
	if len(matched) == 0 {
		return res, nil
	}
	ids := make([]string, 0, len(matched))
	byID := map[string][]string{}
	for a, ps := range matched {
		ids = append(ids, ix.atoms[a])
		byID[ix.atoms[a]] = ps
	}
	slices.Sort(ids)
	if err := s.assemble(ctx, res, ids, byID, withLog, logN); err != nil {
		return nil, err
	}
	return res, nil
}

// normalizePath makes p relative to the project root and clean; ok is
// false for a path outside the root.
func normalizePath(p, root string) (string, bool) {
	if filepath.IsAbs(p) {
		if root == "" {
			return "", false
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return "", false
		}
		p = filepath.ToSlash(rel)
	}
	p = path.Clean(p)
	if p == "." || p == ".." || strings.HasPrefix(p, "../") || strings.HasPrefix(p, "/") {
		return "", false
	}
	return p, true
}

// assemble loads the matched atoms, their molecules, related atom names
// and changelogs, and fills res in the spec's order.
func (s *Store) assemble(ctx context.Context, res *graphop.Context, ids []string, matched map[string][]string, withLog bool, logN int) error {
	found, err := byIDs(ctx, s.r, atoms, ids)
	if err != nil {
		return err
	}
	var molIDs, relIDs []string
	for _, a := range found {
		if a.MoleculeID != nil {
			molIDs = append(molIDs, *a.MoleculeID)
		}
		for _, r := range a.RelatedAtoms {
			relIDs = append(relIDs, r.AtomID)
		}
	}
	names, err := atomNames(ctx, s.r, relIDs)
	if err != nil {
		return err
	}
	mols, err := byIDs(ctx, s.r, molecules, molIDs)
	if err != nil {
		return err
	}
	var logs map[string][]graphop.ChangelogEntry
	if withLog {
		if logs, err = changelogFor(ctx, s.r, graphop.EntityAtom, ids, logN); err != nil {
			return err
		}
	}
	groups := map[string]*graphop.ContextMolecule{}
	for _, id := range ids {
		a, ok := found[id]
		if !ok {
			continue // deleted since the index was built
		}
		ca := graphop.ContextAtom{ID: a.ID, Name: a.Name, Knowledge: a.Knowledge, MatchedPaths: matched[id],
			RelatedAtoms: a.RelatedAtoms, Store: s.db.Layer()}
		for i := range ca.RelatedAtoms {
			ca.RelatedAtoms[i].Name = names[ca.RelatedAtoms[i].AtomID]
		}
		if withLog {
			ca.Changelog = op.NonNil(logs[id])
		}
		m, ok := mols[deref(a.MoleculeID)]
		if a.MoleculeID == nil || !ok {
			res.OrphanAtoms = append(res.OrphanAtoms, ca)
			continue
		}
		g := groups[m.ID]
		if g == nil {
			g = &graphop.ContextMolecule{ID: m.ID, Name: m.Name, Knowledge: m.Knowledge, Atoms: []graphop.ContextAtom{}, Store: s.db.Layer()}
			groups[m.ID] = g
		}
		g.Atoms = append(g.Atoms, ca)
	}
	byName := func(a, b graphop.ContextAtom) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.ID, b.ID))
	}
	for _, g := range groups {
		slices.SortFunc(g.Atoms, byName)
		res.Molecules = append(res.Molecules, *g)
	}
	slices.SortFunc(res.Molecules, func(a, b graphop.ContextMolecule) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.ID, b.ID))
	})
	slices.SortFunc(res.OrphanAtoms, byName)
	return nil
}

func atomNames(ctx context.Context, q store.Querier, ids []string) (map[string]string, error) {
	out := map[string]string{}
	err := store.InChunks(ids, func(in string, args []any) error {
		rows, err := q.QueryContext(ctx, "SELECT id, name FROM graph_atoms WHERE id IN "+in, args...)
		if err != nil {
			return fmt.Errorf("read atom names: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var id, name string
			if err := rows.Scan(&id, &name); err != nil {
				return fmt.Errorf("read atom names: %w", err)
			}
			out[id] = name
		}
		return rows.Err()
	})
	return out, err
}
