// Package op owns what every knowledge operation shares: the Request
// interface and the table that names and makes requests, the spec's
// domain Error with its codes and sysexits, Page, the store choice,
// strict parameter decoding (unknown parameters and wrong shapes are a
// VALIDATION_ERROR naming the field; integers and booleans may come as
// strings, as the CLI's key=value form passes them), the validation
// primitives (ids, names, task ids, ranges, pages, "does not apply") and
// the text primitives of the compact CLI rendering (clipping, paging,
// bounded blocks that say where the rest is).
//
// The operations themselves live in knowledge/api/graphop (the knowledge
// graph: atoms, molecules, changelog, projects, history, verify,
// task_context) and knowledge/api/vectorop (the vector graph: search,
// recall, ingest, nodes, traversal, conflicts); knowledge/api puts them
// together (Decode, Text, init, status).
//
// # Invariants
//
//   - Every domain error is an *Error {code, message, details} with code
//     VALIDATION_ERROR, NOT_FOUND, CONFLICT or INVARIANT_VIOLATION; the
//     message names the field and the fix, details.field names the
//     parameter, a CONFLICT carries details.currentVersion.
//   - Decoding never half-applies: Unmarshal fills the request field by
//     field and stops at the first bad one with an error naming it.
//   - Entity ids are lower-case UUIDs; validation lower-cases and trims in
//     place.
//
// This package does not touch a database or the file system and imports
// only the standard library (the lean CLI links it).
//
// # Concurrency
//
// Stateless but for a cache of struct field tables (a sync.Map); every
// function is safe for concurrent use. A request value is not.
//
// # Crash behaviour
//
// Nothing is written; nothing to recover.
package op
