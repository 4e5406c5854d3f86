package vector

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/store"
)

// write stores one file's nodes in the batch's transaction. The file's
// live node is read again first: another process (another kernel on the
// same store) may have ingested it since prepare read it. When it wrote
// the same content the file is counted unchanged; otherwise the batch
// fails with a busy CONFLICT (run the ingest again).
func (in *ingester) write(ctx context.Context, tx *vtx, w *fileWork) error {
	cur, curHash, err := liveByKey(ctx, tx, w.file.key)
	if err != nil {
		return err
	}
	if cur != w.oldID {
		if cur != "" && curHash == w.file.hash {
			in.res.Unchanged++
			return nil
		}
		return op.Busy("path", "file %s was indexed by another process during this ingest", w.abs)
	}
	now := store.Now()
	if err := tx.replace(ctx, w.file, w.oldID, now); err != nil {
		return err
	}
	if w.oldID == "" {
		in.res.Indexed++
	} else {
		in.res.Changed++
		in.res.Superseded++
	}
	in.res.Nodes++
	if w.pkg != nil {
		if err := tx.linkOrInsert(ctx, w.pkg, w.file.id, "defines", true, now); err != nil {
			return err
		}
	}
	ids := []string{w.file.id}
	used := map[string]bool{}
	for _, p := range w.pieces {
		o, had := w.old[p.key]
		if had && o.hash == p.hash {
			p.id, used[p.key] = o.id, true
			_, err := tx.ExecContext(ctx, `UPDATE vg_nodes SET line_start = ?, line_end = ?, updated_at = ? WHERE id = ?`,
				p.lineStart, p.lineEnd, now, o.id)
			if err != nil {
				return fmt.Errorf("update node %s: %w", o.id, err)
			}
		} else {
			old := ""
			if had {
				old, used[p.key] = o.id, true
				in.res.Superseded++
			}
			if err := tx.replace(ctx, p, old, now); err != nil {
				return err
			}
			in.res.Nodes++
		}
		ids = append(ids, p.id)
		if err := tx.addEdge(ctx, w.file.id, "defines", p.id, now); err != nil {
			return err
		}
	}
	for k, o := range w.old {
		if !used[k] {
			// A vanished declaration or chunk: superseded by its file's new version.
			if err := tx.retire(ctx, o.id, w.file.id, now); err != nil {
				return err
			}
			if err := tx.addEdge(ctx, w.file.id, "supersedes", o.id, now); err != nil {
				return err
			}
			in.res.Superseded++
		}
	}
	if err := in.methods(ctx, tx, w, now); err != nil {
		return err
	}
	return in.linkAtoms(ctx, tx, w.abs, ids)
}

// methods links each method to its receiver type (has_method) when the
// type is declared in the same file or is already indexed in the same
// directory.
func (in *ingester) methods(ctx context.Context, tx *vtx, w *fileWork, now string) error {
	for m, recv := range w.recv {
		typeID := ""
		for _, p := range w.pieces {
			if p.name == recv && (p.typ == "struct" || p.typ == "interface" || p.typ == "type") {
				typeID = p.id
				break
			}
		}
		if typeID == "" {
			dir := filepath.Dir(w.abs)
			refs, err := queryRefs(ctx, tx, `SELECT `+refCols+` FROM vg_nodes n WHERE n.domain = 'code' AND lower(n.name) = lower(?)
				AND n.type IN ('struct', 'interface', 'type') AND n.superseded_by IS NULL AND n.path != '' AND n.path >= ? AND n.path < ?`,
				recv, dir+"/", dir+"0")
			if err != nil {
				return err
			}
			for _, r := range refs {
				if filepath.Dir(r.Path) == dir && r.Name == recv {
					typeID = r.ID
					break
				}
			}
		}
		if typeID != "" {
			if err := tx.addEdge(ctx, typeID, "has_method", m.id, now); err != nil {
				return err
			}
		}
	}
	return nil
}

// linkAtoms links the nodes of a file to the atoms whose patterns match
// the file's path relative to each project root that holds it.
func (in *ingester) linkAtoms(ctx context.Context, tx *vtx, abs string, ids []string) error {
	if in.atoms == nil {
		return nil
	}
	atoms, err := in.atoms(ctx, abs)
	if err != nil {
		return err
	}
	for _, a := range atoms {
		for _, id := range ids {
			res, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO vg_atom_links(node_id, atom_id) VALUES (?, ?)`, id, a)
			if err != nil {
				return fmt.Errorf("link %s to atom %s: %w", id, a, err)
			}
			if n, _ := res.RowsAffected(); n > 0 {
				in.res.AtomLinks++
			}
		}
	}
	return nil
}

// syncIfLoaded writes changed graphs when the vector graph is loaded.
func (s *Store) syncIfLoaded(ctx context.Context) error {
	s.mu.Lock()
	g := s.mirror
	s.mu.Unlock()
	if g == nil || !g.loadedFast() {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.persistLocked()
}

// LinkAtom recomputes one atom's links to the code nodes in tx, the
// atom's own write transaction (package knowledge hands it to the
// knowledge graph: graph.AtomLinker): it drops the atom's links (none
// when it was just created), then, unless target is nil (a deleted atom)
// or the store holds no code node, links every code node (not
// package nodes, as ingest does) whose file lies under root in one of
// scopes and whose path relative to root matches. Files are found by
// the path index, one range per scope; the nodes of a matching file by
// its path.
func (s *Store) LinkAtom(ctx context.Context, tx *store.Tx, atomID string, created bool, target func() (string, []string, func(string) bool, error)) error {
	if !created { // a new atom has no links yet
		if _, err := tx.ExecContext(ctx, `DELETE FROM vg_atom_links WHERE atom_id = ?`, atomID); err != nil {
			return fmt.Errorf("unlink atom %s: %w", atomID, err)
		}
	}
	if target == nil {
		return nil
	}
	var any int
	switch err := tx.QueryRowContext(ctx, `SELECT 1 FROM vg_nodes WHERE path != '' AND +domain = 'code' AND type != 'package' LIMIT 1`).Scan(&any); {
	case errors.Is(err, sql.ErrNoRows):
		return nil // no code ingested: nothing to link
	case err != nil:
		return fmt.Errorf("link atom %s: %w", atomID, err)
	}
	root, scopes, match, err := target()
	if err != nil {
		return fmt.Errorf("link atom %s: %w", atomID, err)
	}
	if match == nil || root == "" {
		return nil
	}
	base := strings.TrimSuffix(root, "/") + "/"
	for _, sc := range scopes {
		lo, hi := base+sc, base+sc
		if sc == "" || strings.HasSuffix(sc, "/") {
			hi = lo[:len(lo)-1] + "0" // every path below the directory ('0' follows '/')
		}
		var paths []string
		rows, err := tx.QueryContext(ctx, `SELECT DISTINCT path FROM vg_nodes WHERE path != '' AND path >= ? AND path <= ?
			AND +domain = 'code' AND type != 'package'`, lo, hi)
		if err != nil {
			return fmt.Errorf("link atom %s: %w", atomID, err)
		}
		for rows.Next() {
			var p string
			if err := rows.Scan(&p); err != nil {
				rows.Close()
				return fmt.Errorf("link atom %s: %w", atomID, err)
			}
			if p != hi || lo == hi { // hi itself is outside a directory's range
				paths = append(paths, p)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("link atom %s: %w", atomID, err)
		}
		var hits []string
		for _, p := range paths {
			if rel, err := filepath.Rel(root, p); err == nil && match(filepath.ToSlash(rel)) {
				hits = append(hits, p)
			}
		}
		const link = `INSERT OR IGNORE INTO vg_atom_links(node_id, atom_id) SELECT id, ? FROM vg_nodes
			WHERE path != '' AND +domain = 'code' AND type != 'package' AND `
		if len(hits) > 1 && len(hits) == len(paths) { // the whole scope (src/payments/**): one statement
			if _, err := tx.ExecContext(ctx, link+`path >= ? AND path <= ? AND path != ?`, atomID, lo, hi, hi); err != nil {
				return fmt.Errorf("link atom %s: %w", atomID, err)
			}
			continue
		}
		for _, p := range hits {
			if _, err := tx.ExecContext(ctx, link+`path = ?`, atomID, p); err != nil {
				return fmt.Errorf("link atom %s: %w", atomID, err)
			}
		}
	}
	return nil
}
