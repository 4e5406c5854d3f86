package store

import (
	"bytes"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func openDB(t testing.TB, path string) *DB {
	t.Helper()
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

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
	s := openDB(t, path)
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
	openDB(t, path).Close()
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
	s := openDB(t, path)
	v, err := s.Version(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if v != SchemaVersion || s.Size() == 0 {
		t.Fatalf("version %d size %d", v, s.Size())
	}
	s.Close()
	// An empty file (for example from touch) is a new
	empty := filepath.Join(dir, "empty.db")
	os.WriteFile(empty, nil, 0o600)
	openDB(t, empty).Close()
	// Reopen: no migration runs again.
	s = openDB(t, path)
	if v, _ := s.Version(t.Context()); v != SchemaVersion {
		t.Fatalf("reopen: version %d", v)
	}
	var n int
	s.r.QueryRow(`SELECT count(*) FROM schema_version`).Scan(&n)
	if n != SchemaVersion {
		t.Fatalf("schema_version rows %d", n)
	}
}

// A store of schema 1 (the knowledge graph only) migrates to 2 on open,
// keeping its rows, with the vector graph's tables.
func TestMigrateFromSchema1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{migrations[0],
		`INSERT INTO schema_version(version, applied_at) VALUES (1, '2025-01-01T00:00:00.000Z')`,
		`INSERT INTO projects(id, name, root, created_at) VALUES ('p', 'old', '/old', '2025-01-01T00:00:00.000Z')`,
		`PRAGMA user_version = 1`, fmt.Sprintf(`PRAGMA application_id = %d`, applicationID)} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%.40s: %v", q, err)
		}
	}
	db.Close()
	s := openDB(t, path)
	var projects, nodes int
	err = s.r.QueryRow(`SELECT (SELECT count(*) FROM projects), (SELECT count(*) FROM vg_nodes)`).Scan(&projects, &nodes)
	if v, _ := s.Version(t.Context()); err != nil || v != SchemaVersion || projects != 1 || nodes != 0 {
		t.Fatalf("after migration: version %d, %d projects, %d nodes, %v", v, projects, nodes, err)
	}
}

// A store of schema 3 with nodes migrates to 4 on open: the node word
// index is built from the nodes already there, and kept by its triggers
// after.
func TestMigrateFromSchema3IndexesNodeWords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	qs := append([]string{}, migrations[:3]...)
	for v := 1; v <= 3; v++ {
		qs = append(qs, fmt.Sprintf(`INSERT INTO schema_version(version, applied_at) VALUES (%d, '2025-01-01T00:00:00.000Z')`, v))
	}
	qs = append(qs, `INSERT INTO vg_nodes(id, domain, type, name, content, content_hash, trust, created_at, updated_at)
		VALUES ('n1', 'history', 'entry', 'field log', 'we saw a platypus', 'h', 50, '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z')`,
		`PRAGMA user_version = 3`, fmt.Sprintf(`PRAGMA application_id = %d`, applicationID))
	for _, q := range qs {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%.40s: %v", q, err)
		}
	}
	db.Close()
	s := openDB(t, path)
	find := func(word string) (ids []string) {
		t.Helper()
		rows, err := s.r.Query(`SELECT n.id FROM vg_nodes_fts f JOIN vg_nodes n ON n.seq = f.rowid WHERE vg_nodes_fts MATCH ?`, `"`+word+`"`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			rows.Scan(&id)
			ids = append(ids, id)
		}
		return ids
	}
	if v, _ := s.Version(t.Context()); v != SchemaVersion || len(find("platypus")) != 1 {
		t.Fatalf("after migration: version %d, platypus in %v", v, find("platypus"))
	}
	if _, err := s.Write(t.Context(), func(tx *Tx) (any, error) {
		return tx.Exec(`UPDATE vg_nodes SET content = 'we saw an echidna' WHERE id = 'n1'`)
	}); err != nil {
		t.Fatal(err)
	}
	if p, e := find("platypus"), find("ECHIDNA"); len(p) != 0 || len(e) != 1 {
		t.Fatalf("after an update: platypus in %v, echidna in %v", p, e)
	}
}

// A store another user could read or change is refused, untouched: one in
// a directory all may write (not sticky), and — as root, which can make
// files another user's — one whose file or directory is another user's.
func TestOpenRefusesStoresNotYours(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "open")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o777) // past the umask
	path := filepath.Join(dir, "k.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	refused(t, path, ErrForeign)
	if err := os.Chmod(dir, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	openDB(t, path).Close() // sticky, like /tmp: others cannot replace it
	if os.Geteuid() != 0 {
		t.Log("not root: cannot make a file another user's; the owner checks are not run")
		return
	}
	theirs := filepath.Join(t.TempDir(), "theirs.db")
	openDB(t, theirs).Close()
	for _, p := range []string{theirs, theirs + "-wal", theirs + "-shm"} {
		os.Chown(p, 65534, 65534)
	}
	refused(t, theirs, ErrForeign)
	pdir := filepath.Join(t.TempDir(), "pi")
	if err := os.Mkdir(pdir, 0o755); err != nil {
		t.Fatal(err)
	}
	mine := filepath.Join(pdir, "k.db")
	openDB(t, mine).Close()
	os.Chown(pdir, 65534, 65534)
	refused(t, mine, ErrForeign)
}
