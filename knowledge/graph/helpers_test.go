package graph

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/pi-actors/pi-actors/internal/testproc"
	"github.com/pi-actors/pi-actors/knowledge/api/graphop"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
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

// env is one test's project store: a graph over <repo>/.pi/knowledge.db
// with a project rooted at the repo, and a caller in the repo with a task
// id.
type env struct {
	knowledgetest.Ops
	t      *testing.T
	dir    string
	repo   string
	path   string // the store file
	g      *Store
	caller store.Caller
}

// openGraph opens the store at path and returns its graph (closed when
// the test ends).
func openGraph(t testing.TB, path string, opts store.Options) *Store {
	t.Helper()
	db, err := store.Open(path, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return New(db)
}

// openFile opens the store at path and returns its graph and the
// store's Close.
func openFile(path string) (*Store, func() error, error) {
	db, err := store.Open(path, store.Options{})
	if err != nil {
		return nil, nil, err
	}
	return New(db), db.Close, nil
}

func newEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(repo, store.ProjectFile)
	g := openGraph(t, path, store.Options{Layer: op.StoreProject})
	if _, err := g.EnsureProject(t.Context(), repo, ""); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, dir: dir, repo: repo, path: path, g: g, caller: store.Caller{Cwd: repo, RunID: "r1"}}
	e.Ops = knowledgetest.Ops{T: t, Exec: func(ctx context.Context, req op.Request) (any, error) { return e.g.exec(ctx, e.caller, req) }}
	return e
}

// exec runs a decoded knowledge graph request on s, as package
// knowledge's Layers does for one store.
func (s *Store) exec(ctx context.Context, c store.Caller, req op.Request) (any, error) {
	switch r := req.(type) {
	case *graphop.QueryGraph:
		return s.QueryGraph(ctx, c, r)
	case *graphop.ManageGraph:
		return s.ManageGraph(ctx, c, r)
	case *graphop.ManageChangelog:
		return s.ManageChangelog(ctx, c, r)
	case *graphop.ProjectCreate:
		return s.CreateProject(ctx, c, r)
	case *graphop.ProjectList:
		return s.Projects(ctx, r)
	case *graphop.History:
		return s.History(ctx, r)
	case *graphop.Verify:
		rep, err := s.Verify(ctx)
		if err != nil {
			return nil, err
		}
		return &graphop.VerifyResult{OK: rep.OK, Stores: []graphop.VerifyReport{*rep}}, nil
	case *graphop.TaskContext:
		paths, err := TaskPaths(r, c.Cwd)
		if err != nil {
			return nil, err
		}
		res, err := s.Context(ctx, c, r.ProjectID, paths, op.BoolOr(r.IncludeChangelog, true),
			op.LimitOr(r.ChangelogLimit, graphop.DefaultChangelogLimit))
		if err != nil {
			return nil, err
		}
		return &graphop.TaskContextResult{GraphContext: *res}, nil
	}
	return nil, fmt.Errorf("%s is not a knowledge graph operation", req.Op())
}

// counts are the env's row counts.
func (e *env) counts() *graphop.Counts {
	e.t.Helper()
	c, err := e.g.Counts(e.t.Context())
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

var mustJSON = knowledgetest.JSON
