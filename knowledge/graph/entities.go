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

// kind describes one entity table.
type kind struct {
	name  string // "atom" or "molecule"
	table string
	fts   string
}

var (
	atomKind     = kind{graphop.EntityAtom, "graph_atoms", "graph_atoms_fts"}
	moleculeKind = kind{graphop.EntityMolecule, "graph_molecules", "graph_molecules_fts"}
)

func kindOf(entityType string) kind {
	if entityType == graphop.EntityMolecule {
		return moleculeKind
	}
	return atomKind
}

// columns maps state fields to table columns.
var columns = map[string]string{
	"projectId": "project_id", "moleculeId": "molecule_id", "name": "name", "paths": "paths",
	"knowledge": "knowledge", "relatedAtoms": "related_atoms", "relatedMolecules": "related_molecules",
	"createdByTaskId": "created_by_task_id", "lastTaskId": "last_task_id",
	"createdAt": "created_at", "updatedAt": "updated_at",
}

const (
	atomCols     = "id, project_id, molecule_id, name, paths, knowledge, related_atoms, created_by_task_id, last_task_id, version, created_at, updated_at"
	moleculeCols = "id, project_id, name, knowledge, related_molecules, created_by_task_id, last_task_id, version, created_at, updated_at"
)

type scanner interface{ Scan(dest ...any) error }

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

// loadAtom reads one atom; NOT_FOUND (naming field) when there is none.
func loadAtom(ctx context.Context, q store.Querier, field, id string) (*graphop.Atom, error) {
	a, err := scanAtom(q.QueryRowContext(ctx, "SELECT "+atomCols+" FROM graph_atoms WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, op.NotFound(field, "atom", id)
	}
	if err != nil {
		return nil, fmt.Errorf("read atom %s: %w", id, err)
	}
	return a, nil
}

// loadMolecule reads one molecule; NOT_FOUND (naming field) when there is none.
func loadMolecule(ctx context.Context, q store.Querier, field, id string) (*graphop.Molecule, error) {
	m, err := scanMolecule(q.QueryRowContext(ctx, "SELECT "+moleculeCols+" FROM graph_molecules WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, op.NotFound(field, "molecule", id)
	}
	if err != nil {
		return nil, fmt.Errorf("read molecule %s: %w", id, err)
	}
	return m, nil
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

func insertRow(ctx context.Context, tx *store.Tx, k kind, id string, version int, state map[string]any) error {
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
func updateRow(ctx context.Context, tx *store.Tx, k kind, id string, from int, changes map[string][2]any) error {
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
