// Package api is the verb layer of the knowledge stores as a whole: it
// puts the two operation families together — the knowledge graph's
// (knowledge/api/graphop: query_graph, manage_graph, manage_changelog,
// project_create, project_list, history, verify, task_context) and the
// vector graph's (knowledge/api/vectorop: search, search_all,
// smart_search, recall, ingest, node_add, node_get, traverse, conflicts)
// — with the two operations that span both (init, status): Ops, New,
// Decode (strict decoding, then validation) and Text (the compact
// rendering of any result). The CLI, the MCP server and the kernel's
// knowledge actors share it.
//
// Parameter and result field names are exactly those of the knowledge
// graph spec (camelCase: projectId, moleculeId, relatedAtoms,
// createdByTaskId, …). Atom paths are a JSON array of glob patterns, given
// as an array or as a string holding one; context paths are a
// comma-separated string or an array. Search-like results are
// {"items":[…],"total":N,"limit":L,"offset":O}.
//
// # Errors
//
// Every domain error is an *op.Error {code, message, details} with code
// VALIDATION_ERROR, NOT_FOUND, CONFLICT or INVARIANT_VIOLATION; the message
// names the field and the fix, details.field names the parameter and a
// CONFLICT carries details.currentVersion. (*op.Error).Exit maps codes to
// sysexits: 65, 66, 75.
//
// # Validation split
//
// Decode and Validate check what needs no store: the operation, required
// and not-applicable parameters (a parameter that does not apply to the
// operation or entity type is an error, not silently ignored), id formats
// (entity ids are lower-case UUIDs), text bounds (name 1-255 characters,
// knowledge ≤ 32 KB after trimming, summary 1 byte-4 KB), glob syntax and
// the path rules (relative, no "..", ≤ 20 patterns × 512 characters,
// non-empty: INVARIANT_VIOLATION), related arrays (≤ 50 entries), paging
// (limit 1-100, offset ≥ 0). Validate trims text and lower-cases ids in
// place. Existence, versions, project membership and run ids are the
// stores' checks (package knowledge and below).
//
// This package does not touch a database or the file system and imports
// nothing heavy (the lean CLI links it): only the standard library, its
// three subpackages and doublestar (through graphop and vectorop).
//
// # Concurrency
//
// Stateless: every function is safe for concurrent use; a request value
// is not.
//
// # Crash behaviour
//
// Nothing is written; nothing to recover.
package api
