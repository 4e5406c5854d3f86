package graph

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/pi-actors/pi-actors/knowledge/api/graphop"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/store"
)

// ManageGraph runs manage_graph (create, update, delete of atoms and
// molecules). req must have passed Validate. Results: *graphop.Atom or
// *graphop.Molecule for create and update, *graphop.Deleted for delete.
func (s *Store) ManageGraph(ctx context.Context, c store.Caller, req *graphop.ManageGraph) (any, error) {
	var v any
	var err error
	switch req.Operation {
	case "create":
		if req.EntityType == graphop.EntityAtom {
			v, err = s.createAtom(ctx, c, req)
		} else {
			v, err = s.createMolecule(ctx, c, req)
		}
	case "update":
		if req.EntityType == graphop.EntityAtom {
			v, err = s.updateAtom(ctx, c, req)
		} else {
			v, err = s.updateMolecule(ctx, c, req)
		}
	case "delete":
		if req.EntityType == graphop.EntityAtom {
			v, err = s.deleteAtom(ctx, c, req)
		} else {
			v, err = s.deleteMolecule(ctx, c, req)
		}
	default:
		return nil, op.Invalid("operation", "unknown operation %q", req.Operation)
	}
	if err != nil {
		return nil, err
	}
	return v, nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// checkMolecule is the membership rule: the molecule exists (NOT_FOUND)
// and belongs to the atom's project (INVARIANT_VIOLATION).
func checkMolecule(ctx context.Context, q store.Querier, moleculeID, projectID string) error {
	m, err := loadMolecule(ctx, q, "moleculeId", moleculeID)
	if err != nil {
		return err
	}
	if m.ProjectID != projectID {
		return op.Invariant("moleculeId", "molecule %s belongs to project %s, the atom to project %s: an atom's molecule must be in the same project",
			moleculeID, m.ProjectID, projectID)
	}
	return nil
}

func (s *Store) createAtom(ctx context.Context, c store.Caller, req *graphop.ManageGraph) (*graphop.Atom, error) {
	task, err := s.db.TaskID("createdByTaskId", req.CreatedByTaskID, c)
	if err != nil {
		return nil, err
	}
	v, err := s.db.Write(ctx, func(tx *store.Tx) (any, error) {
		pid, err := resolveProject(ctx, tx, req.ProjectID, c.Cwd)
		if err != nil {
			return nil, err
		}
		var mol *string
		if id := deref(req.MoleculeID); id != "" {
			if err := checkMolecule(ctx, tx, id, pid); err != nil {
				return nil, err
			}
			mol = &id
		}
		now := store.Now()
		a := &graphop.Atom{ID: store.NewID(), ProjectID: pid, MoleculeID: mol, Name: *req.Name, Paths: req.Paths,
			Knowledge: deref(req.Knowledge), RelatedAtoms: op.NonNil(req.RelatedAtoms), CreatedByTaskID: task,
			LastTaskID: task, Version: 1, CreatedAt: now, UpdatedAt: now, Store: s.db.Layer()}
		return a, s.insertEntity(ctx, tx, atomKind, a.ID, stateOf(a), task, now)
	})
	if err != nil {
		return nil, err
	}
	return v.(*graphop.Atom), nil
}

func (s *Store) createMolecule(ctx context.Context, c store.Caller, req *graphop.ManageGraph) (*graphop.Molecule, error) {
	task, err := s.db.TaskID("createdByTaskId", req.CreatedByTaskID, c)
	if err != nil {
		return nil, err
	}
	v, err := s.db.Write(ctx, func(tx *store.Tx) (any, error) {
		pid, err := resolveProject(ctx, tx, req.ProjectID, c.Cwd)
		if err != nil {
			return nil, err
		}
		now := store.Now()
		m := &graphop.Molecule{ID: store.NewID(), ProjectID: pid, Name: *req.Name, Knowledge: deref(req.Knowledge),
			RelatedMolecules: op.NonNil(req.RelatedMolecules), CreatedByTaskID: task, LastTaskID: task,
			Version: 1, CreatedAt: now, UpdatedAt: now, Store: s.db.Layer()}
		return m, s.insertEntity(ctx, tx, moleculeKind, m.ID, stateOf(m), task, now)
	})
	if err != nil {
		return nil, err
	}
	return v.(*graphop.Molecule), nil
}

func (s *Store) insertEntity(ctx context.Context, tx *store.Tx, k kind, id string, state map[string]any, task, now string) error {
	if err := insertRow(ctx, tx, k, id, 1, state); err != nil {
		return err
	}
	return appendDelta(ctx, tx, k, id, 1, "create", nil, state, task, now)
}

// newKnowledge applies knowledgeMode: overwrite replaces, append adds the
// spec's separator line and the text. The result must fit 32 KB.
func newKnowledge(old string, req *graphop.ManageGraph, now, task string) (string, error) {
	k := *req.Knowledge
	if req.KnowledgeMode == "append" {
		k = old + "\n\n---[" + now + " task:" + task + "]---\n" + k
	}
	if len(k) > graphop.MaxKnowledge {
		return "", op.Invalid("knowledge", "knowledge would be %d bytes after appending; at most %d (32 KB): overwrite it with a condensed version (knowledgeMode=overwrite)", len(k), graphop.MaxKnowledge)
	}
	return k, nil
}

func (s *Store) updateAtom(ctx context.Context, c store.Caller, req *graphop.ManageGraph) (*graphop.Atom, error) {
	task, err := s.db.TaskID("lastTaskId", req.LastTaskID, c)
	if err != nil {
		return nil, err
	}
	v, err := s.db.Write(ctx, func(tx *store.Tx) (any, error) {
		cur, err := loadAtom(ctx, tx, "id", req.ID)
		if err != nil {
			return nil, err
		}
		if cur.Version != *req.Version {
			return nil, op.Conflict("atom", cur.ID, *req.Version, cur.Version)
		}
		next, now := *cur, store.Now()
		if req.Name != nil {
			next.Name = *req.Name
		}
		if req.Paths != nil {
			next.Paths = req.Paths
		}
		if req.RelatedAtoms != nil {
			next.RelatedAtoms = req.RelatedAtoms
		}
		if req.Knowledge != nil {
			if next.Knowledge, err = newKnowledge(cur.Knowledge, req, now, task); err != nil {
				return nil, err
			}
		}
		if req.Unassign() {
			next.MoleculeID = nil
		} else if id := deref(req.MoleculeID); id != "" {
			if err := checkMolecule(ctx, tx, id, cur.ProjectID); err != nil {
				return nil, err
			}
			next.MoleculeID = &id
		}
		next.LastTaskID, next.UpdatedAt, next.Version, next.Store = task, now, cur.Version+1, s.db.Layer()
		return &next, s.updateEntity(ctx, tx, atomKind, cur.ID, cur.Version, stateOf(cur), stateOf(&next), task, now)
	})
	if err != nil {
		return nil, err
	}
	return v.(*graphop.Atom), nil
}

func (s *Store) updateMolecule(ctx context.Context, c store.Caller, req *graphop.ManageGraph) (*graphop.Molecule, error) {
	task, err := s.db.TaskID("lastTaskId", req.LastTaskID, c)
	if err != nil {
		return nil, err
	}
	v, err := s.db.Write(ctx, func(tx *store.Tx) (any, error) {
		cur, err := loadMolecule(ctx, tx, "id", req.ID)
		if err != nil {
			return nil, err
		}
		if cur.Version != *req.Version {
			return nil, op.Conflict("molecule", cur.ID, *req.Version, cur.Version)
		}
		next, now := *cur, store.Now()
		if req.Name != nil {
			next.Name = *req.Name
		}
		if req.RelatedMolecules != nil {
			next.RelatedMolecules = req.RelatedMolecules
		}
		if req.Knowledge != nil {
			if next.Knowledge, err = newKnowledge(cur.Knowledge, req, now, task); err != nil {
				return nil, err
			}
		}
		next.LastTaskID, next.UpdatedAt, next.Version, next.Store = task, now, cur.Version+1, s.db.Layer()
		return &next, s.updateEntity(ctx, tx, moleculeKind, cur.ID, cur.Version, stateOf(cur), stateOf(&next), task, now)
	})
	if err != nil {
		return nil, err
	}
	return v.(*graphop.Molecule), nil
}

func (s *Store) updateEntity(ctx context.Context, tx *store.Tx, k kind, id string, from int, before, after map[string]any, task, now string) error {
	if err := updateRow(ctx, tx, k, id, from, diff(before, after, false)); err != nil {
		return err
	}
	return appendDelta(ctx, tx, k, id, from+1, "update", before, after, task, now)
}

// removeEntity deletes an entity's changelog and row and appends its
// tombstone delta; it returns how many changelog entries went.
func removeEntity(ctx context.Context, tx *store.Tx, k kind, id string, version int, state map[string]any, task, now string) (int, error) {
	res, err := tx.ExecContext(ctx, `DELETE FROM graph_changelog WHERE parent_type = ? AND parent_id = ?`, k.name, id)
	if err != nil {
		return 0, fmt.Errorf("delete changelog of %s %s: %w", k.name, id, err)
	}
	n, _ := res.RowsAffected()
	if _, err := tx.ExecContext(ctx, "DELETE FROM "+k.table+" WHERE id = ?", id); err != nil {
		return 0, fmt.Errorf("delete %s %s: %w", k.name, id, err)
	}
	return int(n), appendDelta(ctx, tx, k, id, version+1, "delete", state, nil, task, now)
}

func (s *Store) deleteAtom(ctx context.Context, c store.Caller, req *graphop.ManageGraph) (*graphop.Deleted, error) {
	task, err := s.db.TaskID("lastTaskId", req.LastTaskID, c)
	if err != nil {
		return nil, err
	}
	v, err := s.db.Write(ctx, func(tx *store.Tx) (any, error) {
		cur, err := loadAtom(ctx, tx, "id", req.ID)
		if err != nil {
			return nil, err
		}
		if cur.Version != *req.Version {
			return nil, op.Conflict("atom", cur.ID, *req.Version, cur.Version)
		}
		n, err := removeEntity(ctx, tx, atomKind, cur.ID, cur.Version, stateOf(cur), task, store.Now())
		return &graphop.Deleted{EntityType: graphop.EntityAtom, ID: cur.ID, Deleted: true, Version: cur.Version + 1,
			DeletedChangelog: n, Store: s.db.Layer()}, err
	})
	if err != nil {
		return nil, err
	}
	return v.(*graphop.Deleted), nil
}

// deleteMolecule deletes a molecule and its changelog. Without cascade its
// atoms become orphans (moleculeId null, lastTaskId and updatedAt set, a
// new version each); with cascade they are deleted with their changelog.
func (s *Store) deleteMolecule(ctx context.Context, c store.Caller, req *graphop.ManageGraph) (*graphop.Deleted, error) {
	task, err := s.db.TaskID("lastTaskId", req.LastTaskID, c)
	if err != nil {
		return nil, err
	}
	v, err := s.db.Write(ctx, func(tx *store.Tx) (any, error) {
		cur, err := loadMolecule(ctx, tx, "id", req.ID)
		if err != nil {
			return nil, err
		}
		if cur.Version != *req.Version {
			return nil, op.Conflict("molecule", cur.ID, *req.Version, cur.Version)
		}
		members, err := memberAtoms(ctx, tx, cur.ID)
		if err != nil {
			return nil, err
		}
		now := store.Now()
		res := &graphop.Deleted{EntityType: graphop.EntityMolecule, ID: cur.ID, Deleted: true, Version: cur.Version + 1, Store: s.db.Layer()}
		for i := range members {
			a := &members[i]
			if req.Cascade {
				n, err := removeEntity(ctx, tx, atomKind, a.ID, a.Version, stateOf(a), task, now)
				if err != nil {
					return nil, err
				}
				res.DeletedAtoms = append(res.DeletedAtoms, a.ID)
				res.DeletedChangelog += n
				continue
			}
			next := *a
			next.MoleculeID, next.LastTaskID, next.UpdatedAt = nil, task, now
			if err := s.updateEntity(ctx, tx, atomKind, a.ID, a.Version, stateOf(a), stateOf(&next), task, now); err != nil {
				return nil, err
			}
			res.OrphanedAtoms = append(res.OrphanedAtoms, a.ID)
		}
		n, err := removeEntity(ctx, tx, moleculeKind, cur.ID, cur.Version, stateOf(cur), task, now)
		res.DeletedChangelog += n
		return res, err
	})
	if err != nil {
		return nil, err
	}
	return v.(*graphop.Deleted), nil
}

// memberAtoms lists a molecule's atoms by name.
func memberAtoms(ctx context.Context, q store.Querier, moleculeID string) ([]graphop.Atom, error) {
	rows, err := q.QueryContext(ctx, "SELECT "+atomCols+" FROM graph_atoms WHERE molecule_id = ? ORDER BY name, id", moleculeID)
	if err != nil {
		return nil, fmt.Errorf("read atoms of molecule %s: %w", moleculeID, err)
	}
	defer rows.Close()
	out := []graphop.Atom{}
	for rows.Next() {
		a, err := scanAtom(rows)
		if err != nil {
			return nil, fmt.Errorf("read atoms of molecule %s: %w", moleculeID, err)
		}
		out = append(out, *a)
	}
	return out, rows.Err()
}

// Batch runs many manage_graph requests (each validated) in one write
// transaction: all of them apply or none does. Results are in request
// order. The first failing request aborts the batch; its error is an
// *op.Error with details.index set to its position (0-based). One
// transaction instead of one per request makes bulk loads several times
// faster.
func (s *Store) Batch(ctx context.Context, c store.Caller, reqs []*graphop.ManageGraph) ([]any, error) {
	out := make([]any, 0, len(reqs))
	_, err := s.db.Write(ctx, func(tx *store.Tx) (any, error) {
		bctx := store.WithTx(ctx, tx)
		for i, r := range reqs {
			if e := r.Validate(); e != nil {
				return nil, op.AtIndex(e, i)
			}
			v, err := s.ManageGraph(bctx, c, r)
			if err != nil {
				if e, ok := op.AsError(err); ok {
					return nil, op.AtIndex(e, i)
				}
				return nil, fmt.Errorf("batch request %d: %w", i, err)
			}
			out = append(out, v)
		}
		return nil, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ManageChangelog runs manage_changelog. req must have passed Validate.
// Results: *graphop.ChangelogEntry (append), *op.Page[graphop.ChangelogEntry]
// (search: newest first).
func (s *Store) ManageChangelog(ctx context.Context, c store.Caller, req *graphop.ManageChangelog) (any, error) {
	k := kindOf(req.ParentType)
	if req.Operation == "append" {
		task, err := s.db.TaskID("taskId", req.TaskID, c)
		if err != nil {
			return nil, err
		}
		return s.db.Write(ctx, func(tx *store.Tx) (any, error) {
			if err := parentExists(ctx, tx, k, req.ParentID); err != nil {
				return nil, err
			}
			e := &graphop.ChangelogEntry{ID: store.NewID(), ParentType: k.name, ParentID: req.ParentID, TaskID: task,
				Summary: req.Summary, CreatedAt: store.Now(), Store: s.db.Layer()}
			_, err := tx.ExecContext(ctx, `INSERT INTO graph_changelog(id, parent_type, parent_id, task_id, summary, created_at)
				VALUES (?, ?, ?, ?, ?, ?)`, e.ID, e.ParentType, e.ParentID, e.TaskID, e.Summary, e.CreatedAt)
			if err != nil {
				return nil, fmt.Errorf("append changelog of %s %s: %w", k.name, req.ParentID, err)
			}
			return e, nil
		})
	}
	return s.changelogPage(ctx, k, req)
}

func parentExists(ctx context.Context, q store.Querier, k kind, id string) error {
	var one int
	err := q.QueryRowContext(ctx, "SELECT 1 FROM "+k.table+" WHERE id = ?", id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return op.NotFound("parentId", k.name, id)
	}
	if err != nil {
		return fmt.Errorf("read %s %s: %w", k.name, id, err)
	}
	return nil
}

func (s *Store) changelogPage(ctx context.Context, k kind, req *graphop.ManageChangelog) (*op.Page[graphop.ChangelogEntry], error) {
	if err := parentExists(ctx, s.r, k, req.ParentID); err != nil {
		return nil, err
	}
	limit, offset := op.LimitOr(req.Limit, op.DefaultLimit), op.LimitOr(req.Offset, 0)
	page := &op.Page[graphop.ChangelogEntry]{Items: []graphop.ChangelogEntry{}, Limit: limit, Offset: offset}
	err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM graph_changelog WHERE parent_type = ? AND parent_id = ?`,
		k.name, req.ParentID).Scan(&page.Total)
	if err != nil {
		return nil, fmt.Errorf("read changelog of %s %s: %w", k.name, req.ParentID, err)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT id, parent_type, parent_id, task_id, summary, created_at FROM graph_changelog
		WHERE parent_type = ? AND parent_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?`, k.name, req.ParentID, limit, offset)
	if err != nil {
		return nil, fmt.Errorf("read changelog of %s %s: %w", k.name, req.ParentID, err)
	}
	defer rows.Close()
	for rows.Next() {
		e := graphop.ChangelogEntry{Store: s.db.Layer()}
		if err := rows.Scan(&e.ID, &e.ParentType, &e.ParentID, &e.TaskID, &e.Summary, &e.CreatedAt); err != nil {
			return nil, fmt.Errorf("read changelog of %s %s: %w", k.name, req.ParentID, err)
		}
		page.Items = append(page.Items, e)
	}
	return page, rows.Err()
}
