package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// migrations are the schema, one entry per version (index 0 is version
// 1). Each runs in one transaction together with its schema_version row
// and PRAGMA user_version. Never edit a released entry; append a new one.
var migrations = []string{
	// 1: the spec's graph tables and indexes, projects, history, search.
	`
CREATE TABLE schema_version (
  version INTEGER PRIMARY KEY,
  applied_at TEXT NOT NULL
);

CREATE TABLE projects (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  root TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL
);
CREATE INDEX idx_projects_root ON projects(root);

CREATE TABLE graph_molecules (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id),
  name TEXT NOT NULL,
  knowledge TEXT NOT NULL DEFAULT '',
  related_molecules TEXT NOT NULL DEFAULT '[]',
  created_by_task_id TEXT NOT NULL,
  last_task_id TEXT NOT NULL,
  version INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

CREATE TABLE graph_atoms (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id),
  molecule_id TEXT REFERENCES graph_molecules(id),
  name TEXT NOT NULL,
  paths TEXT NOT NULL DEFAULT '[]',
  knowledge TEXT NOT NULL DEFAULT '',
  related_atoms TEXT NOT NULL DEFAULT '[]',
  created_by_task_id TEXT NOT NULL,
  last_task_id TEXT NOT NULL,
  version INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

CREATE TABLE graph_changelog (
  id TEXT PRIMARY KEY,
  parent_type TEXT NOT NULL CHECK(parent_type IN ('atom', 'molecule')),
  parent_id TEXT NOT NULL,
  task_id TEXT NOT NULL,
  summary TEXT NOT NULL,
  created_at TEXT NOT NULL
);

CREATE INDEX idx_graph_molecules_project ON graph_molecules(project_id);
CREATE INDEX idx_graph_atoms_project ON graph_atoms(project_id);
CREATE INDEX idx_graph_atoms_molecule ON graph_atoms(molecule_id);
CREATE INDEX idx_graph_changelog_parent ON graph_changelog(parent_type, parent_id);
CREATE INDEX idx_graph_changelog_task ON graph_changelog(task_id);

CREATE TABLE graph_history (
  entity_id TEXT NOT NULL,
  version INTEGER NOT NULL,
  entity_type TEXT NOT NULL CHECK(entity_type IN ('atom', 'molecule')),
  op TEXT NOT NULL CHECK(op IN ('create', 'update', 'delete')),
  changes TEXT NOT NULL,
  task_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  parent_hash TEXT NOT NULL,
  hash TEXT NOT NULL,
  PRIMARY KEY (entity_id, version)
) WITHOUT ROWID;

CREATE TABLE graph_meta (
  key TEXT PRIMARY KEY,
  value INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO graph_meta(key, value) VALUES ('atoms_gen', 0);

CREATE VIRTUAL TABLE graph_atoms_fts USING fts5(name, knowledge,
  content='graph_atoms', content_rowid='rowid', tokenize='unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE graph_molecules_fts USING fts5(name, knowledge,
  content='graph_molecules', content_rowid='rowid', tokenize='unicode61 remove_diacritics 2');

CREATE TRIGGER graph_atoms_ai AFTER INSERT ON graph_atoms BEGIN
  INSERT INTO graph_atoms_fts(rowid, name, knowledge) VALUES (new.rowid, new.name, new.knowledge);
  UPDATE graph_meta SET value = value + 1 WHERE key = 'atoms_gen';
END;
CREATE TRIGGER graph_atoms_ad AFTER DELETE ON graph_atoms BEGIN
  INSERT INTO graph_atoms_fts(graph_atoms_fts, rowid, name, knowledge) VALUES ('delete', old.rowid, old.name, old.knowledge);
  UPDATE graph_meta SET value = value + 1 WHERE key = 'atoms_gen';
END;
CREATE TRIGGER graph_atoms_au_text AFTER UPDATE OF name, knowledge ON graph_atoms BEGIN
  INSERT INTO graph_atoms_fts(graph_atoms_fts, rowid, name, knowledge) VALUES ('delete', old.rowid, old.name, old.knowledge);
  INSERT INTO graph_atoms_fts(rowid, name, knowledge) VALUES (new.rowid, new.name, new.knowledge);
END;
CREATE TRIGGER graph_atoms_au_paths AFTER UPDATE OF paths ON graph_atoms BEGIN
  UPDATE graph_meta SET value = value + 1 WHERE key = 'atoms_gen';
END;
CREATE TRIGGER graph_molecules_ai AFTER INSERT ON graph_molecules BEGIN
  INSERT INTO graph_molecules_fts(rowid, name, knowledge) VALUES (new.rowid, new.name, new.knowledge);
END;
CREATE TRIGGER graph_molecules_ad AFTER DELETE ON graph_molecules BEGIN
  INSERT INTO graph_molecules_fts(graph_molecules_fts, rowid, name, knowledge) VALUES ('delete', old.rowid, old.name, old.knowledge);
END;
CREATE TRIGGER graph_molecules_au_text AFTER UPDATE OF name, knowledge ON graph_molecules BEGIN
  INSERT INTO graph_molecules_fts(graph_molecules_fts, rowid, name, knowledge) VALUES ('delete', old.rowid, old.name, old.knowledge);
  INSERT INTO graph_molecules_fts(rowid, name, knowledge) VALUES (new.rowid, new.name, new.knowledge);
END;
`,
	// 2: the vector graph (schema_vectors.go).
	migrationVectors,
	// 3: nodes by member name (schema_vectors.go).
	migrationMembers,
	// 4: the words of the vector graph's nodes (schema_vectors.go).
	migrationNodeWords,
}

// SchemaVersion is the schema version this binary creates and knows.
const SchemaVersion = 4

func init() {
	if len(migrations) != SchemaVersion {
		panic("store: SchemaVersion does not match the migrations")
	}
}

// migrate applies the missing migrations, each in its own transaction.
// A store whose schema_version is newer than this binary is refused
// before anything is written.
func migrate(ctx context.Context, db *sql.DB) error {
	for {
		done, err := migrateOne(ctx, db)
		if err != nil || done {
			return err
		}
	}
}

func migrateOne(ctx context.Context, db *sql.DB) (done bool, err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("begin migration: %w", err)
	}
	defer func() {
		if err != nil || done {
			tx.Rollback()
		}
	}()
	cur, err := currentVersion(ctx, tx)
	if err != nil {
		return false, err
	}
	if cur > len(migrations) {
		return false, fmt.Errorf("%w: schema version %d, this binary knows up to %d (left untouched; use a newer pi-actors)", ErrTooNew, cur, len(migrations))
	}
	if cur == len(migrations) {
		return true, nil
	}
	next := cur + 1
	if _, err := tx.ExecContext(ctx, migrations[cur]); err != nil {
		return false, fmt.Errorf("migration %d: %w", next, err)
	}
	stmts := []string{
		fmt.Sprintf("INSERT INTO schema_version(version, applied_at) VALUES (%d, '%s')", next, time.Now().UTC().Format(TimeLayout)),
		fmt.Sprintf("PRAGMA user_version = %d", next),
		fmt.Sprintf("PRAGMA application_id = %d", applicationID),
	}
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return false, fmt.Errorf("migration %d: %w", next, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("commit migration %d: %w", next, err)
	}
	return false, nil
}

func currentVersion(ctx context.Context, tx *sql.Tx) (int, error) {
	var n int
	err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	if n == 0 {
		return 0, nil
	}
	var v sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT max(version) FROM schema_version`).Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return int(v.Int64), nil
}
