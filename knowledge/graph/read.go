package graph

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"github.com/pi-actors/pi-actors/knowledge/api/graphop"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/store"
)

// QueryGraph runs query_graph. req must have passed Validate. Results:
// *graphop.Atom or *graphop.Molecule (get), *op.Page[graphop.Atom] or
// *op.Page[graphop.Molecule] (search), *graphop.Context (context).
func (s *Store) QueryGraph(ctx context.Context, c store.Caller, req *graphop.QueryGraph) (any, error) {
	switch req.Operation {
	case "get":
		if req.EntityType == graphop.EntityMolecule {
			return get(ctx, s, req, molecules)
		}
		return get(ctx, s, req, atoms)
	case "search":
		if req.EntityType == graphop.EntityMolecule {
			return search(ctx, s, c, req, molecules)
		}
		return search(ctx, s, c, req, atoms)
	case "context":
		return s.Context(ctx, c, req.ProjectID, req.Paths, op.BoolOr(req.IncludeChangelog, true),
			op.LimitOr(req.ChangelogLimit, graphop.DefaultChangelogLimit))
	}
	return nil, op.Invalid("operation", "unknown operation %q", req.Operation)
}

// get reads one entity of kind k with (unless asked not to) its newest
// changelog entries and what k adds (a molecule's atoms).
func get[T any](ctx context.Context, s *Store, req *graphop.QueryGraph, k *kind[T]) (any, error) {
	e, err := load(ctx, s.r, k, "id", req.ID)
	if err != nil {
		return nil, err
	}
	f := k.fields(e)
	*f.store = s.db.Layer()
	if k.more != nil {
		if err := k.more(ctx, s.r, e); err != nil {
			return nil, err
		}
	}
	if op.BoolOr(req.IncludeChangelog, true) {
		logs, err := changelogFor(ctx, s.r, k.name, []string{*f.id}, op.LimitOr(req.ChangelogLimit, graphop.DefaultChangelogLimit))
		if err != nil {
			return nil, err
		}
		*f.changelog = op.NonNil(logs[*f.id])
	}
	return e, nil
}

// prefixed turns "a, b" into "e.a, e.b".
func prefixed(cols string) string { return "e." + strings.ReplaceAll(cols, ", ", ", e.") }

// ftsQuery turns free text into an FTS5 query: every word (letters and
// digits) as a quoted prefix term, all required.
func ftsQuery(text string) string {
	words := strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for i, w := range words {
		words[i] = `"` + w + `"*`
	}
	return strings.Join(words, " ")
}

// search pages through the project's entities of kind k: by FTS5 rank
// and name with a query, by name without.
func search[T any](ctx context.Context, s *Store, c store.Caller, req *graphop.QueryGraph, k *kind[T]) (any, error) {
	pid, err := resolveProject(ctx, s.r, req.ProjectID, c.Cwd)
	if err != nil {
		return nil, err
	}
	limit, offset := op.LimitOr(req.Limit, op.DefaultLimit), op.LimitOr(req.Offset, 0)
	from, order := k.table+" e", "e.name, e.id"
	var where []string
	var args []any
	if req.Query != "" {
		match := ftsQuery(req.Query)
		if match == "" {
			return nil, op.Invalid("query", "query %q has no words to search for (letters or digits)", req.Query)
		}
		from = k.fts + " f JOIN " + k.table + " e ON e.rowid = f.rowid"
		where, args = append(where, k.fts+" MATCH ?"), append(args, match)
		order = "f.rank, e.name, e.id"
	}
	where, args = append(where, "e.project_id = ?"), append(args, pid)
	if req.MoleculeID != "" {
		where, args = append(where, "e.molecule_id = ?"), append(args, req.MoleculeID)
	}
	if req.OrphansOnly {
		where = append(where, "e.molecule_id IS NULL")
	}
	cond := strings.Join(where, " AND ")
	page := &op.Page[T]{Limit: limit, Offset: offset}
	if err := s.r.QueryRowContext(ctx, "SELECT count(*) FROM "+from+" WHERE "+cond, args...).Scan(&page.Total); err != nil {
		return nil, fmt.Errorf("search %ss: %w", k.name, err)
	}
	page.Items, err = queryAll(ctx, s.r, k, "SELECT "+prefixed(k.cols)+" FROM "+from+" WHERE "+cond+" ORDER BY "+order+" LIMIT ? OFFSET ?",
		append(args, limit, offset)...)
	if err != nil {
		return nil, fmt.Errorf("search %ss: %w", k.name, err)
	}
	for i := range page.Items {
		*k.fields(&page.Items[i]).store = s.db.Layer()
	}
	if op.BoolOr(req.IncludeChangelog, false) {
		if err := attachLogs(ctx, s, k, page.Items, op.LimitOr(req.ChangelogLimit, graphop.DefaultChangelogLimit)); err != nil {
			return nil, err
		}
	}
	return page, nil
}

// attachLogs gives each item its newest n changelog entries.
func attachLogs[T any](ctx context.Context, s *Store, k *kind[T], items []T, n int) error {
	ids := make([]string, len(items))
	for i := range items {
		ids[i] = *k.fields(&items[i]).id
	}
	logs, err := changelogFor(ctx, s.r, k.name, ids, n)
	if err != nil {
		return err
	}
	for i := range items {
		f := k.fields(&items[i])
		*f.changelog = op.NonNil(logs[*f.id])
	}
	return nil
}

// changelogFor returns the newest n changelog entries of each parent.
func changelogFor(ctx context.Context, q store.Querier, parentType string, ids []string, n int) (map[string][]graphop.ChangelogEntry, error) {
	out := map[string][]graphop.ChangelogEntry{}
	if n <= 0 {
		return out, nil
	}
	err := store.InChunks(ids, func(in string, args []any) error {
		rows, err := q.QueryContext(ctx, `SELECT id, parent_type, parent_id, task_id, summary, created_at FROM (
			SELECT *, ROW_NUMBER() OVER (PARTITION BY parent_id ORDER BY created_at DESC, rowid DESC) AS rn
			FROM graph_changelog WHERE parent_type = ? AND parent_id IN `+in+`)
			WHERE rn <= ? ORDER BY parent_id, rn`, append(append([]any{parentType}, args...), n)...)
		if err != nil {
			return fmt.Errorf("read changelog: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var e graphop.ChangelogEntry
			if err := rows.Scan(&e.ID, &e.ParentType, &e.ParentID, &e.TaskID, &e.Summary, &e.CreatedAt); err != nil {
				return fmt.Errorf("read changelog: %w", err)
			}
			out[e.ParentID] = append(out[e.ParentID], e)
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read changelog: %w", err)
		}
		return nil
	})
	return out, err
}
