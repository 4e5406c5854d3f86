package vector

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pi-actors/pi-actors/knowledge/api/vectorop"
	"github.com/pi-actors/pi-actors/knowledge/embed"
	"github.com/pi-actors/pi-actors/knowledge/filter"
)

// refreshEvery bounds how often a search checks SQLite for vectors and
// topic keys that other processes wrote (this process's own writes are
// applied at once).
const refreshEvery = 200 * time.Millisecond

// typeCodes numbers every node type (all domains) for the indexes.
var typeCodes = func() map[string]uint8 {
	m := map[string]uint8{}
	for _, d := range vectorop.AllDomains {
		for _, t := range vectorop.NodeTypes[d] {
			m[t] = uint8(len(m))
		}
	}
	return m
}()

// mirror is a store's vector graph in memory: one domainIndex per domain, the
// topic filters, and the background workers (graph builds, embedding).
// It mirrors SQLite, which stays the truth: everything here is rebuilt
// from it when missing or stale.
type mirror struct {
	s          *Store
	emb        embed.Embedder
	inline     bool // the embedder is local: embed on the write path
	exactBelow int

	mu       sync.Mutex // serialises loading and catch-up
	loaded   bool
	idx      map[string]*domainIndex
	filters  filter.Domains
	topicSeq int64 // highest vg_topics.seq applied to the filters
	delGen   int64 // vg_meta del:<embedder> when loaded
	checked  atomic.Int64

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	kick   chan struct{}
	emu    sync.Mutex
	eprog  vectorop.EmbedProgress

	// counters for tests: vector searches, node row reads, graph builds.
	searches atomic.Int64
	rowReads atomic.Int64
	builds   atomic.Int64
}

// load returns the store's vector graph in memory, loaded and caught up with
// SQLite (at most every refreshEvery for other processes' writes).
func (s *Store) load(ctx context.Context) (*mirror, error) {
	s.mu.Lock()
	g := s.mirror
	if g == nil {
		if s.closed {
			s.mu.Unlock()
			return nil, fmt.Errorf("knowledge store %s is closed", s.db.Path())
		}
		g = newMirror(s)
		s.mirror = g
	}
	s.mu.Unlock()
	return g, g.refresh(ctx, false)
}

func newMirror(s *Store) *mirror {
	g := &mirror{s: s, emb: s.opts.Embedder, exactBelow: s.opts.ExactBelow, kick: make(chan struct{}, 1)}
	_, g.inline = g.emb.(*embed.Local)
	g.ctx, g.cancel = context.WithCancel(context.Background())
	g.wg.Add(1)
	go g.embedLoop()
	return g
}

// close stops the workers and writes every graph that changed.
func (g *mirror) close() error {
	g.cancel()
	g.wg.Wait()
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.persistLocked()
}

func (g *mirror) persistLocked() error {
	if !g.loaded {
		return nil
	}
	var errs []error
	for _, d := range vectorop.AllDomains {
		vi := g.idx[d]
		vi.mu.RLock()
		dirty := vi.dirty
		vi.mu.RUnlock()
		if dirty {
			errs = append(errs, writeIndex(indexPath(g.s.db.Path(), d), g.emb.ID(), g.delGen, vi))
		}
	}
	return errors.Join(errs...)
}

// SyncIndexes waits for background graph builds and writes every domain
// graph that changed next to the store, so the next Open loads them
// instead of rebuilding. Close does the same.
func (s *Store) SyncIndexes(ctx context.Context) error {
	g, err := s.load(ctx)
	if err != nil {
		return err
	}
	for {
		building := false
		for _, vi := range g.idx {
			building = building || vi.mode() == "building"
		}
		if !building {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.persistLocked()
}

// refresh loads the indexes on first use and then applies what SQLite
// gained since: vectors with a higher vid, topic keys with a higher seq.
// A changed delete generation reloads everything. force skips the
// time-based throttle (after this process's own writes).
func (g *mirror) refresh(ctx context.Context, force bool) error {
	if !force && g.loadedFast() && time.Since(time.Unix(0, g.checked.Load())) < refreshEvery {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	var maxVid, maxSeq, delGen int64
	err := g.s.r.QueryRowContext(ctx, `SELECT coalesce((SELECT max(vid) FROM vg_vectors), 0),
		coalesce((SELECT max(seq) FROM vg_topics), 0),
		coalesce((SELECT value FROM vg_meta WHERE key = ?), 0)`, "del:"+g.emb.ID()).Scan(&maxVid, &maxSeq, &delGen)
	if err != nil {
		return fmt.Errorf("refresh vectors of %s: %w", g.s.db.Path(), err)
	}
	if !g.loaded || delGen != g.delGen {
		if err := g.loadLocked(ctx, delGen); err != nil {
			return err
		}
	}
	for _, d := range vectorop.AllDomains {
		if err := g.catchUp(ctx, g.idx[d], maxVid); err != nil {
			return err
		}
	}
	if maxSeq > g.topicSeq {
		if err := g.catchUpTopics(ctx); err != nil {
			return err
		}
	}
	g.checked.Store(time.Now().UnixNano())
	g.startBuilds()
	return nil
}

func (g *mirror) loadedFast() bool { return g.checked.Load() != 0 }

// loadLocked (re)builds the in-memory side: each domain's graph from its
// file when the file matches SQLite, the filters from vg_topics.
func (g *mirror) loadLocked(ctx context.Context, delGen int64) error {
	// Temp files of graph writes killed mid-way (kill -9) would stay for
	// ever; best effort: one that cannot be removed now is tried again at
	// the next load, and never fails it.
	_, _ = removeStaleTemps(g.s.db.Path())
	g.idx = map[string]*domainIndex{}
	for _, d := range vectorop.AllDomains {
		vi, err := g.loadDomain(ctx, d, delGen)
		if err != nil {
			return err
		}
		g.idx[d] = vi
	}
	g.delGen = delGen
	if err := g.loadTopics(ctx); err != nil {
		return err
	}
	g.loaded = true
	g.wake() // nodes without a vector of this embedder get one
	return nil
}

func (g *mirror) loadDomain(ctx context.Context, d string, delGen int64) (*domainIndex, error) {
	vi := &domainIndex{domain: d}
	accept := func(h indexHeader) bool {
		if h.embedder != g.emb.ID() || h.delGen != delGen {
			return false
		}
		var n int64
		err := g.s.r.QueryRowContext(ctx, `SELECT count(*) FROM vg_vectors WHERE embedder = ? AND domain = ? AND vid <= ?`,
			h.embedder, d, h.vid).Scan(&n)
		return err == nil && n == h.count
	}
	h, graph, err := readIndex(indexPath(g.s.db.Path(), d), accept)
	if err != nil {
		return vi, nil // missing or stale: rebuilt from SQLite by catch-up
	}
	vi.graph, vi.vid, vi.count, vi.dim = graph, h.vid, int(h.count), graph.Dim()
	for i, seq := range h.seqs {
		vi.setType(seq, h.codes[i])
	}
	return vi, nil
}

// catchUp adds the domain's vectors of the current embedder with a vid
// above what the index holds, in batches.
func (g *mirror) catchUp(ctx context.Context, vi *domainIndex, maxVid int64) error {
	vi.mu.RLock()
	from := vi.vid
	vi.mu.RUnlock()
	if from >= maxVid {
		return nil
	}
	rows, err := g.s.r.QueryContext(ctx, `SELECT vid, seq, vec, type FROM vg_vectors
		WHERE embedder = ? AND domain = ? AND vid > ? ORDER BY vid`, g.emb.ID(), vi.domain, from)
	if err != nil {
		return fmt.Errorf("load %s vectors: %w", vi.domain, err)
	}
	defer rows.Close()
	var seqs []uint64
	var codes []uint8
	var vecs [][]float32
	var vid int64
	flush := func() error {
		err := vi.add(seqs, codes, vecs, vid)
		seqs, codes, vecs = seqs[:0], codes[:0], vecs[:0]
		return err
	}
	for rows.Next() {
		var seq int64
		var blob []byte
		var typ string
		if err := rows.Scan(&vid, &seq, &blob, &typ); err != nil {
			return fmt.Errorf("load %s vectors: %w", vi.domain, err)
		}
		seqs, codes, vecs = append(seqs, uint64(seq)), append(codes, typeCodes[typ]), append(vecs, decodeVec(blob))
		if len(seqs) == 4096 {
			if err := flush(); err != nil {
				return fmt.Errorf("load %s vectors: %w", vi.domain, err)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load %s vectors: %w", vi.domain, err)
	}
	if err := flush(); err != nil {
		return fmt.Errorf("load %s vectors: %w", vi.domain, err)
	}
	vi.mu.Lock()
	vi.vid = max(vi.vid, maxVid)
	vi.mu.Unlock()
	return nil
}

// startBuilds starts a background graph build for each domain that
// outgrew the exact scan.
func (g *mirror) startBuilds() {
	for _, vi := range g.idx {
		if !vi.needsBuild(g.exactBelow) {
			continue
		}
		g.builds.Add(1)
		g.wg.Add(1)
		go func(vi *domainIndex) {
			defer g.wg.Done()
			if err := vi.build(); err != nil {
				g.setEmbedError(fmt.Errorf("build %s index: %w", vi.domain, err))
				return
			}
			g.mu.Lock()
			defer g.mu.Unlock()
			if g.loaded && g.idx[vi.domain] == vi {
				if err := writeIndex(indexPath(g.s.db.Path(), vi.domain), g.emb.ID(), g.delGen, vi); err != nil {
					g.setEmbedError(err)
				}
			}
		}(vi)
	}
}

// encodeVec is a vector as stored: float32 little endian.
func encodeVec(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

func decodeVec(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// unit scales v to unit length in place (a zero vector stays zero).
func unit(v []float32) []float32 {
	var s float64
	for _, f := range v {
		s += float64(f) * float64(f)
	}
	if s > 0 && math.Abs(s-1) > 1e-6 {
		inv := float32(1 / math.Sqrt(s))
		for i := range v {
			v[i] *= inv
		}
	}
	return v
}

// indexes returns the current per-domain indexes.
func (g *mirror) indexes() map[string]*domainIndex {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.idx
}
