package vector

import (
	"context"
	"fmt"

	"github.com/pi-actors/pi-actors/knowledge/api/vectorop"
)

// loadTopics rebuilds every domain's filter from vg_topics.
func (g *mirror) loadTopics(ctx context.Context) error {
	keys := map[string][]uint64{}
	err := g.s.r.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM vg_topics`).Scan(&g.topicSeq)
	if err != nil {
		return fmt.Errorf("load topics: %w", err)
	}
	rows, err := g.s.r.QueryContext(ctx, `SELECT domain, key FROM vg_topics WHERE seq <= ?`, g.topicSeq)
	if err != nil {
		return fmt.Errorf("load topics: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var d string
		var k int64
		if err := rows.Scan(&d, &k); err != nil {
			return fmt.Errorf("load topics: %w", err)
		}
		keys[d] = append(keys[d], uint64(k))
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load topics: %w", err)
	}
	for _, d := range vectorop.AllDomains {
		if err := g.filters.Set(d).Rebuild(keys[d]); err != nil {
			return err
		}
	}
	return nil
}

// catchUpTopics adds the topic keys written since the last look; when a
// domain's pending keys grow past an eighth of its filter, the filter is
// rebuilt in the background.
func (g *mirror) catchUpTopics(ctx context.Context) error {
	rows, err := g.s.r.QueryContext(ctx, `SELECT domain, key, seq FROM vg_topics WHERE seq > ?`, g.topicSeq)
	if err != nil {
		return fmt.Errorf("read topics: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var d string
		var k, seq int64
		if err := rows.Scan(&d, &k, &seq); err != nil {
			return fmt.Errorf("read topics: %w", err)
		}
		g.filters.Set(d).Add(uint64(k))
		g.topicSeq = max(g.topicSeq, seq)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read topics: %w", err)
	}
	for _, d := range vectorop.AllDomains {
		st := g.filters.Set(d).Stats()
		if st.ExactKeys > 4096 && st.ExactKeys > st.Keys/8 {
			g.wg.Add(1)
			go g.rebuildFilter(d)
		}
	}
	return nil
}

func (g *mirror) rebuildFilter(d string) {
	defer g.wg.Done()
	rows, err := g.s.r.QueryContext(g.ctx, `SELECT key FROM vg_topics WHERE domain = ?`, d)
	if err != nil {
		return
	}
	defer rows.Close()
	var keys []uint64
	for rows.Next() {
		var k int64
		if rows.Scan(&k) != nil {
			return
		}
		keys = append(keys, uint64(k))
	}
	if rows.Err() == nil {
		g.filters.Set(d).Rebuild(keys)
	}
}
