package graph

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/pi-actors/pi-actors/knowledge/api/graphop"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/store"
)

// ManageGraph runs manage_graph (create, update, delete of atoms and
// molecules). req must have passed Validate. Results: *graphop.Atom or
// *graphop.Molecule for create and update, *graphop.Deleted for delete.
func (s *Store) ManageGraph(ctx context.Context, c store.Caller, req *graphop.ManageGraph) (any, error) {
	if req.EntityType == graphop.EntityMolecule {
		return manage(ctx, s, c, req, molecules)
	}
	return manage(ctx, s, c, req, atoms)
}

// manage runs one manage_graph operation on an entity of kind k (store.DB.Write
// answers nil with every error).
func manage[T any](ctx context.Context, s *Store, c store.Caller, req *graphop.ManageGraph, k *kind[T]) (any, error) {
	switch req.Operation {
	case "create":
		return create(ctx, s, c, req, k)
	case "update":
		return update(ctx, s, c, req, k)
	case "delete":
		return remove(ctx, s, c, req, k)
	}
	return nil, op.Invalid("operation", "unknown operation %q", req.Operation)
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
	var pid string
	err := q.QueryRowContext(ctx, `SELECT project_id FROM graph_molecules WHERE id = ?`, moleculeID).Scan(&pid)
	if errors.Is(err, sql.ErrNoRows) {
		return op.NotFound("moleculeId", graphop.EntityMolecule, moleculeID)
	}
	if err != nil {
		return fmt.Errorf("read molecule %s: %w", moleculeID, err)
	}
	if pid != projectID {
		return op.Invariant("moleculeId", "molecule %s belongs to project %s, the atom to project %s: an atom's molecule must be in the same project",
			moleculeID, pid, projectID)
	}
	return nil
}

// checkRelated checks a relatedAtoms or relatedMolecules list given to
// entity self of project projectID: every id names an entity of the same
// kind in this store (NOT_FOUND), in the same project (INVARIANT_VIOLATION),
// and not self (VALIDATION_ERROR). Errors name the entry (1-based).
func checkRelated[E any](ctx context.Context, q store.Querier, t entityTable, field, self, projectID string, list []E, idOf func(E) string) error {
	ids := make([]string, len(list))
	for i, e := range list {
		ids[i] = idOf(e)
	}
	projects := make(map[string]string, len(ids))
	err := store.InChunks(ids, func(in string, args []any) error {
		rows, err := q.QueryContext(ctx, "SELECT id, project_id FROM "+t.table+" WHERE id IN "+in, args...)
		if err != nil {
			return fmt.Errorf("read %s: %w", field, err)
		}
		defer rows.Close()
		for rows.Next() {
			var id, pid string
			if err := rows.Scan(&id, &pid); err != nil {
				return fmt.Errorf("read %s: %w", field, err)
			}
			projects[id] = pid
		}
		return rows.Err()
	})
	if err != nil {
		return err
	}
	for i, id := range ids {
		pid, ok := projects[id]
		switch {
		case id == self:
			return op.Invalid(field, "%s entry %d: %s %s cannot be related to itself", field, i+1, t.name, id)
		case !ok:
			e := op.NotFound(field, t.name, id)
			e.Message = fmt.Sprintf("%s entry %d: %s", field, i+1, e.Message)
			return e
		case pid != projectID:
			return op.Invariant(field, "%s entry %d: %s %s belongs to project %s, this %s to project %s: related entities must be in the same project",
				field, i+1, t.name, id, pid, t.name, projectID)
		}
	}
	return nil
}

// create writes a new entity of kind k in the project req names (or the
// caller's cwd selects), with its first delta.
func create[T any](ctx context.Context, s *Store, c store.Caller, req *graphop.ManageGraph, k *kind[T]) (any, error) {
	task, err := s.db.TaskID("createdByTaskId", req.CreatedByTaskID, c)
	if err != nil {
		return nil, err
	}
	return s.db.Write(ctx, func(tx *store.Tx) (any, error) {
		pid, err := resolveProject(ctx, tx, req.ProjectID, c.Cwd)
		if err != nil {
			return nil, err
		}
		e, now := k.zero(), store.Now()
		f := k.fields(e)
		*f.id, *f.projectID, *f.name, *f.knowledge = store.NewID(), pid, *req.Name, deref(req.Knowledge)
		*f.createdBy, *f.lastTask, *f.version, *f.createdAt, *f.updatedAt, *f.store = task, task, 1, now, now, s.db.Layer()
		if err := k.set(ctx, tx, req, pid, e); err != nil {
			return nil, err
		}
		state := stateOf(e)
		if err := insertRow(ctx, tx, k.entityTable, *f.id, 1, state); err != nil {
			return nil, err
		}
		if a, ok := any(e).(*graphop.Atom); ok {
			if err := s.relinkAtom(ctx, tx, a.ID, a, true); err != nil {
				return nil, err
			}
		}
		return e, appendDelta(ctx, tx, k.entityTable, *f.id, 1, "create", nil, state, task, now)
	})
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

// change runs fn in one write transaction on entity req.ID of kind k,
// after checking the caller read its current version (CONFLICT
// otherwise); task is the lastTaskId doing it (update and delete).
func change[T any](ctx context.Context, s *Store, c store.Caller, req *graphop.ManageGraph, k *kind[T],
	fn func(tx *store.Tx, cur *T, f fields, task string) (any, error)) (any, error) {
	task, err := s.db.TaskID("lastTaskId", req.LastTaskID, c)
	if err != nil {
		return nil, err
	}
	return s.db.Write(ctx, func(tx *store.Tx) (any, error) {
		cur, err := load(ctx, tx, k, "id", req.ID)
		if err != nil {
			return nil, err
		}
		f := k.fields(cur)
		if *f.version != *req.Version {
			return nil, op.Conflict(k.name, *f.id, *req.Version, *f.version)
		}
		return fn(tx, cur, f, task)
	})
}

// update changes entity req.ID of kind k at the version the caller read:
// name, knowledge (overwritten or appended) and the kind's own fields; a
// new version and its delta.
func update[T any](ctx context.Context, s *Store, c store.Caller, req *graphop.ManageGraph, k *kind[T]) (any, error) {
	return change(ctx, s, c, req, k, func(tx *store.Tx, cur *T, cf fields, task string) (any, error) {
		next, now := *cur, store.Now()
		nf := k.fields(&next)
		if req.Name != nil {
			*nf.name = *req.Name
		}
		if req.Knowledge != nil {
			var err error
			if *nf.knowledge, err = newKnowledge(*cf.knowledge, req, now, task); err != nil {
				return nil, err
			}
		}
		if err := k.set(ctx, tx, req, *cf.projectID, &next); err != nil {
			return nil, err
		}
		*nf.lastTask, *nf.updatedAt, *nf.version, *nf.store = task, now, *cf.version+1, s.db.Layer()
		if a, ok := any(&next).(*graphop.Atom); ok && !slices.Equal(a.Paths, any(cur).(*graphop.Atom).Paths) {
			if err := s.relinkAtom(ctx, tx, a.ID, a, false); err != nil {
				return nil, err
			}
		}
		return &next, s.updateEntity(ctx, tx, k.entityTable, *cf.id, *cf.version, stateOf(cur), stateOf(&next), task, now)
	})
}

// remove deletes entity req.ID of kind k at the version the caller read,
// with its changelog and what depends on it (k.members), and appends its
// tombstone delta.
func remove[T any](ctx context.Context, s *Store, c store.Caller, req *graphop.ManageGraph, k *kind[T]) (any, error) {
	return change(ctx, s, c, req, k, func(tx *store.Tx, cur *T, f fields, task string) (any, error) {
		now := store.Now()
		res := &graphop.Deleted{EntityType: k.name, ID: *f.id, Deleted: true, Version: *f.version + 1, Store: s.db.Layer()}
		if k.members != nil {
			if err := k.members(ctx, s, tx, req, *f.id, task, now, res); err != nil {
				return nil, err
			}
		}
		n, err := removeEntity(ctx, tx, k.entityTable, *f.id, *f.version, stateOf(cur), task, now)
		res.DeletedChangelog += n
		if err == nil && k.name == graphop.EntityAtom {
			err = s.relinkAtom(ctx, tx, *f.id, nil, false)
		}
		if err != nil {
			return nil, err
		}
		// No relatedAtoms/relatedMolecules entry names what is gone: one
		// would stay for ever, and an update sending the list back as it
		// was read would be refused (NOT_FOUND).
		if res.Unrelated, err = unrelate(ctx, s, tx, k, []string{*f.id}, task, now); err != nil {
			return nil, err
		}
		if len(res.DeletedAtoms) > 0 {
			more, err := unrelate(ctx, s, tx, atoms, res.DeletedAtoms, task, now)
			if err != nil {
				return nil, err
			}
			res.Unrelated = append(res.Unrelated, more...)
		}
		return res, nil
	})
}

// unrelate drops the gone ids from every related list of kind k that
// names one (a new version and delta each) and returns those entities.
func unrelate[T any](ctx context.Context, s *Store, tx *store.Tx, k *kind[T], gone []string, task, now string) ([]string, error) {
	set := make(map[string]bool, len(gone))
	var hits []T
	seen := map[string]bool{}
	for _, id := range gone {
		set[id] = true
		// Ids are UUIDs: a quoted one in the JSON text is that entry.
		found, err := queryAll(ctx, tx, k, "SELECT "+k.cols+" FROM "+k.table+" WHERE "+k.related+" LIKE ? ORDER BY id", `%"`+id+`"%`)
		if err != nil {
			return nil, fmt.Errorf("read the %ss related to %s: %w", k.name, id, err)
		}
		for _, e := range found {
			if eid := *k.fields(&e).id; !seen[eid] {
				seen[eid] = true
				hits = append(hits, e)
			}
		}
	}
	var out []string
	for i := range hits {
		cur := &hits[i]
		next := *cur
		if !k.unrelate(&next, set) {
			continue
		}
		cf, nf := k.fields(cur), k.fields(&next)
		*nf.lastTask, *nf.updatedAt = task, now
		if err := s.updateEntity(ctx, tx, k.entityTable, *cf.id, *cf.version, stateOf(cur), stateOf(&next), task, now); err != nil {
			return nil, err
		}
		out = append(out, *cf.id)
	}
	return out, nil
}

// deleteMembers handles the atoms of a molecule being deleted: without
// cascade they become orphans (moleculeId null, lastTaskId and updatedAt
// set, a new version each); with cascade they are deleted with their
// changelog.
func deleteMembers(ctx context.Context, s *Store, tx *store.Tx, req *graphop.ManageGraph, id, task, now string, res *graphop.Deleted) error {
	members, err := memberAtoms(ctx, tx, id)
	if err != nil {
		return err
	}
	for i := range members {
		a := &members[i]
		if req.Cascade {
			n, err := removeEntity(ctx, tx, atoms.entityTable, a.ID, a.Version, stateOf(a), task, now)
			if err != nil {
				return err
			}
			if err := s.relinkAtom(ctx, tx, a.ID, nil, false); err != nil {
				return err
			}
			res.DeletedAtoms = append(res.DeletedAtoms, a.ID)
			res.DeletedChangelog += n
			continue
		}
		next := *a
		next.MoleculeID, next.LastTaskID, next.UpdatedAt = nil, task, now
		if err := s.updateEntity(ctx, tx, atoms.entityTable, a.ID, a.Version, stateOf(a), stateOf(&next), task, now); err != nil {
			return err
		}
		res.OrphanedAtoms = append(res.OrphanedAtoms, a.ID)
	}
	return nil
}

func (s *Store) updateEntity(ctx context.Context, tx *store.Tx, k entityTable, id string, from int, before, after map[string]any, task, now string) error {
	if err := updateRow(ctx, tx, k, id, from, diff(before, after, false)); err != nil {
		return err
	}
	return appendDelta(ctx, tx, k, id, from+1, "update", before, after, task, now)
}

// removeEntity deletes an entity's changelog and row and appends its
// tombstone delta; it returns how many changelog entries went.
func removeEntity(ctx context.Context, tx *store.Tx, k entityTable, id string, version int, state map[string]any, task, now string) (int, error) {
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
	k := tableOf(req.ParentType)
	if req.Operation == "append" {
		task, err := s.db.TaskID("taskId", req.TaskID, c)
		if err != nil {
			return nil, err
		}
		return s.db.Write(ctx, func(tx *store.Tx) (any, error) {
			if err := store.Exists(ctx, tx, k.table, k.name, "parentId", req.ParentID); err != nil {
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

func (s *Store) changelogPage(ctx context.Context, k entityTable, req *graphop.ManageChangelog) (*op.Page[graphop.ChangelogEntry], error) {
	if err := store.Exists(ctx, s.r, k.table, k.name, "parentId", req.ParentID); err != nil {
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
