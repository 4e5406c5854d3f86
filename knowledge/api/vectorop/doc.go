// Package vectorop owns the vector graph's operations (seed 001: search,
// search_all, smart_search, recall, ingest, node_add, node_get, traverse,
// conflicts): one typed request struct per operation with json and
// jsonschema tags, its validation, the result types (hits, nodes, steps,
// conflicts, ingest counts, the vector part of a store's status) and
// their compact text; and the vocabulary of the graph: domains (code,
// history, academic), node and edge types, trust levels and their
// defaults, provenance sources, conflict types.
//
// # Invariants
//
//   - A node type implies its domain; a type without a domain sets it.
//   - Queries are 1 byte to 1 KB after trimming; a node's content at most
//     32 KB, its links at most 50, each to a node id (a UUID) over a known
//     edge type.
//   - Trust is 0-100; DefaultTrust is seed 001's hierarchy (code 100 …
//     model output 20).
//
// This package does not touch a database, an index or the file system
// (package knowledge/vector does) and imports only the standard library,
// doublestar (glob syntax) and knowledge/api/op.
//
// # Concurrency
//
// Stateless: every function is safe for concurrent use; a request value
// is not (Validate normalises it in place).
//
// # Crash behaviour
//
// Nothing is written; nothing to recover.
package vectorop
