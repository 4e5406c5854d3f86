package store

// migrationVectors is schema version 2: seed 001's vector graph (nodes,
// typed edges, vectors, provenance, conflicts) next to the knowledge
// graph of version 1.
//
//   - vg_nodes.seq is the node's number in the vector indexes; id is its
//     public UUID. key is a natural key (run:<id>@<start>, msg:<id>,
//     recipe:<name>, file:<path>, decl:<path>#<name>, chunk:<path>#<n>)
//     that makes captures and ingests idempotent: at most one live (not
//     superseded) node per key.
//   - vg_vectors holds float32 little-endian BLOBs with the embedder that
//     made them (and the node's domain and type, so indexes load without
//     reading node rows); vid only grows, so "vid > last seen" finds every vector
//     written since (also by other processes). Deleting a vector bumps
//     vg_meta "del:<embedder>", which invalidates that embedder's indexes.
//   - vg_topics holds each domain's distinct topic keys (knowledge/filter
//     token hashes) with the seq of the node that brought each in, so
//     filters rebuild without re-reading every text and "seq > last seen"
//     finds the keys other processes added.
const migrationVectors = `
CREATE TABLE vg_nodes (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  key TEXT,
  domain TEXT NOT NULL CHECK (domain IN ('code', 'history', 'academic')),
  type TEXT NOT NULL,
  name TEXT NOT NULL,
  path TEXT NOT NULL DEFAULT '',
  line_start INTEGER NOT NULL DEFAULT 0,
  line_end INTEGER NOT NULL DEFAULT 0,
  run_id TEXT NOT NULL DEFAULT '',
  content TEXT NOT NULL DEFAULT '',
  content_hash TEXT NOT NULL,
  metadata TEXT NOT NULL DEFAULT '{}',
  trust INTEGER NOT NULL,
  verified INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  expires_at TEXT NOT NULL DEFAULT '',
  superseded_by TEXT REFERENCES vg_nodes(id) ON DELETE SET NULL DEFERRABLE INITIALLY DEFERRED
);
CREATE UNIQUE INDEX vg_nodes_live_key ON vg_nodes(key) WHERE key IS NOT NULL AND superseded_by IS NULL;
CREATE INDEX vg_nodes_key ON vg_nodes(key) WHERE key IS NOT NULL;
CREATE INDEX vg_nodes_domain_type ON vg_nodes(domain, type);
CREATE INDEX vg_nodes_name ON vg_nodes(domain, lower(name));
CREATE INDEX vg_nodes_run ON vg_nodes(run_id) WHERE run_id != '';
CREATE INDEX vg_nodes_path ON vg_nodes(path) WHERE path != '';
-- Queries on run_id and path repeat the partial indexes' conditions
-- (run_id != '', path != ''): SQLite uses a partial index only then.

CREATE TABLE vg_edges (
  source_id TEXT NOT NULL REFERENCES vg_nodes(id) ON DELETE CASCADE,
  target_id TEXT NOT NULL REFERENCES vg_nodes(id) ON DELETE CASCADE,
  type TEXT NOT NULL,
  weight REAL NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  PRIMARY KEY (source_id, type, target_id)
) WITHOUT ROWID;
CREATE INDEX vg_edges_target ON vg_edges(target_id, type);

CREATE TABLE vg_vectors (
  vid INTEGER PRIMARY KEY AUTOINCREMENT,
  seq INTEGER NOT NULL REFERENCES vg_nodes(seq) ON DELETE CASCADE,
  domain TEXT NOT NULL,
  type TEXT NOT NULL,
  embedder TEXT NOT NULL,
  dim INTEGER NOT NULL,
  vec BLOB NOT NULL,
  UNIQUE (seq, embedder)
);
CREATE INDEX vg_vectors_embedder ON vg_vectors(embedder, domain, vid);

CREATE TABLE vg_provenance (
  node_id TEXT NOT NULL REFERENCES vg_nodes(id) ON DELETE CASCADE,
  source TEXT NOT NULL,
  ref TEXT NOT NULL DEFAULT '',
  task_id TEXT NOT NULL DEFAULT '',
  at TEXT NOT NULL,
  verified INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX vg_provenance_node ON vg_provenance(node_id);

CREATE TABLE vg_conflicts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  type TEXT NOT NULL CHECK (type IN ('temporal', 'source_mismatch', 'semantic')),
  subject TEXT NOT NULL,
  node_a TEXT NOT NULL REFERENCES vg_nodes(id) ON DELETE CASCADE,
  node_b TEXT NOT NULL REFERENCES vg_nodes(id) ON DELETE CASCADE,
  description TEXT NOT NULL,
  resolved INTEGER NOT NULL DEFAULT 0,
  resolution TEXT NOT NULL DEFAULT '',
  detected_at TEXT NOT NULL,
  resolved_at TEXT NOT NULL DEFAULT '',
  UNIQUE (node_a, node_b)
);
CREATE INDEX vg_conflicts_a ON vg_conflicts(node_a);
CREATE INDEX vg_conflicts_b ON vg_conflicts(node_b);

CREATE TABLE vg_atom_links (
  node_id TEXT NOT NULL REFERENCES vg_nodes(id) ON DELETE CASCADE,
  atom_id TEXT NOT NULL,
  PRIMARY KEY (node_id, atom_id)
) WITHOUT ROWID;
CREATE INDEX vg_atom_links_atom ON vg_atom_links(atom_id);

CREATE TABLE vg_topics (
  domain TEXT NOT NULL,
  key INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  PRIMARY KEY (domain, key)
) WITHOUT ROWID;
CREATE INDEX vg_topics_seq ON vg_topics(seq);

CREATE TABLE vg_meta (
  key TEXT PRIMARY KEY,
  value INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TRIGGER vg_vectors_ad AFTER DELETE ON vg_vectors BEGIN
  INSERT INTO vg_meta(key, value) VALUES ('del:' || old.embedder, 1)
    ON CONFLICT(key) DO UPDATE SET value = value + 1;
END;
`

// migrationMembers is schema version 3: an index of the vector graph's
// nodes by the part of their name after its first '.' — a method's own
// name (Pool.fill) — so a search for the bare name finds it by index as
// it finds a name by its start (vg_nodes_name). Queries repeat the
// expression and the partial index's condition exactly.
const migrationMembers = `
CREATE INDEX vg_nodes_member ON vg_nodes(domain, lower(substr(name, instr(name, '.') + 1))) WHERE instr(name, '.') > 0;
`

// migrationNodeWords is schema version 4: a full-text index (FTS5,
// external content) of the vector graph's node names and contents, so a
// search finds a node that holds the query's words even when its vector
// is far from the query's (one rare word among a page of others). The
// triggers keep it in step with vg_nodes; the rebuild indexes the nodes
// of an older store.
const migrationNodeWords = `
CREATE VIRTUAL TABLE vg_nodes_fts USING fts5(name, content,
  content='vg_nodes', content_rowid='seq', tokenize='unicode61 remove_diacritics 2', detail='none');
CREATE TRIGGER vg_nodes_fts_ai AFTER INSERT ON vg_nodes BEGIN
  INSERT INTO vg_nodes_fts(rowid, name, content) VALUES (new.seq, new.name, new.content);
END;
CREATE TRIGGER vg_nodes_fts_ad AFTER DELETE ON vg_nodes BEGIN
  INSERT INTO vg_nodes_fts(vg_nodes_fts, rowid, name, content) VALUES ('delete', old.seq, old.name, old.content);
END;
CREATE TRIGGER vg_nodes_fts_au AFTER UPDATE OF name, content ON vg_nodes BEGIN
  INSERT INTO vg_nodes_fts(vg_nodes_fts, rowid, name, content) VALUES ('delete', old.seq, old.name, old.content);
  INSERT INTO vg_nodes_fts(rowid, name, content) VALUES (new.seq, new.name, new.content);
END;
INSERT INTO vg_nodes_fts(vg_nodes_fts) VALUES ('rebuild');
`
