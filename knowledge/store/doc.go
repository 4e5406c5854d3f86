// Package store owns the knowledge stores' SQLite files: opening one
// (modernc.org/sqlite, no cgo; pragmas; refusing files that are not
// ours), the schema and its migrations (the knowledge graph's tables and
// the vector graph's, one sequence), the write path (one writer
// connection, BEGIN IMMEDIATE transactions with a prepared-statement
// cache, batches joining one transaction), the read pool, the callers'
// task ids, the row helpers the graphs share (time and id formats,
// canonical JSON, IN lists), and where the layered stores live (a
// project's <repo>/.pi/knowledge.db over the personal
// <agent>/knowledge/knowledge.db).
//
// # On disk
//
// One SQLite file per store, WAL mode, foreign keys on, synchronous
// NORMAL, busy timeout 5 s (all set in the DSN). The header carries
// application_id "piKG" (0x70694b47) and user_version = the schema
// version; the schema_version table lists applied migrations. Version 1
// is the knowledge graph (projects; the spec's graph_molecules,
// graph_atoms and graph_changelog verbatim; graph_history; graph_meta's
// atoms_gen, bumped by triggers whenever atoms or their paths change;
// the FTS5 external-content tables graph_atoms_fts and
// graph_molecules_fts kept by triggers, keyed by rowid: never VACUUM a
// store without rebuilding them). Version 2 adds the vector graph
// (schema_vectors.go: vg_nodes, vg_edges, vg_vectors, vg_provenance,
// vg_conflicts, vg_atom_links, vg_topics, vg_meta), version 3 an index
// of node member names and version 4 vg_nodes_fts, the FTS5
// external-content index of node names and contents (keyed by seq, kept
// by triggers). Times are UTC ISO
// 8601 with milliseconds (TimeLayout); ids are random UUIDs.
//
// # Invariants
//
//   - Open refuses, without writing to it, a file that is not SQLite, a
//     SQLite file of another application, a damaged store (ErrNotStore,
//     ErrCorrupt) and a store whose schema is newer than the binary
//     (ErrTooNew). Migrations are append-only: never edit a released one.
//   - Every write is one transaction through the one writer connection;
//     a write that fails leaves nothing.
//   - A task id run:<id> names a run (Options.RunExists); omitted, it is
//     run:<Caller.RunID>.
//
// This package does not know what the tables mean beyond the schema:
// the knowledge graph's operations are package knowledge/graph's, the
// vector graph's package knowledge/vector's, and package knowledge puts
// both over the layered stores. Only the kernel opens stores.
//
// # Concurrency
//
// A *DB is safe for concurrent use. Writes go through one connection (so
// they are serialised in the process) in BEGIN IMMEDIATE transactions (so
// they are serialised with other processes too, waiting up to the busy
// timeout); checks made inside a write transaction hold until it
// commits. Reads use a pool of query_only connections and see the last
// committed state. A *Tx belongs to the goroutine running Write's fn.
//
// # Crash behaviour
//
// Every Write is one transaction: a crash (kill -9 included) leaves it
// wholly applied or not at all, and the next Open recovers the WAL. With
// synchronous NORMAL a power loss may lose the last commits but never
// corrupts the file. Migrations run one transaction each; the header is
// checkpointed into the main file right after, so a store created by a
// process killed at once still opens.
package store
