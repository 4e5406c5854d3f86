package knowledge

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/pi-actors/pi-actors/knowledge/api"
	"github.com/pi-actors/pi-actors/knowledge/api/graphop"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/api/vectorop"
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

func (e *env) atom(name string, paths string, extra string) *graphop.Atom {
	e.t.Helper()
	return e.OK("manage_graph", fmt.Sprintf(`{"operation":"create","entityType":"atom","name":%q,"paths":%s%s}`, name, paths, extra)).(*graphop.Atom)
}

func (e *env) molecule(name, extra string) *graphop.Molecule {
	e.t.Helper()
	return e.OK("manage_graph", fmt.Sprintf(`{"operation":"create","entityType":"molecule","name":%q%s}`, name, extra)).(*graphop.Molecule)
}

func (e *env) node(domain, typ, name, content, extra string) *vectorop.Node {
	e.t.Helper()
	return &e.OK("node_add", fmt.Sprintf(`{"domain":%q,"type":%q,"name":%q,"content":%q%s}`, domain, typ, name, content, extra)).(*vectorop.NodeAdded).Node
}

var mustJSON = knowledgetest.JSON
