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
		return s.get(ctx, req)
	case "search":
		return s.search(ctx, c, req)
	case "context":
		return s.Context(ctx, c, req.ProjectID, req.Paths, op.BoolOr(req.IncludeChangelog, true),
			op.LimitOr(req.ChangelogLimit, graphop.DefaultChangelogLimit))
	}
	return nil, op.Invalid("operation", "unknown operation %q", req.Operation)
}

func (s *Store) get(ctx context.Context, req *graphop.QueryGraph) (any, error) {
	withLog, logN := op.BoolOr(req.IncludeChangelog, true), op.LimitOr(req.ChangelogLimit, graphop.DefaultChangelogLimit)
	if req.EntityType == graphop.EntityAtom {
		a, err := loadAtom(ctx, s.r, "id", req.ID)
		if err != nil {
			return nil, err
		}
		a.Store = s.db.Layer()
		if withLog {
			logs, err := changelogFor(ctx, s.r, graphop.EntityAtom, []string{a.ID}, logN)
			if err != nil {
				return nil, err
			}
			a.Changelog = op.NonNil(logs[a.ID])
		}
		return a, nil
	}
	m, err := loadMolecule(ctx, s.r, "id", req.ID)
	if err != nil {
		return nil, err
	}
	m.Store = s.db.Layer()
	if m.Atoms, err = memberAtoms(ctx, s.r, m.ID); err != nil {
		return nil, err
	}
	if withLog {
		logs, err := changelogFor(ctx, s.r, graphop.EntityMolecule, []string{m.ID}, logN)
		if err != nil {
			return nil, err
		}
		m.Changelog = op.NonNil(logs[m.ID])
	}
	return m, nil
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

func (s *Store) search(ctx context.Context, c store.Caller, req *graphop.QueryGraph) (any, error) {
	pid, err := resolveProject(ctx, s.r, req.ProjectID, c.Cwd)
	if err != nil {
		return nil, err
	}
	k := kindOf(req.EntityType)
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
	var total int
	if err := s.r.QueryRowContext(ctx, "SELECT count(*) FROM "+from+" WHERE "+cond, args...).Scan(&total); err != nil {
		return nil, fmt.Errorf("search %ss: %w", k.name, err)
	}
	cols := prefixed(atomCols)
	if k == moleculeKind {
		cols = prefixed(moleculeCols)
	}
	rows, err := s.r.QueryContext(ctx, "SELECT "+cols+" FROM "+from+" WHERE "+cond+" ORDER BY "+order+" LIMIT ? OFFSET ?",
		append(args, limit, offset)...)
	if err != nil {
		return nil, fmt.Errorf("search %ss: %w", k.name, err)
	}
	defer rows.Close()
	withLog, logN := op.BoolOr(req.IncludeChangelog, false), op.LimitOr(req.ChangelogLimit, graphop.DefaultChangelogLimit)
	if k == moleculeKind {
		page := &op.Page[graphop.Molecule]{Items: []graphop.Molecule{}, Total: total, Limit: limit, Offset: offset}
		for rows.Next() {
			m, err := scanMolecule(rows)
			if err != nil {
				return nil, fmt.Errorf("search molecules: %w", err)
			}
			m.Store = s.db.Layer()
			page.Items = append(page.Items, *m)
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("search molecules: %w", err)
		}
		if withLog {
			err = attachLogs(ctx, s, graphop.EntityMolecule, page.Items, logN, func(m *graphop.Molecule) (string, *[]graphop.ChangelogEntry) { return m.ID, &m.Changelog })
		}
		return page, err
	}
	page := &op.Page[graphop.Atom]{Items: []graphop.Atom{}, Total: total, Limit: limit, Offset: offset}
	for rows.Next() {
		a, err := scanAtom(rows)
		if err != nil {
			return nil, fmt.Errorf("search atoms: %w", err)
		}
		a.Store = s.db.Layer()
		page.Items = append(page.Items, *a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search atoms: %w", err)
	}
	if withLog {
		err = attachLogs(ctx, s, graphop.EntityAtom, page.Items, logN, func(a *graphop.Atom) (string, *[]graphop.ChangelogEntry) { return a.ID, &a.Changelog })
	}
	return page, err
}

func attachLogs[T any](ctx context.Context, s *Store, parentType string, items []T, n int, field func(*T) (string, *[]graphop.ChangelogEntry)) error {
	ids := make([]string, len(items))
	for i := range items {
		ids[i], _ = field(&items[i])
	}
	logs, err := changelogFor(ctx, s.r, parentType, ids, n)
	if err != nil {
		return err
	}
	for i := range items {
		id, dst := field(&items[i])
		*dst = op.NonNil(logs[id])
	}
	return nil
}

// changelogFor returns the newest n changelog entries of each parent.
func changelogFor(ctx context.Context, q store.Querier, parentType string, ids []string, n int) (map[string][]graphop.ChangelogEntry, error) {
	out := map[string][]graphop.ChangelogEntry{}
	if n <= 0 {
		return out, nil
	}
	for start := 0; start < len(ids); start += 500 {
		chunk := ids[start:min(start+500, len(ids))]
		args := []any{parentType}
		for _, id := range chunk {
			args = append(args, id)
		}
		args = append(args, n)
		rows, err := q.QueryContext(ctx, `SELECT id, parent_type, parent_id, task_id, summary, created_at FROM (
			SELECT *, ROW_NUMBER() OVER (PARTITION BY parent_id ORDER BY created_at DESC, rowid DESC) AS rn
			FROM graph_changelog WHERE parent_type = ? AND parent_id IN (?`+strings.Repeat(",?", len(chunk)-1)+`))
			WHERE rn <= ? ORDER BY parent_id, rn`, args...)
		if err != nil {
			return nil, fmt.Errorf("read changelog: %w", err)
		}
		for rows.Next() {
			var e graphop.ChangelogEntry
			if err := rows.Scan(&e.ID, &e.ParentType, &e.ParentID, &e.TaskID, &e.Summary, &e.CreatedAt); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read changelog: %w", err)
			}
			out[e.ParentID] = append(out[e.ParentID], e)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read changelog: %w", err)
		}
	}
	return out, nil
}
