package vector

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/pi-actors/pi-actors/internal/config"
	"github.com/pi-actors/pi-actors/knowledge/embed"
	"github.com/pi-actors/pi-actors/knowledge/store"
)

// Embedding bounds.
const (
	embedBatch    = 64
	embedMaxText  = 8 << 10 // bytes of a node's text that are embedded
	embedRetry    = 30 * time.Second
	embedPendingQ = `FROM vg_nodes n WHERE NOT EXISTS (SELECT 1 FROM vg_vectors v WHERE v.seq = n.seq AND v.embedder = ?)`
)

// NewEmbedder returns the embedder [knowledge.embedder] configures: the
// local one when url is empty, else the OpenAI-compatible one (its API
// key read from the environment variable api_key_env names).
func NewEmbedder(c config.KnowledgeEmbedder) (embed.Embedder, error) {
	if c.URL == "" {
		return embed.NewLocal(), nil
	}
	key := ""
	if c.APIKeyEnv != "" {
		if key = os.Getenv(c.APIKeyEnv); key == "" {
			return nil, fmt.Errorf("knowledge embedder: %w: environment variable %s (knowledge.embedder.api_key_env) is empty", embed.ErrConfig, c.APIKeyEnv)
		}
	}
	e, err := embed.NewOpenAI(embed.OpenAIOptions{URL: c.URL, Model: c.Model, APIKey: key, Dim: c.Dim})
	if err != nil {
		return nil, fmt.Errorf("knowledge embedder: %w", err)
	}
	return e, nil
}

// embedText is what a node's vector is made from: name, path, content
// (bounded).
func embedText(name, path, content string) string {
	if len(content) > embedMaxText {
		content = content[:embedMaxText]
	}
	var b strings.Builder
	b.Grow(len(name) + len(path) + len(content) + 2)
	b.WriteString(name)
	b.WriteByte('\n')
	if path != "" {
		b.WriteString(path)
		b.WriteByte('\n')
	}
	b.WriteString(content)
	return b.String()
}

// wake asks the embedding worker to look for nodes without a vector of
// the current embedder.
func (g *mirror) wake() {
	select {
	case g.kick <- struct{}{}:
	default:
	}
}

// embedLoop is the background embedding worker: after a wake it embeds,
// in batches, every node whose vector is missing or was made by another
// embedder (a switch of embedders re-embeds the whole store), replacing
// old vectors. A failing embedder is retried after embedRetry.
func (g *mirror) embedLoop() {
	defer g.wg.Done()
	var retry <-chan time.Time
	for {
		select {
		case <-g.ctx.Done():
			return
		case <-g.kick:
		case <-retry:
		}
		retry = nil
		if err := g.embedPending(g.ctx); err != nil && g.ctx.Err() == nil {
			g.setEmbedError(err)
			retry = time.After(embedRetry)
		}
	}
}

func (g *mirror) setEmbedError(err error) {
	g.emu.Lock()
	defer g.emu.Unlock()
	g.eprog.Running = false
	g.eprog.Error = err.Error()
}

func (g *mirror) pendingCount(ctx context.Context) (int, error) {
	var n int
	err := g.s.r.QueryRowContext(ctx, `SELECT count(*) `+embedPendingQ, g.emb.ID()).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count nodes to embed: %w", err)
	}
	return n, nil
}

func (g *mirror) embedPending(ctx context.Context) error {
	total, err := g.pendingCount(ctx)
	if err != nil || total == 0 {
		return err
	}
	g.emu.Lock()
	g.eprog.Running, g.eprog.Done, g.eprog.Total, g.eprog.Error = true, 0, total, ""
	g.emu.Unlock()
	var after int64
	for {
		n, last, err := g.embedBatch(ctx, after)
		if err != nil {
			return err
		}
		if n == 0 {
			break
		}
		after = last
		g.emu.Lock()
		g.eprog.Done += n
		g.eprog.Total = max(g.eprog.Total, g.eprog.Done)
		g.emu.Unlock()
		if err := g.refresh(ctx, true); err != nil {
			return err
		}
	}
	g.emu.Lock()
	g.eprog.Running = false
	g.emu.Unlock()
	return nil
}

// embedBatch embeds the next batch of pending nodes after seq after and
// writes their vectors; it returns how many and the last seq.
func (g *mirror) embedBatch(ctx context.Context, after int64) (int, int64, error) {
	rows, err := g.s.r.QueryContext(ctx, `SELECT n.seq, n.domain, n.type, n.name, n.path, n.content `+embedPendingQ+
		` AND n.seq > ? ORDER BY n.seq LIMIT ?`, g.emb.ID(), after, embedBatch)
	if err != nil {
		return 0, 0, fmt.Errorf("read nodes to embed: %w", err)
	}
	var seqs []int64
	var domains, types, texts []string
	for rows.Next() {
		var seq int64
		var d, typ, name, path, content string
		if err := rows.Scan(&seq, &d, &typ, &name, &path, &content); err != nil {
			rows.Close()
			return 0, 0, fmt.Errorf("read nodes to embed: %w", err)
		}
		seqs, domains, types = append(seqs, seq), append(domains, d), append(types, typ)
		texts = append(texts, embedText(name, path, content))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, 0, fmt.Errorf("read nodes to embed: %w", err)
	}
	if len(seqs) == 0 {
		return 0, 0, nil
	}
	vecs, err := g.emb.Embed(ctx, texts)
	if err != nil {
		return 0, 0, fmt.Errorf("embed with %s: %w", g.emb.ID(), err)
	}
	_, err = g.s.db.Write(ctx, func(tx *store.Tx) (any, error) {
		for i, seq := range seqs {
			if err := putVector(ctx, tx, seq, domains[i], types[i], g.emb.ID(), vecs[i]); err != nil {
				return nil, err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM vg_vectors WHERE seq = ? AND embedder != ?`, seq, g.emb.ID()); err != nil {
				return nil, fmt.Errorf("drop old vector of node %d: %w", seq, err)
			}
		}
		return nil, nil
	})
	if err != nil {
		return 0, 0, err
	}
	return len(seqs), seqs[len(seqs)-1], nil
}

// putVector stores a node's vector of embedder (unit length), unless the
// node already has one of that embedder.
func putVector(ctx context.Context, tx *store.Tx, seq int64, domain, typ, embedder string, v []float32) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO vg_vectors(seq, domain, type, embedder, dim, vec) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT(seq, embedder) DO NOTHING`, seq, domain, typ, embedder, len(v), encodeVec(unit(v)))
	if err != nil {
		return fmt.Errorf("store vector of node %d: %w", seq, err)
	}
	return nil
}
