// Package graph owns the knowledge graph of seed 003 in one store:
// projects, molecules, atoms and their changelog; the graph operations of
// the knowledge graph spec (query_graph, manage_graph, manage_changelog,
// project_create, project_list) with every rule the store checks
// (existence, versions, project membership, run ids through
// store.DB.TaskID); glob matching of file paths to atoms (Context, and
// AtomMatcher for the vector graph's ingest; an AtomLinker, set by
// package knowledge, relinks an atom's code nodes in the transaction of
// every create, paths update and delete of it); the task_context section
// parser; and the hash-chained history of every atom and molecule with
// History and Verify.
//
// # On disk
//
// The tables of schema version 1 (package store): projects(id, name,
// root, created_at); the spec's graph_molecules, graph_atoms and
// graph_changelog verbatim (paths and related arrays are JSON text);
// graph_history(entity_id, version, entity_type, op, changes, task_id,
// created_at, parent_hash, hash), one immutable row per version of an
// entity; graph_meta's atoms_gen, bumped by triggers whenever atoms or
// their paths change: it invalidates the in-memory context index, also
// across processes; the FTS5 tables over name and knowledge.
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
//     character id; run:<id> must name a run; omitted, they default to
//     run:<Caller.RunID>. Deletes take lastTaskId too (the tombstone and
//     orphaned atoms record it).
//   - Orphaning the atoms of a deleted molecule is a change to each atom:
//     moleculeId null, lastTaskId and updatedAt set, version + 1, a delta.
//   - projectId may be omitted when Caller.Cwd lies under exactly one
//     project's root (ErrNoProject otherwise); two projects may not share
//     a root.
//   - Search orders by FTS5 rank (with a query) then name; without a query
//     by name. Query words are prefix terms, all required. Context paths
//     are relative to the project root ("./" dropped, absolute paths under
//     the root made relative); "*" and "**" match dotfiles too.
//   - Changelog order is createdAt descending, then insertion order.
//
// This package does not open store files (package store does), does not
// know the vector graph (package vector), and does not route between the
// project and personal stores (package knowledge does).
//
// # Concurrency
//
// A *Store is safe for concurrent use: writes go through store.DB.Write
// (serialised in the process and with other processes); version checks
// happen inside the write transaction, so of two updates with the same
// version exactly one wins and the other gets CONFLICT. The context index
// per project is built under a mutex and rebuilt when atoms_gen moved.
//
// # Crash behaviour
//
// Every operation, and every Batch, is one transaction: a crash leaves it
// wholly applied or not at all. The context index is memory only and is
// rebuilt from SQLite.
package graph
