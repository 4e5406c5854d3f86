// Package graphop owns the knowledge graph's operations (the spec's
// query_graph, manage_graph and manage_changelog, and project_create,
// project_list, history, verify, task_context): one typed request struct
// per operation with json and jsonschema tags, its validation, the result
// types (atoms, molecules, changelog entries, context, deltas, verify
// reports, projects) and their compact text.
//
// # Invariants
//
//   - Field names are exactly the spec's (projectId, moleculeId,
//     relatedAtoms, createdByTaskId, …); results render as the spec's
//     JSON.
//   - A parameter that does not apply to the operation or entity type is
//     a VALIDATION_ERROR, never silently ignored.
//   - Atom paths are relative globs without "..": at most 20 patterns of
//     512 characters, never empty (INVARIANT_VIOLATION); knowledge is at
//     most 32 KB after trimming, a changelog summary 1 byte to 4 KB,
//     related arrays at most 50 entries.
//   - moleculeId given as JSON null (or "") unassigns an atom
//     (ManageGraph.Unassign).
//
// This package does not touch a database or the file system (existence,
// versions, project membership and run ids are package knowledge/graph's
// checks) and imports only the standard library, doublestar (glob
// syntax) and knowledge/api/op.
//
// # Concurrency
//
// Stateless: every function is safe for concurrent use; a request value
// is not (Validate normalises it in place).
//
// # Crash behaviour
//
// Nothing is written; nothing to recover.
package graphop
