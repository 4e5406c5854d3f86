package graph

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/pi-actors/pi-actors/knowledge/api/graphop"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/store"
)

// chainHash is sha256(canonical JSON of state + "|" + previous hash), hex.
func chainHash(state map[string]any, prev string) string {
	sum := sha256.Sum256([]byte(store.Canonical(state) + "|" + prev))
	return hex.EncodeToString(sum[:])
}

// tombstone is the hashed state of a deleted entity.
func tombstone(at, taskID string) map[string]any {
	return map[string]any{"deleted": true, "deletedAt": at, "taskId": taskID}
}

// diff maps each field whose value differs to [old, new]; with all set,
// every field of either side is listed (create and delete record the
// whole state).
func diff(before, after map[string]any, all bool) map[string][2]any {
	out := map[string][2]any{}
	seen := map[string]bool{}
	for _, m := range []map[string]any{before, after} {
		for k := range m {
			if seen[k] {
				continue
			}
			seen[k] = true
			b, a := before[k], after[k]
			if all || store.Canonical(b) != store.Canonical(a) {
				out[k] = [2]any{b, a}
			}
		}
	}
	return out
}

// appendDelta records version of an entity: op create (before nil),
// update, or delete (after nil: a tombstone). It chains onto the previous
// version's hash.
func appendDelta(ctx context.Context, tx *store.Tx, k entityTable, id string, version int, op string,
	before, after map[string]any, taskID, at string) error {
	prev := ""
	if version > 1 {
		err := tx.QueryRowContext(ctx, `SELECT hash FROM graph_history WHERE entity_id = ? AND version = ?`, id, version-1).Scan(&prev)
		if err != nil && err != sql.ErrNoRows {
			return fmt.Errorf("read history of %s %s: %w", k.name, id, err)
		}
	}
	changes := diff(before, after, op != "update")
	content := after
	if op == "delete" {
		content = tombstone(at, taskID)
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO graph_history(entity_id, version, entity_type, op, changes, task_id, created_at, parent_hash, hash)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, id, version, k.name, op, store.Canonical(changes), taskID, at, prev, chainHash(content, prev))
	if err != nil {
		return fmt.Errorf("append history of %s %s: %w", k.name, id, err)
	}
	return nil
}

const deltaCols = "entity_type, entity_id, version, op, changes, task_id, created_at, parent_hash, hash"

func scanDelta(sc store.Scanner) (graphop.Delta, error) {
	var d graphop.Delta
	var changes string
	if err := sc.Scan(&d.EntityType, &d.EntityID, &d.Version, &d.Op, &changes, &d.TaskID, &d.CreatedAt, &d.ParentHash, &d.Hash); err != nil {
		return d, err
	}
	if err := json.Unmarshal([]byte(changes), &d.Changes); err != nil {
		return d, fmt.Errorf("history of %s v%d: stored changes: %w", d.EntityID, d.Version, err)
	}
	return d, nil
}

// History lists an entity's deltas newest first (paged) and, when
// req.Version is set, reconstructs that version from its deltas.
func (s *Store) History(ctx context.Context, req *graphop.History) (*graphop.HistoryResult, error) {
	limit, offset := op.LimitOr(req.Limit, op.DefaultLimit), op.LimitOr(req.Offset, 0)
	res := &graphop.HistoryResult{ID: req.ID, Limit: limit, Offset: offset, Items: []graphop.Delta{}, Store: s.db.Layer()}
	err := s.r.QueryRowContext(ctx, `SELECT count(*), coalesce(max(version), 0), coalesce(max(entity_type), '') FROM graph_history WHERE entity_id = ?`,
		req.ID).Scan(&res.Total, &res.Version, &res.EntityType)
	if err != nil {
		return nil, fmt.Errorf("read history of %s: %w", req.ID, err)
	}
	if res.Total == 0 {
		return nil, op.NotFound("id", "atom or molecule", req.ID)
	}
	rows, err := s.r.QueryContext(ctx, "SELECT "+deltaCols+" FROM graph_history WHERE entity_id = ? ORDER BY version DESC LIMIT ? OFFSET ?", req.ID, limit, offset)
	if err != nil {
		return nil, fmt.Errorf("read history of %s: %w", req.ID, err)
	}
	defer rows.Close()
	for rows.Next() {
		d, err := scanDelta(rows)
		if err != nil {
			return nil, fmt.Errorf("read history of %s: %w", req.ID, err)
		}
		res.Items = append(res.Items, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read history of %s: %w", req.ID, err)
	}
	var lastOp string
	if err := s.r.QueryRowContext(ctx, `SELECT op FROM graph_history WHERE entity_id = ? AND version = ?`, req.ID, res.Version).Scan(&lastOp); err != nil {
		return nil, fmt.Errorf("read history of %s: %w", req.ID, err)
	}
	res.Deleted = lastOp == "delete"
	if req.Version != nil {
		state, err := s.reconstruct(ctx, req.ID, *req.Version, res)
		if err != nil {
			return nil, err
		}
		res.State = state
	}
	return res, nil
}

// reconstruct rebuilds version v of an entity from its deltas.
func (s *Store) reconstruct(ctx context.Context, id string, v int, h *graphop.HistoryResult) (any, error) {
	if v > h.Version {
		return nil, op.Invalid("version", "%s %s has versions 1-%d, not %d", h.EntityType, id, h.Version, v)
	}
	rows, err := s.r.QueryContext(ctx, "SELECT "+deltaCols+" FROM graph_history WHERE entity_id = ? AND version <= ? ORDER BY version", id, v)
	if err != nil {
		return nil, fmt.Errorf("read history of %s: %w", id, err)
	}
	defer rows.Close()
	state := map[string]any{}
	var last graphop.Delta
	for rows.Next() {
		if last, err = scanDelta(rows); err != nil {
			return nil, err
		}
		for f, ch := range last.Changes {
			state[f] = ch[1]
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read history of %s: %w", id, err)
	}
	if last.Op == "delete" {
		return nil, op.Invalid("version", "version %d of %s %s is its deletion (tombstone); ask for version %d", v, h.EntityType, id, v-1)
	}
	if h.EntityType == graphop.EntityMolecule {
		return fromState(molecules, id, v, state, s.db.Layer())
	}
	return fromState(atoms, id, v, state, s.db.Layer())
}

// fromState turns a state map back into an entity of kind k.
func fromState[T any](k *kind[T], id string, version int, state map[string]any, layer string) (any, error) {
	full := map[string]any{"id": id, "version": version}
	for f, v := range state {
		full[f] = v
	}
	b, err := json.Marshal(full)
	if err != nil {
		return nil, fmt.Errorf("rebuild %s %s v%d: %w", k.name, id, version, err)
	}
	e := k.zero()
	if err := json.Unmarshal(b, e); err != nil {
		return nil, fmt.Errorf("rebuild %s %s v%d: %w", k.name, id, version, err)
	}
	*k.fields(e).store = layer
	return e, nil
}
