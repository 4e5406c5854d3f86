// Package vector owns the vector graph of seed 001 in one store: nodes in
// the code, history and academic domains with typed edges, vectors,
// provenance, trust, freshness and conflicts; the operations search,
// search_all, smart_search, recall (Recall merges several stores),
// node_add, node_get, traverse and conflicts; run and message capture
// (CaptureRun, CaptureMessage); code ingest (Ingest); and the in-memory
// side that makes search fast: one index per domain (an exact scan, an
// HNSW graph above Options.ExactBelow vectors), the domains' topic
// filters, and the background embedding worker.
//
// # On disk
//
// The tables of schema version 2 (package store, schema_vectors.go):
// vg_nodes (seq: the number in the vector indexes; id: a UUID; key: a
// natural key with at most one live node per key), vg_edges, vg_vectors
// (float32 little-endian BLOBs with their embedder, domain and node type;
// vid only grows), vg_provenance, vg_conflicts, vg_atom_links (code nodes
// to knowledge-graph atoms), vg_topics (each domain's filter keys with the
// seq that brought them) and vg_meta (a delete generation per embedder).
// Next to the database, one file per domain that outgrew the exact scan
// holds its HNSW graph: <db>.<domain>.hnsw (persist.go).
//
// # Invariants
//
// Nodes are immutable in what they say: a new version supersedes the old
// one (superseded_by, a supersedes edge); the nodes of a file that is
// gone supersede themselves (superseded_by = their own id, no edge: no
// newer version); superseded nodes stay
// searchable with freshness 0.1. Nodes with the same name and different
// content are recorded as conflicts, never resolved but by the conflicts
// operation. A search asks each domain's BinaryFuse8 filter first (a
// domain that cannot hold any query word answers no_matches without
// touching the index or SQLite), then the domain's index, then the
// candidates' rows, and scores them with seed 001's weights: 0.35
// similarity + 0.25 trust/100 + 0.25 freshness + 0.15 when verified. The
// in-memory indexes and filters mirror SQLite, which stays the truth:
// they are loaded on first use (graphs from their files when the files
// match the store, the rest from SQLite), follow this process's writes at
// once and other processes' writes within refreshEvery (200 ms), by "vid >
// last seen" and "seq > last seen". Vectors record their embedder; the
// background worker embeds nodes whose vector is missing or of another
// embedder (a switch re-embeds the store; progress in Status).
//
// This package does not implement the vector index, the filters or the
// embedders (knowledge/hnsw, knowledge/filter, knowledge/embed do), does
// not open store files (package store), does not know the knowledge
// graph beyond the atoms an AtomMatcher names, the atom names it reads
// for hits and the links LinkAtom recomputes when the knowledge graph
// writes an atom (package knowledge wires it: graph.AtomLinker), does not read run state files (the kernel hands
// CaptureRun a RunRecord), and does not route between the project and
// personal stores (package knowledge does).
//
// # Concurrency
//
// A *Store is safe for concurrent use. Writes go through store.DB.Write;
// the in-memory side has its own locks (one per domain index, one for
// loading and catch-up); its background goroutines (graph builds, filter
// rebuilds, the embedding worker) belong to the Store and stop in Close,
// which also writes changed graphs. One Ingest runs at a time per Store.
//
// # Crash behaviour
//
// Captures and node writes are one transaction each, an ingest one per
// 32 files: a kill leaves whole batches, and the next ingest skips them.
// Index files are written atomically (temp file, fsync, rename, fsync
// dir); a graph that was not written before a crash is caught up from
// SQLite when its file loads, and a damaged or foreign file is ignored and
// rebuilt.
package vector
