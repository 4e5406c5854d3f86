package vector

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/pi-actors/pi-actors/internal/testproc"
	"github.com/pi-actors/pi-actors/knowledge/api/graphop"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/api/vectorop"
	"github.com/pi-actors/pi-actors/knowledge/graph"
	"github.com/pi-actors/pi-actors/knowledge/knowledgetest"
	"github.com/pi-actors/pi-actors/knowledge/store"
)

func TestMain(m *testing.M) {
	testproc.NoRaceExitSleep()
	if os.Getenv(testproc.EnvVar) != "" {
		os.Exit(helperMain(os.Args[1:]))
	}
	testproc.Watchdog()
	os.Exit(m.Run())
}

// env is one test's project store: its vector graph, and its knowledge
// graph for the atoms code nodes link to, over <repo>/.pi/knowledge.db
// with a project rooted at the repo; a caller in the repo with a task id.
type env struct {
	knowledgetest.Ops
	t      *testing.T
	dir    string
	repo   string
	path   string // the store file
	s      *Store
	g      *graph.Store
	caller store.Caller
}

// openDB opens the store file at path, closed when the test ends.
func openDB(t testing.TB, path string, layer string) *store.DB {
	t.Helper()
	db, err := store.Open(path, store.Options{Layer: layer})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// openStore opens the vector graph of the store at path; it is closed
// (before its file) when the test ends, and may be closed before.
func openStore(t testing.TB, path string, opts Options) *Store {
	t.Helper()
	s := New(openDB(t, path, ""), opts)
	t.Cleanup(func() { s.Close() })
	return s
}

func newEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(repo, store.ProjectFile)
	db := openDB(t, path, op.StoreProject)
	g := graph.New(db)
	if _, err := g.EnsureProject(t.Context(), repo, ""); err != nil {
		t.Fatal(err)
	}
	s := New(db, Options{})
	t.Cleanup(func() { s.Close() })
	e := &env{t: t, dir: dir, repo: repo, path: path, s: s, g: g, caller: store.Caller{Cwd: repo, RunID: "r1"}}
	e.Ops = knowledgetest.Ops{T: t, Exec: e.exec}
	return e
}

// exec runs a decoded request on the env's store: the vector graph's
// operations (as package knowledge's Layers does for one store) and
// manage_graph (atoms to link to).
func (e *env) exec(ctx context.Context, req op.Request) (any, error) {
	s, c := e.s, e.caller
	switch r := req.(type) {
	case *vectorop.Search:
		return s.Search(ctx, r)
	case *vectorop.SearchAll:
		return s.SearchAll(ctx, r)
	case *vectorop.SmartSearch:
		return s.SmartSearch(ctx, r)
	case *vectorop.Recall:
		return Recall(ctx, []*Store{s}, r)
	case *vectorop.NodeAdd:
		return s.AddNode(ctx, c, r)
	case *vectorop.NodeGet:
		return s.NodeGet(ctx, r)
	case *vectorop.Traverse:
		return s.Traverse(ctx, r)
	case *vectorop.Conflicts:
		return s.Conflicts(ctx, r)
	case *graphop.ManageGraph:
		return e.g.ManageGraph(ctx, c, r)
	}
	return nil, fmt.Errorf("%s is not an operation of this harness", req.Op())
}

// status is the vector graph's status.
func status(t testing.TB, s *Store) *vectorop.VectorStatus {
	t.Helper()
	st, err := s.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

var mustJSON = knowledgetest.JSON
