package graph

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pi-actors/pi-actors/knowledge/api/graphop"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/store"
)

// CreateProject runs project_create. The root defaults to the caller's
// cwd; a relative root is taken relative to it. Two projects may not share
// a root (the cwd would not select one).
func (s *Store) CreateProject(ctx context.Context, c store.Caller, req *graphop.ProjectCreate) (*graphop.Project, error) {
	root := req.Root
	if root == "" {
		root = c.Cwd
	}
	if root != "" && !filepath.IsAbs(root) {
		if !filepath.IsAbs(c.Cwd) {
			return nil, op.Invalid("root", "root %q is relative and the caller's cwd is unknown: pass an absolute root", root)
		}
		root = filepath.Join(c.Cwd, root)
	}
	if root != "" {
		root = filepath.Clean(root)
		if fi, err := os.Stat(root); err == nil && !fi.IsDir() {
			return nil, op.Invalid("root", "root %s is a file, not a directory: a project's root is the directory its paths are relative to", root)
		}
	}
	v, err := s.db.Write(ctx, func(tx *store.Tx) (any, error) {
		if root != "" {
			var other string
			err := tx.QueryRowContext(ctx, `SELECT id FROM projects WHERE root = ?`, root).Scan(&other)
			if err == nil {
				return nil, op.Invalid("root", "project %s already has root %s: use it (projectId=%s) or choose another root", other, root, other)
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return nil, fmt.Errorf("read projects: %w", err)
			}
		}
		p := &graphop.Project{ID: store.NewID(), Name: req.Name, Root: root, CreatedAt: store.Now(), Store: s.db.Layer()}
		_, err := tx.ExecContext(ctx, `INSERT INTO projects(id, name, root, created_at) VALUES (?, ?, ?, ?)`, p.ID, p.Name, p.Root, p.CreatedAt)
		if err != nil {
			return nil, fmt.Errorf("create project %s: %w", p.Name, err)
		}
		return p, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*graphop.Project), nil
}

// Projects runs project_list: projects by creation time.
func (s *Store) Projects(ctx context.Context, req *graphop.ProjectList) (*op.Page[graphop.Project], error) {
	limit, offset := op.LimitOr(req.Limit, op.DefaultLimit), op.LimitOr(req.Offset, 0)
	page := &op.Page[graphop.Project]{Items: []graphop.Project{}, Limit: limit, Offset: offset}
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM projects`).Scan(&page.Total); err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT id, name, root, created_at FROM projects ORDER BY created_at, id LIMIT ? OFFSET ?`, limit, offset)
	if err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		p := graphop.Project{Store: s.db.Layer()}
		if err := rows.Scan(&p.ID, &p.Name, &p.Root, &p.CreatedAt); err != nil {
			return nil, fmt.Errorf("list projects: %w", err)
		}
		page.Items = append(page.Items, p)
	}
	return page, rows.Err()
}

// projectRoot is a project's root ("" when it has none).
func projectRoot(ctx context.Context, q store.Querier, id string) (string, error) {
	var root string
	if err := q.QueryRowContext(ctx, `SELECT root FROM projects WHERE id = ?`, id).Scan(&root); err != nil {
		return "", fmt.Errorf("read project %s: %w", id, err)
	}
	return root, nil
}

// Counts are the store's row counts.
func (s *Store) Counts(ctx context.Context) (*graphop.Counts, error) {
	c := &graphop.Counts{}
	err := s.r.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM projects), (SELECT count(*) FROM graph_molecules),
		(SELECT count(*) FROM graph_atoms), (SELECT count(*) FROM graph_changelog), (SELECT count(*) FROM graph_history)`).
		Scan(&c.Projects, &c.Molecules, &c.Atoms, &c.Changelog, &c.Deltas)
	if err != nil {
		return nil, fmt.Errorf("count rows of %s: %w", s.db.Path(), err)
	}
	return c, nil
}

// EnsureProject returns the project with root, creating it (named name,
// default the root's base name) when missing.
func (s *Store) EnsureProject(ctx context.Context, root, name string) (*graphop.Project, error) {
	p := graphop.Project{Store: s.db.Layer()}
	err := s.r.QueryRowContext(ctx, `SELECT id, name, root, created_at FROM projects WHERE root = ?`, root).Scan(&p.ID, &p.Name, &p.Root, &p.CreatedAt)
	if err == nil {
		return &p, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("read project of %s: %w", root, err)
	}
	if name == "" {
		name = filepath.Base(root)
	}
	return s.CreateProject(ctx, store.Caller{Cwd: root}, &graphop.ProjectCreate{Name: name, Root: root})
}

// ErrNoProject marks a projectId that could not be chosen from the cwd
// (package knowledge skips such a store for reads that are not by id).
var ErrNoProject = errors.New("no project for cwd")

// noProjectError is the VALIDATION_ERROR of an unresolved projectId; it
// matches ErrNoProject and unwraps to the *op.Error.
type noProjectError struct{ e *op.Error }

func (n *noProjectError) Error() string        { return n.e.Error() }
func (n *noProjectError) Unwrap() error        { return n.e }
func (n *noProjectError) Is(target error) bool { return target == ErrNoProject }

// resolveProject returns the given project id after checking it exists,
// or the one project whose root holds cwd.
func resolveProject(ctx context.Context, q store.Querier, given, cwd string) (string, error) {
	if given != "" {
		return given, store.Exists(ctx, q, "projects", "project", "projectId", given)
	}
	ids, err := projectsAt(ctx, q, cwd)
	if err != nil {
		return "", err
	}
	switch len(ids) {
	case 1:
		return ids[0], nil
	case 0:
		e := op.Invalid("projectId", "projectId is required: the cwd %s lies under no project's root; pass projectId (pi-actors knowledge project list; over MCP, the inspect tool with target=knowledge view=status lists them) or create one (pi-actors knowledge init in the repo, or knowledge project create root=DIR)", cwdOrNone(cwd))
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
func projectsAt(ctx context.Context, q store.Querier, cwd string) ([]string, error) {
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
