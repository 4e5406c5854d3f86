package knowledge

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/pi-actors/pi-actors/knowledge/api"
	"github.com/pi-actors/pi-actors/knowledge/api/graphop"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/api/vectorop"
	"github.com/pi-actors/pi-actors/knowledge/store"
)

// env is one test's stores: a personal store and, optionally, a project
// store under a fake repository.
type env struct {
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
	e.layers = &Layers{Personal: openStore(t, store.PersonalPath(filepath.Join(dir, "agent")), op.StorePersonal)}
	res := e.ok("init", `{}`).(*api.InitResult)
	if !res.Created || res.Project.Root != repo {
		t.Fatalf("init: %+v", res)
	}
	e.layers.Project = openStore(t, res.Path, op.StoreProject)
	return e
}

// do decodes raw as op and executes it through the layers.
func (e *env) do(opName, raw string) (any, *op.Error) {
	e.t.Helper()
	req, err := api.Decode(opName, json.RawMessage(raw))
	if err != nil {
		ae, ok := op.AsError(err)
		if !ok {
			e.t.Fatalf("%s %s: decode: %v", opName, raw, err)
		}
		return nil, ae
	}
	v, err := e.layers.Execute(context.Background(), e.caller, req)
	if err != nil {
		ae, ok := op.AsError(err)
		if !ok {
			e.t.Fatalf("%s %s: %v", opName, raw, err)
		}
		return nil, ae
	}
	return v, nil
}

func (e *env) ok(opName, raw string) any {
	e.t.Helper()
	v, ae := e.do(opName, raw)
	if ae != nil {
		e.t.Fatalf("%s %s: %v", opName, raw, ae)
	}
	return v
}

// fail runs op and wants an error with code about field.
func (e *env) fail(code op.Code, field, opName, raw string) *op.Error {
	e.t.Helper()
	v, ae := e.do(opName, raw)
	if ae == nil {
		e.t.Fatalf("%s %s: got %+v, want %s on %s", opName, raw, v, code, field)
	}
	if ae.Code != code || (field != "*" && ae.Details["field"] != field) {
		e.t.Fatalf("%s %s: got %s on %v (%s), want %s on %s", opName, raw, ae.Code, ae.Details["field"], ae.Message, code, field)
	}
	return ae
}

func (e *env) atom(name string, paths string, extra string) *graphop.Atom {
	e.t.Helper()
	return e.ok("manage_graph", fmt.Sprintf(`{"operation":"create","entityType":"atom","name":%q,"paths":%s%s}`, name, paths, extra)).(*graphop.Atom)
}

func (e *env) molecule(name, extra string) *graphop.Molecule {
	e.t.Helper()
	return e.ok("manage_graph", fmt.Sprintf(`{"operation":"create","entityType":"molecule","name":%q%s}`, name, extra)).(*graphop.Molecule)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func (e *env) node(domain, typ, name, content, extra string) *vectorop.Node {
	e.t.Helper()
	return &e.ok("node_add", fmt.Sprintf(`{"domain":%q,"type":%q,"name":%q,"content":%q%s}`, domain, typ, name, content, extra)).(*vectorop.NodeAdded).Node
}
