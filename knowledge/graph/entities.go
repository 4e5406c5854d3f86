package graph

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pi-actors/pi-actors/knowledge/api/graphop"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/store"
)

// entityTable describes one entity table.
type entityTable struct {
	name  string // "atom" or "molecule"
	table string
	fts   string
}

func tableOf(entityType string) entityTable {
	if entityType == graphop.EntityMolecule {
		return molecules.entityTable
	}
	return atoms.entityTable
}

// fields points at the fields every entity has.
type fields struct {
	id, projectID, name, knowledge, createdBy, lastTask, createdAt, updatedAt, store *string
	version                                                                          *int
	changelog                                                                        *[]graphop.ChangelogEntry
}

// kind is an entity type T (graphop.Atom or graphop.Molecule): its table
// and columns, how a row scans into T, where T's common fields are, and
// what only it has.
type kind[T any] struct {
	entityTable
	cols   string
	scan   func(store.Scanner) (*T, error)
	fields func(*T) fields
	// zero is a new entity with its arrays empty (not null).
	zero func() *T
	// set applies a create's or update's own fields of the kind (those
	// that are not name or knowledge) to e of project pid.
	set func(ctx context.Context, tx *store.Tx, req *graphop.ManageGraph, pid string, e *T) error
	// more fills what get adds (a molecule's atoms); nil when nothing.
	more func(ctx context.Context, q store.Querier, e *T) error
	// members deletes or orphans what depends on the entity being
	// deleted (a molecule's atoms); nil when nothing.
	members func(ctx context.Context, s *Store, tx *store.Tx, req *graphop.ManageGraph, id, task, now string, res *graphop.Deleted) error
	// related is the column of the kind's related list; unrelate drops
	// the entries naming a gone id from e's, reporting whether any was.
	related  string
	unrelate func(e *T, gone map[string]bool) bool
}

var (
	atomTable     = entityTable{graphop.EntityAtom, "graph_atoms", "graph_atoms_fts"}
	moleculeTable = entityTable{graphop.EntityMolecule, "graph_molecules", "graph_molecules_fts"}
)

var atoms = &kind[graphop.Atom]{
	entityTable: atomTable,
	cols:        "id, project_id, molecule_id, name, paths, knowledge, related_atoms, created_by_task_id, last_task_id, version, created_at, updated_at",
	scan:        scanAtom,
	fields: func(a *graphop.Atom) fields {
		return fields{&a.ID, &a.ProjectID, &a.Name, &a.Knowledge, &a.CreatedByTaskID, &a.LastTaskID, &a.CreatedAt, &a.UpdatedAt, &a.Store,
			&a.Version, &a.Changelog}
	},
	zero:    func() *graphop.Atom { return &graphop.Atom{Paths: []string{}, RelatedAtoms: []graphop.RelatedAtom{}} },
	set:     setAtom,
	related: "related_atoms",
	unrelate: func(a *graphop.Atom, gone map[string]bool) (dropped bool) {
		a.RelatedAtoms, dropped = dropGone(a.RelatedAtoms, gone, func(r graphop.RelatedAtom) string { return r.AtomID })
		return dropped
	},
}

var molecules = &kind[graphop.Molecule]{
	entityTable: moleculeTable,
	cols:        "id, project_id, name, knowledge, related_molecules, created_by_task_id, last_task_id, version, created_at, updated_at",
	scan:        scanMolecule,
	fields: func(m *graphop.Molecule) fields {
		return fields{&m.ID, &m.ProjectID, &m.Name, &m.Knowledge, &m.CreatedByTaskID, &m.LastTaskID, &m.CreatedAt, &m.UpdatedAt, &m.Store,
			&m.Version, &m.Changelog}
	},
	zero: func() *graphop.Molecule { return &graphop.Molecule{RelatedMolecules: []graphop.RelatedMolecule{}} },
	set: func(ctx context.Context, tx *store.Tx, req *graphop.ManageGraph, pid string, m *graphop.Molecule) error {
		if req.RelatedMolecules != nil {
			ids := func(r graphop.RelatedMolecule) string { return r.MoleculeID }
			if err := checkRelated(ctx, tx, moleculeTable, "relatedMolecules", m.ID, pid, req.RelatedMolecules, ids); err != nil {
				return err
			}
			m.RelatedMolecules = req.RelatedMolecules
		}
		return nil
	},
	more: func(ctx context.Context, q store.Querier, m *graphop.Molecule) (err error) {
		m.Atoms, err = memberAtoms(ctx, q, m.ID)
		return err
	},
	members: deleteMembers,
	related: "related_molecules",
	unrelate: func(m *graphop.Molecule, gone map[string]bool) (dropped bool) {
		m.RelatedMolecules, dropped = dropGone(m.RelatedMolecules, gone, func(r graphop.RelatedMolecule) string { return r.MoleculeID })
		return dropped
	},
}

// dropGone is list without the entries whose id is gone (a new slice),
// and whether there were any.
func dropGone[R any](list []R, gone map[string]bool, id func(R) string) ([]R, bool) {
	out := slices.DeleteFunc(slices.Clone(list), func(r R) bool { return gone[id(r)] })
	return out, len(out) != len(list)
}

// setAtom applies paths, relatedAtoms and moleculeId (the molecule and
// the related atoms must exist and be in the atom's project).
func setAtom(ctx context.Context, tx *store.Tx, req *graphop.ManageGraph, pid string, a *graphop.Atom) error {
	if req.Paths != nil {
		a.Paths = req.Paths
	}
	if req.RelatedAtoms != nil {
		ids := func(r graphop.RelatedAtom) string { return r.AtomID }
		if err := checkRelated(ctx, tx, atomTable, "relatedAtoms", a.ID, pid, req.RelatedAtoms, ids); err != nil {
			return err
		}
		a.RelatedAtoms = req.RelatedAtoms
	}
	if req.Unassign() {
		a.MoleculeID = nil
	} else if id := deref(req.MoleculeID); id != "" {
		if err := checkMolecule(ctx, tx, id, pid); err != nil {
			return err
		}
		a.MoleculeID = &id
	}
	return nil
}

// columns maps state fields to table columns.
var columns = map[string]string{
	"projectId": "project_id", "moleculeId": "molecule_id", "name": "name", "paths": "paths",
	"knowledge": "knowledge", "relatedAtoms": "related_atoms", "relatedMolecules": "related_molecules",
	"createdByTaskId": "created_by_task_id", "lastTaskId": "last_task_id",
	"createdAt": "created_at", "updatedAt": "updated_at",
}

func scanAtom(sc store.Scanner) (*graphop.Atom, error) {
	var a graphop.Atom
	var mol sql.NullString
	var paths, related string
	if err := sc.Scan(&a.ID, &a.ProjectID, &mol, &a.Name, &paths, &a.Knowledge, &related,
		&a.CreatedByTaskID, &a.LastTaskID, &a.Version, &a.CreatedAt, &a.UpdatedAt); err != nil {
		return nil, err
	}
	if mol.Valid {
		a.MoleculeID = &mol.String
	}
	a.Paths = []string{}
	a.RelatedAtoms = []graphop.RelatedAtom{}
	if err := errors.Join(json.Unmarshal([]byte(paths), &a.Paths), json.Unmarshal([]byte(related), &a.RelatedAtoms)); err != nil {
		return nil, fmt.Errorf("atom %s: stored JSON: %w", a.ID, err)
	}
	return &a, nil
}

func scanMolecule(sc store.Scanner) (*graphop.Molecule, error) {
	var m graphop.Molecule
	var related string
	if err := sc.Scan(&m.ID, &m.ProjectID, &m.Name, &m.Knowledge, &related,
		&m.CreatedByTaskID, &m.LastTaskID, &m.Version, &m.CreatedAt, &m.UpdatedAt); err != nil {
		return nil, err
	}
	m.RelatedMolecules = []graphop.RelatedMolecule{}
	if err := json.Unmarshal([]byte(related), &m.RelatedMolecules); err != nil {
		return nil, fmt.Errorf("molecule %s: stored JSON: %w", m.ID, err)
	}
	return &m, nil
}

// load reads one entity; NOT_FOUND (naming field) when there is none.
func load[T any](ctx context.Context, q store.Querier, k *kind[T], field, id string) (*T, error) {
	e, err := k.scan(q.QueryRowContext(ctx, "SELECT "+k.cols+" FROM "+k.table+" WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, op.NotFound(field, k.name, id)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", k.name, id, err)
	}
	return e, nil
}

// queryAll runs a query selecting k.cols and scans every row.
func queryAll[T any](ctx context.Context, q store.Querier, k *kind[T], query string, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		e, err := k.scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *e)
	}
	return out, rows.Err()
}

// byIDs reads the entities with the given ids (missing ones are left out).
func byIDs[T any](ctx context.Context, q store.Querier, k *kind[T], ids []string) (map[string]*T, error) {
	out := map[string]*T{}
	err := store.InChunks(ids, func(in string, args []any) error {
		items, err := queryAll(ctx, q, k, "SELECT "+k.cols+" FROM "+k.table+" WHERE id IN "+in, args...)
		if err != nil {
			return fmt.Errorf("read %ss: %w", k.name, err)
		}
		for i := range items {
			out[*k.fields(&items[i]).id] = &items[i]
		}
		return nil
	})
	return out, err
}

// memberAtoms lists a molecule's atoms by name.
func memberAtoms(ctx context.Context, q store.Querier, moleculeID string) ([]graphop.Atom, error) {
	out, err := queryAll(ctx, q, atoms, "SELECT "+atoms.cols+" FROM graph_atoms WHERE molecule_id = ? ORDER BY name, id", moleculeID)
	if err != nil {
		return nil, fmt.Errorf("read atoms of molecule %s: %w", moleculeID, err)
	}
	return out, nil
}

// stateOf is an entity's hashed state: its fields as decoded JSON, minus
// id, version and what is not stored in its row (changelog, atoms, store).
func stateOf(v any) map[string]any {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // api types always marshal
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		panic(err)
	}
	for _, k := range []string{"id", "version", "changelog", "atoms", "store"} {
		delete(m, k)
	}
	return m
}

// colValue is a state value as stored: strings as is, null as NULL,
// arrays as compact JSON text.
func colValue(v any) any {
	switch v := v.(type) {
	case nil, string:
		return v
	default:
		return store.Canonical(v)
	}
}

func insertRow(ctx context.Context, tx *store.Tx, k entityTable, id string, version int, state map[string]any) error {
	names := sortedKeys(state)
	cols := []string{"id", "version"}
	args := []any{id, version}
	for _, f := range names {
		cols = append(cols, columns[f])
		args = append(args, colValue(state[f]))
	}
	q := fmt.Sprintf("INSERT INTO %s(%s) VALUES (?%s)", k.table, strings.Join(cols, ", "), strings.Repeat(", ?", len(cols)-1))
	if _, err := tx.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("insert %s %s: %w", k.name, id, err)
	}
	return nil
}

// updateRow writes the changed fields and the new version, only when the
// row is still at version from (the caller checked it in the same
// transaction; this is the belt to those braces).
func updateRow(ctx context.Context, tx *store.Tx, k entityTable, id string, from int, changes map[string][2]any) error {
	var sets []string
	var args []any
	for _, f := range sortedKeys(changes) {
		sets = append(sets, columns[f]+" = ?")
		args = append(args, colValue(changes[f][1]))
	}
	sets = append(sets, "version = ?")
	args = append(args, from+1, id, from)
	q := fmt.Sprintf("UPDATE %s SET %s WHERE id = ? AND version = ?", k.table, strings.Join(sets, ", "))
	res, err := tx.ExecContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("update %s %s: %w", k.name, id, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return op.Conflict(k.name, id, from, from+1)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
