package knowledge

import (
	"bytes"
	"crypto/rand"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/pi-actors/pi-actors/knowledge/api"
	"github.com/pi-actors/pi-actors/knowledge/api/graphop"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
)

// refused opens path, wants err matching target, and proves the file's
// bytes did not change.
func refused(t *testing.T, path string, target error) {
	t.Helper()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(path, Options{})
	if err == nil {
		s.Close()
		t.Fatalf("Open(%s) succeeded, want %v", path, target)
	}
	if !errors.Is(err, target) {
		t.Fatalf("Open: %v, want %v", err, target)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Fatal("the refused file was modified")
	}
}

func TestOpenRefusesForeignFiles(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.db")
	os.WriteFile(text, []byte("these are my notes, not a database\n"), 0o600)
	refused(t, text, ErrNotStore)

	random := filepath.Join(dir, "random.db")
	b := make([]byte, 8192)
	rand.Read(b)
	os.WriteFile(random, b, 0o600)
	refused(t, random, ErrNotStore)

	// Another application's SQLite database (no application id, tables).
	other := filepath.Join(dir, "other.db")
	db, err := sql.Open("sqlite", other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE todo(id INTEGER PRIMARY KEY, what TEXT); INSERT INTO todo(what) VALUES ('x')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	refused(t, other, ErrNotStore)

	// Another application's id.
	if db, err = sql.Open("sqlite", other); err != nil {
		t.Fatal(err)
	}
	db.Exec(`PRAGMA application_id = 1234`)
	db.Close()
	refused(t, other, ErrNotStore)
}

func TestOpenRefusesDamagedStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k.db")
	s := openStore(t, path, "")
	s.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Garble page 1 after the header: the schema table's b-tree page.
	for i := 100; i < 4096 && i < len(b); i++ {
		b[i] = 0xa5
	}
	os.WriteFile(path, b, 0o600)
	refused(t, path, ErrCorrupt)
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k.db")
	openStore(t, path, "").Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO schema_version(version, applied_at) VALUES (99, 'later'); PRAGMA user_version = 99`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	refused(t, path, ErrTooNew)

	// The schema_version table says newer while the header does not: still
	// refused, and nothing migrates.
	if db, err = sql.Open("sqlite", path); err != nil {
		t.Fatal(err)
	}
	db.Exec(`PRAGMA user_version = 1`)
	db.Close()
	refused(t, path, ErrTooNew)
}

func TestOpenCreatesAndReopens(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "deep", "dir", "k.db")
	s := openStore(t, path, "")
	st, err := s.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if st.SchemaVersion != SchemaVersion || st.SizeBytes == 0 {
		t.Fatalf("status %+v", st)
	}
	s.Close()
	// An empty file (for example from touch) is a new store.
	empty := filepath.Join(dir, "empty.db")
	os.WriteFile(empty, nil, 0o600)
	openStore(t, empty, "").Close()
	// Reopen: no migration runs again.
	s = openStore(t, path, "")
	if st, _ := s.Status(t.Context()); st.SchemaVersion != SchemaVersion {
		t.Fatalf("reopen %+v", st)
	}
	var n int
	s.r.QueryRow(`SELECT count(*) FROM schema_version`).Scan(&n)
	if n != SchemaVersion {
		t.Fatalf("schema_version rows %d", n)
	}
}

func TestLayers(t *testing.T) {
	e := newEnv(t)
	pp := e.ok("project_create", `{"name":"mine","root":"`+e.repo+`","store":"personal"}`).(*graphop.Project)
	if pp.Store != "personal" {
		t.Fatalf("personal project %+v", pp)
	}
	e.fail(op.CodeValidation, "root", "project_create", `{"name":"dup","root":"`+e.repo+`","store":"personal"}`)
	pa := e.atom("P", `["src/**"]`, `,"knowledge":"personal note","store":"personal"`)
	ja := e.atom("J", `["src/**"]`, `,"knowledge":"project note"`)
	if pa.Store != "personal" || ja.Store != "project" || pa.ProjectID != pp.ID {
		t.Fatalf("stores %s %s", pa.Store, ja.Store)
	}
	// By id: found in whichever store holds it.
	got := e.ok("query_graph", `{"operation":"get","entityType":"atom","id":"`+pa.ID+`"}`).(*graphop.Atom)
	if got.Store != "personal" {
		t.Fatalf("get personal by id: %+v", got)
	}
	e.fail(op.CodeNotFound, "id", "query_graph", `{"operation":"get","entityType":"atom","id":"`+pa.ID+`","store":"project"}`)
	u := e.ok("manage_graph", `{"operation":"update","entityType":"atom","id":"`+pa.ID+`","version":1,"name":"P2"}`).(*graphop.Atom)
	if u.Store != "personal" || u.Version != 2 {
		t.Fatalf("update routed: %+v", u)
	}
	e.ok("manage_changelog", `{"operation":"append","parentType":"atom","parentId":"`+pa.ID+`","summary":"s"}`)
	// Search spans both, project first, with one page across them.
	p := e.ok("query_graph", `{"operation":"search","entityType":"atom","query":"note"}`).(*op.Page[graphop.Atom])
	if p.Total != 2 || p.Items[0].Store != "project" || p.Items[1].Store != "personal" {
		t.Fatalf("layered search %s", mustJSON(p))
	}
	p = e.ok("query_graph", `{"operation":"search","entityType":"atom","limit":1,"offset":1}`).(*op.Page[graphop.Atom])
	if p.Total != 2 || len(p.Items) != 1 || p.Items[0].Store != "personal" {
		t.Fatalf("layered page 2 %s", mustJSON(p))
	}
	c := e.ok("query_graph", `{"operation":"context","paths":"src/x.go,other.txt"}`).(*graphop.Context)
	if len(c.OrphanAtoms) != 2 || c.OrphanAtoms[0].Store != "project" || c.OrphanAtoms[1].Store != "personal" || len(c.UnmatchedPaths) != 1 {
		t.Fatalf("layered context %s", mustJSON(c))
	}
	// An explicit projectId lives in one store: the other is skipped.
	p = e.ok("query_graph", `{"operation":"search","entityType":"atom","projectId":"`+pp.ID+`"}`).(*op.Page[graphop.Atom])
	if p.Total != 1 || p.Items[0].Store != "personal" {
		t.Fatalf("personal project search %s", mustJSON(p))
	}
	pl := e.ok("project_list", `{}`).(*op.Page[graphop.Project])
	if pl.Total != 2 || pl.Items[0].Store != "project" {
		t.Fatalf("projects %s", mustJSON(pl))
	}
	st := e.ok("status", `{}`).(*api.StatusResult)
	if len(st.Stores) != 2 || st.Stores[0].Counts.Atoms != 1 || st.Stores[1].Counts.Atoms != 1 || st.Stores[1].Counts.Changelog != 1 {
		t.Fatalf("status %s", mustJSON(st))
	}
	// init again is idempotent and reuses the open project store.
	in := e.ok("init", `{}`).(*api.InitResult)
	if in.Created || in.Project.Root != e.repo {
		t.Fatalf("re-init %+v", in)
	}
	// Without a project store.
	e.layers.Project = nil
	e.fail(op.CodeValidation, "store", "query_graph", `{"operation":"search","entityType":"atom","store":"project"}`)
	a := e.atom("Q", `["q/**"]`, "")
	if a.Store != "personal" {
		t.Fatalf("fallback create: %+v", a)
	}
	if FindProject(filepath.Join(e.repo, "src", "deep")) != filepath.Join(e.repo, ProjectFile) || FindProject(e.dir) != "" {
		t.Fatal("FindProject")
	}
	if PersonalPath("/a") != "/a/knowledge/knowledge.db" {
		t.Fatal("PersonalPath")
	}
}
