// Package knowledge owns the knowledge graph store: a SQLite database
// (modernc.org/sqlite, no cgo) holding projects, molecules, atoms, their
// changelog and the hash-chained history of every atom and molecule; the
// graph operations of the knowledge graph spec (query_graph, manage_graph,
// manage_changelog) with every validation rule, default and error code;
// glob matching of file paths to atoms (context); the vector graph of
// seed 001 (nodes in the code, history and academic domains, typed edges,
// vectors, provenance, trust, freshness, conflicts; search, search_all,
// smart_search, recall, traversal; run and message capture; code ingest);
// and the layered stores (a project's <repo>/.pi/knowledge.db over the
// personal <agent>/knowledge/knowledge.db). Requests, results and errors
// are the types of package knowledge/api.
//
// # On disk
//
// One SQLite file per store, WAL mode, foreign keys on, synchronous
// NORMAL, busy timeout 5 s (all set in the DSN). The header carries
// application_id "piKG" (0x70694b47) and user_version = the schema
// version; the schema_version table lists applied migrations. Tables:
// projects(id, name, root, created_at); the spec's graph_molecules,
// graph_atoms and graph_changelog with its indexes, verbatim (paths and
// related arrays are JSON text; times are UTC ISO 8601 with milliseconds,
// "2006-01-02T15:04:05.000Z"); graph_history(entity_id, version,
// entity_type, op, changes, task_id, created_at, parent_hash, hash), one
// immutable row per version of an entity; graph_meta (atoms_gen, bumped by
// triggers whenever atoms or their paths change: it invalidates the
// in-memory context index, also across processes); graph_atoms_fts and
// graph_molecules_fts, FTS5 external-content tables over name and
// knowledge kept by triggers (keyed by rowid: never VACUUM a store
// without rebuilding them).
//
// Schema version 2 adds the vector graph's tables (vschema.go): vg_nodes
// (seq: the number in the vector indexes; id: a UUID; key: a natural key
// with at most one live node per key), vg_edges, vg_vectors (float32
// little-endian BLOBs with their embedder, domain and node type; vid only
// grows), vg_provenance, vg_conflicts, vg_atom_links, vg_topics (each
// domain's filter keys with the seq that brought them) and vg_meta (a
// delete generation per embedder). Next to the database, one file per
// domain that outgrew the exact scan holds its HNSW graph:
// <db>.<domain>.hnsw (vpersist.go).
//
// # Vector graph
//
// Nodes are immutable in what they say: a new version supersedes the old
// one (superseded_by, a supersedes edge); superseded nodes stay
// searchable with freshness 0.1. Nodes with the same name and different
// content are recorded as conflicts, never resolved but by the conflicts
// operation. A search asks each domain's BinaryFuse8 filter first (a
// domain that cannot hold any query word answers no_matches without
// touching the index or SQLite), then the domain's index (an exact scan
// below Options.ExactBelow vectors, 20,000 by default; an HNSW graph
// above, built in the background), then the candidates' rows, and scores
// them with seed 001's weights: 0.35 similarity + 0.25 trust/100 + 0.25
// freshness + 0.15 when verified. The in-memory indexes and filters mirror
// SQLite: they are loaded on first use (graphs from their files when the
// files match the store, the rest from SQLite), follow this process's
// writes at once and other processes' writes within refreshEvery (200
// ms), by "vid > last seen" and "seq > last seen". Vectors record their
// embedder; a background worker embeds nodes whose vector is missing or
// of another embedder (a switch re-embeds the store; progress in Status).
// Capture (CaptureRun, CaptureMessage) and Ingest are described on their
// functions.
//
// # History
//
// Every create, update and delete of an atom or molecule appends a delta:
// {version, op, changes: {field: [old, new]}, taskId, createdAt,
// parentHash, hash} with hash = sha256(canonical JSON of the entity's
// fields + "|" + parentHash) in hex. The fields are the entity's stored
// fields except id and version (projectId, moleculeId, name, paths,
// knowledge, related*, createdByTaskId, lastTaskId, createdAt, updatedAt);
// canonical JSON has sorted keys, no spaces and no HTML escaping. A delete
// leaves a tombstone delta hashing {"deleted":true,"deletedAt":…,"taskId":…},
// so a deleted entity's chain still verifies. History reconstructs any
// version from the deltas; Verify recomputes every chain and compares its
// end with the live rows, reporting gaps, altered deltas and rows changed
// outside the store.
//
// # Behaviour beyond the spec's words
//
//   - Task ids (createdByTaskId, lastTaskId, taskId) are any 1-255
//     character id; run:<id> must name a run (Options.RunExists); omitted,
//     they default to run:<Caller.RunID>. Deletes take lastTaskId too (the
//     tombstone and orphaned atoms record it).
//   - Orphaning the atoms of a deleted molecule is a change to each atom:
//     moleculeId null, lastTaskId and updatedAt set, version + 1, a delta.
//   - projectId may be omitted when Caller.Cwd lies under exactly one
//     project's root; two projects may not share a root.
//   - Search orders by FTS5 rank (with a query) then name; without a query
//     by name. Query words are prefix terms, all required. Context paths
//     are relative to the project root ("./" dropped, absolute paths under
//     the root made relative); "*" and "**" match dotfiles too.
//   - Changelog order is createdAt descending, then insertion order.
//
// This package does not implement the vector index, the filters or the
// embedders (knowledge/hnsw, knowledge/filter, knowledge/embed do), does
// not talk to the kernel socket, does not read run state files (the
// kernel hands CaptureRun a RunRecord), and does not know runs beyond
// Options.RunExists. Only the kernel opens stores.
//
// # Concurrency
//
// A *Store is safe for concurrent use. Writes go through one connection
// (so they are serialised in the process) in BEGIN IMMEDIATE transactions
// (so they are serialised with other processes too, waiting up to the busy
// timeout); version checks happen inside the write transaction, so of two
// updates with the same version exactly one wins and the other gets
// CONFLICT. Reads use a pool of query_only connections and see the last
// committed state. The vector graph's in-memory side has its own locks
// (one per domain index, one for loading and catch-up); its background
// goroutines (graph builds, filter rebuilds, the embedding worker) belong
// to the Store and stop in Close, which also writes changed graphs. One
// Ingest runs at a time per Store.
//
// # Crash behaviour
//
// Every operation is one transaction: a crash (kill -9 included) leaves
// each write wholly applied or not at all, and the next Open recovers the
// WAL. With synchronous NORMAL a power loss may lose the last commits but
// never corrupts the file. Open refuses, without writing to it, a file
// that is not SQLite, a SQLite file of another application, a damaged
// store (ErrNotStore, ErrCorrupt) and a store whose schema is newer than
// the binary (ErrTooNew). Migrations run one transaction each. Captures
// and node writes are one transaction each, an ingest one per 32 files: a
// kill leaves whole batches, and the next ingest skips them. Index files
// are written atomically (temp file, fsync, rename, fsync dir); a graph
// that was not written before a crash is caught up from SQLite when its
// file loads, and a damaged or foreign file is ignored and rebuilt.
package knowledge
