package vector

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/api/vectorop"
	"github.com/pi-actors/pi-actors/knowledge/embed"
	"github.com/pi-actors/pi-actors/knowledge/filter"
	"github.com/pi-actors/pi-actors/knowledge/store"
)

// nodeIn is a node to write.
type nodeIn struct {
	key                string // natural key; "" for none
	domain, typ, name  string
	path               string
	lineStart, lineEnd int
	runID              string
	content            string
	hash               string // default sha256 of content
	meta               map[string]any
	trust              int
	verified           bool
	source, ref, task  string // provenance
	vec                []float32

	// set by insertNode
	id  string
	seq int64
}

func hashOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// vtx is a write transaction of the vector graph: it collects topic keys
// and writes them once, deduplicated, before commit.
type vtx struct {
	*store.Tx
	s      *Store
	topics map[topicKey]int64
}

type topicKey struct {
	domain string
	key    uint64
}

// embedNodes gives each node without a vector one when the embedder is
// local (cheap); other embedders leave them to the background worker.
func (s *Store) embedNodes(ns []*nodeIn) {
	local, ok := s.opts.Embedder.(*embed.Local)
	if !ok {
		return
	}
	for _, n := range ns {
		if n.vec == nil {
			n.vec = local.Vector(embedText(n.name, n.path, n.content))
		}
	}
}

// writeGraph runs fn in one write transaction of the vector graph, then
// applies the new vectors and topic keys to the loaded indexes (or wakes
// the embedding worker when the embedder is not local).
func (s *Store) writeGraph(ctx context.Context, fn func(tx *vtx) (any, error)) (any, error) {
	v, err := s.db.Write(ctx, func(w *store.Tx) (any, error) {
		tx := &vtx{Tx: w, s: s, topics: map[topicKey]int64{}}
		v, err := fn(tx)
		if err != nil {
			return nil, err
		}
		return v, tx.flushTopics(ctx)
	})
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	g := s.mirror
	if g == nil && !s.closed {
		if _, local := s.opts.Embedder.(*embed.Local); !local {
			g = newMirror(s)
			s.mirror = g
		}
	}
	s.mu.Unlock()
	if g != nil {
		if !g.inline {
			g.wake()
		}
		if g.loadedFast() {
			if err := g.refresh(ctx, true); err != nil {
				return nil, err
			}
		}
	}
	return v, nil
}

// insertNode writes one node, its provenance, vector and topic keys.
// n.id may be preset (a supersede that must point at it first).
func (tx *vtx) insertNode(ctx context.Context, n *nodeIn, now string) error {
	if n.id == "" {
		n.id = store.NewID()
	}
	if n.hash == "" {
		n.hash = hashOf(n.content)
	}
	meta := "{}"
	if len(n.meta) > 0 {
		meta = store.Canonical(n.meta)
	}
	var key any
	if n.key != "" {
		key = n.key
	}
	err := tx.QueryRowContext(ctx, `INSERT INTO vg_nodes(id, key, domain, type, name, path, line_start, line_end, run_id,
		content, content_hash, metadata, trust, verified, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
		n.id, key, n.domain, n.typ, n.name, n.path, n.lineStart, n.lineEnd, n.runID, n.content, n.hash, meta,
		n.trust, n.verified, now, now).Scan(&n.seq)
	if err != nil {
		return fmt.Errorf("insert node %q: %w", n.name, err)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO vg_provenance(node_id, source, ref, task_id, at, verified) VALUES (?, ?, ?, ?, ?, ?)`,
		n.id, n.source, n.ref, n.task, now, n.verified)
	if err != nil {
		return fmt.Errorf("insert provenance of %q: %w", n.name, err)
	}
	if n.vec != nil {
		if err := putVector(ctx, tx.Tx, n.seq, n.domain, n.typ, tx.s.opts.Embedder.ID(), n.vec); err != nil {
			return err
		}
	}
	for _, k := range filter.Tokens(n.name + " " + n.path + " " + n.content) {
		tk := topicKey{n.domain, k}
		if _, ok := tx.topics[tk]; !ok {
			tx.topics[tk] = n.seq
		}
	}
	return nil
}

// flushTopics writes the collected topic keys, many per statement.
func (tx *vtx) flushTopics(ctx context.Context) error {
	const per = 300
	args := make([]any, 0, 3*per)
	flush := func() error {
		if len(args) == 0 {
			return nil
		}
		q := `INSERT OR IGNORE INTO vg_topics(domain, key, seq) VALUES (?, ?, ?)` + strings.Repeat(", (?, ?, ?)", len(args)/3-1)
		_, err := tx.Tx.Tx.ExecContext(ctx, q, args...) // uncached: the statement varies
		args = args[:0]
		if err != nil {
			return fmt.Errorf("insert topic keys: %w", err)
		}
		return nil
	}
	for tk, seq := range tx.topics {
		args = append(args, tk.domain, int64(tk.key), seq)
		if len(args) == 3*per {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// addEdge records from --typ--> to (once).
func (tx *vtx) addEdge(ctx context.Context, from, typ, to, now string) error {
	_, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO vg_edges(source_id, type, target_id, created_at) VALUES (?, ?, ?, ?)`,
		from, typ, to, now)
	if err != nil {
		return fmt.Errorf("insert edge %s %s %s: %w", from, typ, to, err)
	}
	return nil
}

// supersede marks old as superseded by newID and records newID
// --supersedes--> old.
func (tx *vtx) supersede(ctx context.Context, old, newID, now string) error {
	_, err := tx.ExecContext(ctx, `UPDATE vg_nodes SET superseded_by = ?, updated_at = ? WHERE id = ? AND superseded_by IS NULL`,
		newID, now, old)
	if err != nil {
		return fmt.Errorf("supersede node %s: %w", old, err)
	}
	return tx.addEdge(ctx, newID, "supersedes", old, now)
}

// liveByKey returns the id of the live node with key ("" when none).
func liveByKey(ctx context.Context, q store.Querier, key string) (id, hash string, err error) {
	err = q.QueryRowContext(ctx, `SELECT id, content_hash FROM vg_nodes WHERE key = ? AND superseded_by IS NULL`, key).Scan(&id, &hash)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", nil
	}
	if err != nil {
		return "", "", fmt.Errorf("find node %s: %w", key, err)
	}
	return id, hash, nil
}

const nodeCols = `n.id, n.domain, n.type, n.name, n.path, n.created_at, coalesce(n.superseded_by, ''), n.line_start, n.line_end,
	n.content, n.content_hash, n.metadata, n.trust, n.verified, n.updated_at,
	coalesce((SELECT v.embedder FROM vg_vectors v WHERE v.seq = n.seq ORDER BY v.vid DESC LIMIT 1), '')`

func scanNode(sc store.Scanner) (*vectorop.Node, error) {
	var n vectorop.Node
	var meta string
	err := sc.Scan(&n.ID, &n.Domain, &n.Type, &n.Name, &n.Path, &n.CreatedAt, &n.SupersededBy, &n.LineStart, &n.LineEnd,
		&n.Content, &n.ContentHash, &meta, &n.Trust, &n.Verified, &n.UpdatedAt, &n.Embedder)
	if err != nil {
		return nil, err
	}
	if meta != "{}" && meta != "" {
		if err := json.Unmarshal([]byte(meta), &n.Metadata); err != nil {
			return nil, fmt.Errorf("node %s: stored metadata: %w", n.ID, err)
		}
	}
	return &n, nil
}

// loadNode reads one node; NOT_FOUND naming field when there is none.
func (s *Store) loadNode(ctx context.Context, q store.Querier, field, id string) (*vectorop.Node, error) {
	n, err := scanNode(q.QueryRowContext(ctx, `SELECT `+nodeCols+` FROM vg_nodes n WHERE n.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, op.NotFound(field, "node", id)
	}
	if err != nil {
		return nil, fmt.Errorf("read node %s: %w", id, err)
	}
	n.Store = s.db.Layer()
	return n, nil
}

const refCols = `n.id, n.domain, n.type, n.name, n.path, n.created_at, coalesce(n.superseded_by, '')`

func scanRef(sc store.Scanner) (vectorop.NodeRef, error) {
	var r vectorop.NodeRef
	err := sc.Scan(&r.ID, &r.Domain, &r.Type, &r.Name, &r.Path, &r.CreatedAt, &r.SupersededBy)
	return r, err
}

// queryRefs runs a query selecting refCols.
func queryRefs(ctx context.Context, q store.Querier, query string, args ...any) ([]vectorop.NodeRef, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read nodes: %w", err)
	}
	defer rows.Close()
	out := []vectorop.NodeRef{}
	for rows.Next() {
		r, err := scanRef(rows)
		if err != nil {
			return nil, fmt.Errorf("read nodes: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
