package vector

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/api/vectorop"
	"github.com/pi-actors/pi-actors/knowledge/store"
)

// temporalGap is how far apart two statements on one subject must be to
// make their conflict temporal rather than semantic (seed 001: 30 days).
const temporalGap = 30 * 24 * time.Hour

// detectConflicts records a conflict between n (just inserted) and every
// live node with the same subject (name, case-insensitive) whose content
// differs: source_mismatch when exactly one of them is code, temporal
// when they are more than 30 days apart, semantic otherwise. Nothing is
// resolved: both nodes stay, and every hit on either carries the
// conflict until conflicts operation=resolve.
func (tx *vtx) detectConflicts(ctx context.Context, n *nodeIn, now string) ([]vectorop.ConflictRef, error) {
	// SQLite's lower() folds ASCII only: a name with other letters (été,
	// ÉTÉ) is matched with each of them as one character (LIKE: _) and
	// compared folded here.
	query, arg := `SELECT id, domain, name, content_hash, trust, created_at FROM vg_nodes
		WHERE domain IN ('code', 'history', 'academic') AND lower(name) = lower(?) AND superseded_by IS NULL AND id != ? LIMIT 20`, n.name
	if !isASCII(n.name) {
		query, arg = `SELECT id, domain, name, content_hash, trust, created_at FROM vg_nodes
		WHERE domain IN ('code', 'history', 'academic') AND name LIKE ? ESCAPE '\' AND superseded_by IS NULL AND id != ? LIMIT 500`, likeFolded(n.name)
	}
	rows, err := tx.QueryContext(ctx, query, arg, n.id)
	if err != nil {
		return nil, fmt.Errorf("find conflicts of %q: %w", n.name, err)
	}
	type other struct {
		id, domain, name, hash, created string
		trust                           int
	}
	var others []other
	for rows.Next() {
		var o other
		if err := rows.Scan(&o.id, &o.domain, &o.name, &o.hash, &o.trust, &o.created); err != nil {
			rows.Close()
			return nil, fmt.Errorf("find conflicts of %q: %w", n.name, err)
		}
		if o.hash != n.hash && strings.ToLower(o.name) == strings.ToLower(n.name) && len(others) < 20 {
			others = append(others, o)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find conflicts of %q: %w", n.name, err)
	}
	out := []vectorop.ConflictRef{}
	for _, o := range others {
		typ, resolution := vectorop.ConflictSemantic, "needs review: which statement holds?"
		then, _ := time.Parse(store.TimeLayout, o.created)
		cur, _ := time.Parse(store.TimeLayout, now)
		switch {
		case (o.domain == vectorop.DomainCode) != (n.domain == vectorop.DomainCode):
			typ, resolution = vectorop.ConflictSourceMismatch, "code is the source of truth; the other statement may be outdated"
		case cur.Sub(then) > temporalGap:
			typ, resolution = vectorop.ConflictTemporal, "prefer the newer statement unless the older one is code"
		}
		desc := fmt.Sprintf("%s %s (trust %d, %s) and %s %s (trust %d, %s) say different things about %q; %s",
			o.domain, o.id, o.trust, o.created, n.domain, n.id, n.trust, now, n.name, resolution)
		res, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO vg_conflicts(type, subject, node_a, node_b, description, detected_at)
			VALUES (?, ?, ?, ?, ?, ?)`, typ, strings.ToLower(n.name), o.id, n.id, desc, now)
		if err != nil {
			return nil, fmt.Errorf("record conflict of %q: %w", n.name, err)
		}
		id, _ := res.LastInsertId()
		out = append(out, vectorop.ConflictRef{ID: int(id), Type: typ, With: o.id, WithName: o.name, Description: desc})
	}
	return out, nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// likeFolded is a LIKE pattern matching s whatever the case of its
// letters: ASCII ones as they are (LIKE ignores their case), each other
// character as one of any (_); %, _ and \ escaped.
func likeFolded(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '%' || r == '_' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r >= 0x80:
			b.WriteByte('_')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// conflictsOf returns the unresolved conflicts of each node id.
func conflictsOf(ctx context.Context, q store.Querier, ids []string) (map[string][]vectorop.ConflictRef, error) {
	out := map[string][]vectorop.ConflictRef{}
	if len(ids) == 0 {
		return out, nil
	}
	in, args := store.In(ids)
	rows, err := q.QueryContext(ctx, `SELECT c.id, c.type, c.node_a, a.name, c.node_b, b.name, c.description
		FROM vg_conflicts c JOIN vg_nodes a ON a.id = c.node_a JOIN vg_nodes b ON b.id = c.node_b
		WHERE c.resolved = 0 AND (c.node_a IN `+in+` OR c.node_b IN `+in+`) ORDER BY c.id`, append(args, args...)...)
	if err != nil {
		return nil, fmt.Errorf("read conflicts: %w", err)
	}
	defer rows.Close()
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	for rows.Next() {
		var id int
		var typ, a, an, b, bn, desc string
		if err := rows.Scan(&id, &typ, &a, &an, &b, &bn, &desc); err != nil {
			return nil, fmt.Errorf("read conflicts: %w", err)
		}
		if want[a] {
			out[a] = append(out[a], vectorop.ConflictRef{ID: id, Type: typ, With: b, WithName: bn, Description: desc})
		}
		if want[b] {
			out[b] = append(out[b], vectorop.ConflictRef{ID: id, Type: typ, With: a, WithName: an, Description: desc})
		}
	}
	return out, rows.Err()
}

const conflictCols = `c.id, c.type, c.subject, c.node_a, a.name, c.node_b, b.name, c.description, c.resolved, c.resolution,
	c.detected_at, c.resolved_at`

func scanConflict(sc store.Scanner) (vectorop.ConflictRecord, error) {
	var c vectorop.ConflictRecord
	err := sc.Scan(&c.ID, &c.Type, &c.Subject, &c.NodeA, &c.NameA, &c.NodeB, &c.NameB, &c.Description, &c.Resolved,
		&c.Resolution, &c.DetectedAt, &c.ResolvedAt)
	return c, err
}

// Conflicts lists a page of conflicts (unresolved first, newest first) or
// resolves one.
func (s *Store) Conflicts(ctx context.Context, req *vectorop.Conflicts) (any, error) {
	if req.Operation == "resolve" {
		return s.resolveConflict(ctx, *req.ID, req.Resolution)
	}
	limit, offset := op.LimitOr(req.Limit, op.DefaultLimit), op.LimitOr(req.Offset, 0)
	where := "c.resolved = 0"
	if req.All {
		where = "1"
	}
	page := &op.Page[vectorop.ConflictRecord]{Items: []vectorop.ConflictRecord{}, Limit: limit, Offset: offset}
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM vg_conflicts c WHERE `+where).Scan(&page.Total); err != nil {
		return nil, fmt.Errorf("count conflicts: %w", err)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+conflictCols+` FROM vg_conflicts c
		JOIN vg_nodes a ON a.id = c.node_a JOIN vg_nodes b ON b.id = c.node_b
		WHERE `+where+` ORDER BY c.resolved, c.id DESC LIMIT ? OFFSET ?`, limit, offset)
	if err != nil {
		return nil, fmt.Errorf("read conflicts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		c, err := scanConflict(rows)
		if err != nil {
			return nil, fmt.Errorf("read conflicts: %w", err)
		}
		c.Store = s.db.Layer()
		page.Items = append(page.Items, c)
	}
	return page, rows.Err()
}

// HasConflict reports whether the store holds conflict id.
func (s *Store) HasConflict(ctx context.Context, id int) (bool, error) {
	var n int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM vg_conflicts WHERE id = ?`, id).Scan(&n); err != nil {
		return false, fmt.Errorf("read conflict %d: %w", id, err)
	}
	return n > 0, nil
}

func (s *Store) resolveConflict(ctx context.Context, id int, resolution string) (*vectorop.ConflictRecord, error) {
	v, err := s.db.Write(ctx, func(tx *store.Tx) (any, error) {
		// Resolved once: the same resolution again is a retry (the stored
		// record comes back); another one is refused — it overwrote the
		// first in silence.
		var done int
		var was, at string
		err := tx.QueryRowContext(ctx, `SELECT resolved, resolution, resolved_at FROM vg_conflicts WHERE id = ?`, id).Scan(&done, &was, &at)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return nil, op.NotFound("id", "conflict", fmt.Sprint(id))
		case err != nil:
			return nil, fmt.Errorf("resolve conflict %d: %w", id, err)
		case done == 1 && was != resolution:
			return nil, op.Invalid("id", "conflict %d was resolved at %s (%q); a resolution is final: record a new finding with node_add if it changed", id, at, op.Clip(was, op.TextPreview))
		case done == 0:
			if _, err := tx.ExecContext(ctx, `UPDATE vg_conflicts SET resolved = 1, resolution = ?, resolved_at = ? WHERE id = ?`,
				resolution, store.Now(), id); err != nil {
				return nil, fmt.Errorf("resolve conflict %d: %w", id, err)
			}
		}
		c, err := scanConflict(tx.QueryRowContext(ctx, `SELECT `+conflictCols+` FROM vg_conflicts c
			JOIN vg_nodes a ON a.id = c.node_a JOIN vg_nodes b ON b.id = c.node_b WHERE c.id = ?`, id))
		if errors.Is(err, sql.ErrNoRows) {
			return nil, op.NotFound("id", "conflict", fmt.Sprint(id))
		}
		if err != nil {
			return nil, fmt.Errorf("resolve conflict %d: %w", id, err)
		}
		c.Store = s.db.Layer()
		return &c, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*vectorop.ConflictRecord), nil
}
