package knowledge

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/pi-actors/pi-actors/knowledge/api/op"
)

// Caller is who asks: the caller's working directory (selects a project
// when projectId is omitted, and the project store), the run it is inside
// (PI_ACTORS_RUN_ID: the default task id), and its session.
type Caller struct {
	Cwd     string
	RunID   string
	Session string
}

// taskID resolves a task id parameter: the given id, else run:<RunID>,
// else a VALIDATION_ERROR naming field. A run:<id> must name a run.
func (s *Store) taskID(field, given string, c Caller) (string, error) {
	id := given
	if id == "" {
		if c.RunID == "" {
			return "", op.Invalid(field, "%s is required: the task doing this (any id up to 255 characters, or run:<id>); inside a run it defaults to that run", field)
		}
		id = "run:" + c.RunID
	}
	if e := op.CheckTaskID(field, id); e != nil {
		return "", e
	}
	if run, ok := strings.CutPrefix(id, "run:"); ok && s.opts.RunExists != nil && !s.opts.RunExists(run) {
		return "", op.NotFound(field, "run", run)
	}
	return id, nil
}

// projectExists is NOT_FOUND (naming field) unless the project exists.
func projectExists(ctx context.Context, q querier, field, id string) error {
	var one int
	err := q.QueryRowContext(ctx, `SELECT 1 FROM projects WHERE id = ?`, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return op.NotFound(field, "project", id)
	}
	if err != nil {
		return fmt.Errorf("read project %s: %w", id, err)
	}
	return nil
}

// errNoProject marks a projectId that could not be chosen from the cwd
// (Layers skips such a store for reads that are not by id).
var errNoProject = errors.New("no project for cwd")

// noProjectError is the VALIDATION_ERROR of an unresolved projectId; it
// matches errNoProject and unwraps to the *op.Error.
type noProjectError struct{ e *op.Error }

func (n *noProjectError) Error() string        { return n.e.Error() }
func (n *noProjectError) Unwrap() error        { return n.e }
func (n *noProjectError) Is(target error) bool { return target == errNoProject }

// resolveProject returns the given project id after checking it exists,
// or the one project whose root holds cwd.
func resolveProject(ctx context.Context, q querier, given, cwd string) (string, error) {
	if given != "" {
		return given, projectExists(ctx, q, "projectId", given)
	}
	ids, err := projectsAt(ctx, q, cwd)
	if err != nil {
		return "", err
	}
	switch len(ids) {
	case 1:
		return ids[0], nil
	case 0:
		e := op.Invalid("projectId", "projectId is required: the cwd %s lies under no project's root; pass projectId (see project_list) or create one (project_create root=DIR)", cwdOrNone(cwd))
		return "", &noProjectError{e}
	default:
		e := op.Invalid("projectId", "projectId is required: the cwd %s lies under %d project roots (%s); pass one of them", cwd, len(ids), strings.Join(ids, ", "))
		return "", &noProjectError{e}
	}
}

func cwdOrNone(cwd string) string {
	if cwd == "" {
		return "(not given)"
	}
	return cwd
}

// projectsAt lists the ids of projects whose root is cwd or a parent of it.
func projectsAt(ctx context.Context, q querier, cwd string) ([]string, error) {
	if cwd == "" || !filepath.IsAbs(cwd) {
		return nil, nil
	}
	cwd = filepath.Clean(cwd)
	var candidates []any
	for d := cwd; ; d = filepath.Dir(d) {
		candidates = append(candidates, d)
		if d == filepath.Dir(d) {
			break
		}
	}
	rows, err := q.QueryContext(ctx, `SELECT id FROM projects WHERE root IN (?`+strings.Repeat(",?", len(candidates)-1)+`) ORDER BY id`, candidates...)
	if err != nil {
		return nil, fmt.Errorf("find project for %s: %w", cwd, err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("find project for %s: %w", cwd, err)
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}
