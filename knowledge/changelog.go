package knowledge

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/pi-actors/pi-actors/knowledge/api"
)

// ManageChangelog runs manage_changelog. req must have passed Validate.
// Results: *api.ChangelogEntry (append), *api.Page[api.ChangelogEntry]
// (search: newest first).
func (s *Store) ManageChangelog(ctx context.Context, c Caller, req *api.ManageChangelog) (any, error) {
	k := kindOf(req.ParentType)
	if req.Operation == "append" {
		task, err := s.taskID("taskId", req.TaskID, c)
		if err != nil {
			return nil, err
		}
		return s.write(ctx, func(tx *wtx) (any, error) {
			if err := parentExists(ctx, tx, k, req.ParentID); err != nil {
				return nil, err
			}
			e := &api.ChangelogEntry{ID: newID(), ParentType: k.name, ParentID: req.ParentID, TaskID: task,
				Summary: req.Summary, CreatedAt: s.now(), Store: s.opts.Layer}
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

func parentExists(ctx context.Context, q querier, k kind, id string) error {
	var one int
	err := q.QueryRowContext(ctx, "SELECT 1 FROM "+k.table+" WHERE id = ?", id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return api.NotFound("parentId", k.name, id)
	}
	if err != nil {
		return fmt.Errorf("read %s %s: %w", k.name, id, err)
	}
	return nil
}

func (s *Store) changelogPage(ctx context.Context, k kind, req *api.ManageChangelog) (*api.Page[api.ChangelogEntry], error) {
	if err := parentExists(ctx, s.r, k, req.ParentID); err != nil {
		return nil, err
	}
	limit, offset := api.LimitOr(req.Limit, api.DefaultLimit), api.LimitOr(req.Offset, 0)
	page := &api.Page[api.ChangelogEntry]{Items: []api.ChangelogEntry{}, Limit: limit, Offset: offset}
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
		e := api.ChangelogEntry{Store: s.opts.Layer}
		if err := rows.Scan(&e.ID, &e.ParentType, &e.ParentID, &e.TaskID, &e.Summary, &e.CreatedAt); err != nil {
			return nil, fmt.Errorf("read changelog of %s %s: %w", k.name, req.ParentID, err)
		}
		page.Items = append(page.Items, e)
	}
	return page, rows.Err()
}
