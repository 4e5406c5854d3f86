package knowledge

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/pi-actors/pi-actors/knowledge/api"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/knowledgetest"
	"github.com/pi-actors/pi-actors/knowledge/store"
)

// env is one test's stores: a personal store and, optionally, a project
// store under a fake repository.
type env struct {
	knowledgetest.Ops
	t      *testing.T
	dir    string
	repo   string
	layers *Layers
	caller store.Caller
}

func openStore(t testing.TB, path, layer string) *Store {
	t.Helper()
	s, err := Open(path, Options{Layer: layer})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// newEnv opens a personal store and a project store (initialised, with a
// project rooted at the repo) and a caller in the repo with a task id.
func newEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, dir: dir, repo: repo, caller: store.Caller{Cwd: repo, RunID: "r1"}}
	e.Ops = knowledgetest.Ops{T: t, Exec: func(ctx context.Context, req op.Request) (any, error) { return e.layers.Execute(ctx, e.caller, req) }}
	e.layers = &Layers{Personal: openStore(t, store.PersonalPath(filepath.Join(dir, "agent")), op.StorePersonal)}
	res := e.OK("init", `{}`).(*api.InitResult)
	if !res.Created || res.Project.Root != repo {
		t.Fatalf("init: %+v", res)
	}
	e.layers.Project = openStore(t, res.Path, op.StoreProject)
	return e
}

var mustJSON = knowledgetest.JSON
