package vector

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pi-actors/pi-actors/internal/config"
	"github.com/pi-actors/pi-actors/knowledge/api/vectorop"
	"github.com/pi-actors/pi-actors/knowledge/embed"
	"github.com/pi-actors/pi-actors/knowledge/store"
)

// addCode adds n code nodes about numbered topics, one call each.
func addCode(t *testing.T, s *Store, from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		req := &vectorop.NodeAdd{Domain: "code", Type: "function", Name: fmt.Sprintf("Handler%d", i),
			Content: fmt.Sprintf("func Handler%d() handles topic%d requests for shard %d", i, i, i%7), Source: "code", Verified: true}
		if e := req.Validate(); e != nil {
			t.Fatal(e)
		}
		if _, err := s.AddNode(t.Context(), store.Caller{}, req); err != nil {
			t.Fatal(err)
		}
	}
}

func topName(t *testing.T, s *Store, q string) string {
	t.Helper()
	r, err := s.Search(t.Context(), &vectorop.Search{Query: q, Domain: "code"})
	if err != nil || len(r.Hits) == 0 {
		t.Fatalf("search %q: %v %s", q, err, mustJSON(r))
	}
	return r.Hits[0].Name
}

func loaded(t *testing.T, s *Store) *mirror {
	t.Helper()
	g, err := s.load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// A domain's HNSW graph is written next to the store and loaded on the
// next open (no rebuild); vectors written while it was not loaded are
// added on load; a damaged file is rebuilt from SQLite.
func TestIndexPersistsAcrossReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k.db")
	opts := Options{ExactBelow: 50}
	open := func() *Store { return openStore(t, path, opts) }
	s := open()
	addCode(t, s, 0, 120)
	g := loaded(t, s)
	if err := s.SyncIndexes(t.Context()); err != nil {
		t.Fatal(err)
	}
	if g.builds.Load() != 1 || g.indexes()["code"].mode() != "hnsw" {
		t.Fatalf("builds %d, mode %s", g.builds.Load(), g.indexes()["code"].mode())
	}
	want := topName(t, s, "topic77 requests")
	if want != "Handler77" {
		t.Fatalf("top hit %s", want)
	}
	s.Close()
	file := indexPath(path, "code")
	if fi, err := os.Stat(file); err != nil || fi.Size() == 0 {
		t.Fatalf("index file: %v", err)
	}

	s = open()
	g = loaded(t, s)
	if g.builds.Load() != 0 || g.indexes()["code"].mode() != "hnsw" || g.indexes()["code"].len() != 120 {
		t.Fatalf("reopen: builds %d, mode %s, %d vectors", g.builds.Load(), g.indexes()["code"].mode(), g.indexes()["code"].len())
	}
	if got := topName(t, s, "topic77 requests"); got != want {
		t.Fatalf("after reopen top hit %s", got)
	}
	addCode(t, s, 120, 10) // added to the loaded graph, written on close
	s.Close()

	s = open()
	addCode(t, s, 130, 5) // written while the graph is not loaded
	s.Close()
	s = open()
	g = loaded(t, s)
	if g.builds.Load() != 0 || g.indexes()["code"].len() != 135 || topName(t, s, "topic133 requests") != "Handler133" {
		t.Fatalf("catch-up: builds %d, %d vectors", g.builds.Load(), g.indexes()["code"].len())
	}
	s.Close()

	fi, _ := os.Stat(file)
	if err := os.Truncate(file, fi.Size()/2); err != nil {
		t.Fatal(err)
	}
	s = open()
	g = loaded(t, s)
	if err := s.SyncIndexes(t.Context()); err != nil {
		t.Fatal(err)
	}
	if g.builds.Load() != 1 || g.indexes()["code"].len() != 135 || topName(t, s, "topic77 requests") != want {
		t.Fatalf("rebuild: builds %d, %d vectors", g.builds.Load(), g.indexes()["code"].len())
	}
}

// fakeEmbeddings is an OpenAI-compatible server whose vectors are the
// local embedder's in reverse order; its second request waits for
// release.
func fakeEmbeddings(t *testing.T, release chan struct{}) (*httptest.Server, *atomic.Int64) {
	var calls atomic.Int64
	local := embed.NewLocal()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		if calls.Add(1) == 2 && release != nil {
			<-release
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var out struct {
			Data []item `json:"data"`
		}
		for i, in := range req.Input {
			v := local.Vector(in)
			slices.Reverse(v)
			out.Data = append(out.Data, item{i, v})
		}
		json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Switching embedders re-embeds every node in the background, with its
// progress in the store's status; searches then use the new vectors.
func TestSwitchEmbedderReembeds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k.db")
	s := openStore(t, path, Options{})
	addCode(t, s, 0, 130)
	s.Close()

	release := make(chan struct{})
	srv, calls := fakeEmbeddings(t, release)
	emb, err := embed.NewOpenAI(embed.OpenAIOptions{URL: srv.URL, Model: "fake"})
	if err != nil {
		t.Fatal(err)
	}
	s = openStore(t, path, Options{Embedder: emb})
	status := func() *vectorop.VectorStatus { return status(t, s) }
	if v := status(); v.Pending != 130 || v.Embedder != emb.ID() {
		t.Fatalf("before: %s", mustJSON(v))
	}
	loaded(t, s) // starts the worker
	waitFor(t, "progress 64/130", func() bool { e := status().Embedding; return e.Running && e.Done == 64 && e.Total == 130 })
	close(release)
	waitFor(t, "re-embedding to finish", func() bool { v := status(); return v.Pending == 0 && !v.Embedding.Running })
	v := status()
	if v.Embedding.Done != 130 || v.Embedding.Error != "" || calls.Load() != 3 {
		t.Fatalf("after: %s, %d calls", mustJSON(v), calls.Load())
	}
	if got := topName(t, s, "topic77 requests"); got != "Handler77" {
		t.Fatalf("top hit with the new embedder: %s", got)
	}
	n, _ := s.NodeGet(t.Context(), &vectorop.NodeGet{ID: firstID(t, s)})
	if n.Node.Embedder != emb.ID() {
		t.Fatalf("node embedder %q", n.Node.Embedder)
	}
	var old int
	s.r.QueryRow(`SELECT count(*) FROM vg_vectors WHERE embedder != ?`, emb.ID()).Scan(&old)
	if old != 0 {
		t.Fatalf("%d old vectors left", old)
	}
	// A new node with a remote embedder is embedded in the background.
	addCode(t, s, 500, 1)
	waitFor(t, "the new node's vector", func() bool { return status().Pending == 0 })
	waitFor(t, "the new node in the index", func() bool { return topName(t, s, "topic500 requests") == "Handler500" })
}

func firstID(t *testing.T, s *Store) string {
	var id string
	if err := s.r.QueryRow(`SELECT id FROM vg_nodes ORDER BY seq LIMIT 1`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// NewEmbedder follows [knowledge.embedder]: local without a url, the
// OpenAI-compatible one with it, its key from the named variable.
func TestNewEmbedder(t *testing.T) {
	e, err := NewEmbedder(config.KnowledgeEmbedder{})
	if err != nil || e.ID() != embed.LocalID {
		t.Fatalf("default: %v %v", e, err)
	}
	t.Setenv("PI_TEST_EMBED_KEY", "")
	_, err = NewEmbedder(config.KnowledgeEmbedder{URL: "http://localhost:11434", Model: "m", APIKeyEnv: "PI_TEST_EMBED_KEY"})
	if !errors.Is(err, embed.ErrConfig) || !strings.Contains(err.Error(), "PI_TEST_EMBED_KEY") {
		t.Fatalf("empty key variable: %v", err)
	}
	t.Setenv("PI_TEST_EMBED_KEY", "sk-test")
	e, err = NewEmbedder(config.KnowledgeEmbedder{URL: "http://localhost:11434", Model: "nomic-embed-text", APIKeyEnv: "PI_TEST_EMBED_KEY", Dim: 768})
	if err != nil || e.ID() != "openai:nomic-embed-text@localhost:11434" || e.Dim() != 768 {
		t.Fatalf("openai: %v %v", e, err)
	}
}

// A graph write killed mid-way (kill -9) leaves its temp file
// .<db>.<domain>.hnsw.tmp-<digits>, unlocked; the next load removes it.
// A temp file another process is writing (locked), a name that is not
// exactly ours and another store's temp file stay.
func TestStaleIndexTempRemovedOnLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "k.db")
	s := openStore(t, path, Options{ExactBelow: 50})
	addCode(t, s, 0, 60)
	if err := s.SyncIndexes(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.Close()
	write := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, make([]byte, 1<<16), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	stale := []string{write(".k.db.code.hnsw.tmp-3141592653"), write(".k.db.history.hnsw.tmp-7")}
	kept := []string{write(".k.db.code.hnsw.tmp-12x"), write(".k.db.code.hnsw.tmp-"), write(".other.db.code.hnsw.tmp-5"),
		write(".k.db.code.hnsw.tmp-5.bak"), write("k.db.code.hnsw.tmp-5")}
	busy := write(".k.db.code.hnsw.tmp-99")
	f, err := os.Open(busy)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	kept = append(kept, busy)

	s = openStore(t, path, Options{ExactBelow: 50})
	g := loaded(t, s)
	if g.indexes()["code"].mode() != "hnsw" || g.builds.Load() != 0 {
		t.Fatalf("graph not loaded from its file: %s, %d builds", g.indexes()["code"].mode(), g.builds.Load())
	}
	for _, p := range stale {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("stale %s: %v", filepath.Base(p), err)
		}
	}
	for _, p := range kept {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed: %v", filepath.Base(p), err)
		}
	}
	if _, err := os.Stat(indexPath(path, "code")); err != nil {
		t.Fatal(err)
	}
}
