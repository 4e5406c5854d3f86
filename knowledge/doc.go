// Package knowledge owns a knowledge store as the kernel uses it and the
// layering of stores: Store puts one file's parts together (the SQLite
// file of package store, the knowledge graph of package graph, the
// vector graph of package vector) with Open, Close and Status; Layers
// routes every operation of package api over the caller's project store
// (<repo>/.pi/knowledge.db) and personal store
// (<agent>/knowledge/knowledge.db); Init creates a project store.
//
// # Layering
//
//   - reads that are not by id (search, context, task_context,
//     project_list) ask the project store first, then the personal one,
//     and concatenate (a store where the project cannot be chosen is
//     skipped); pages span both stores;
//   - reads and writes by id (get, update, delete, changelog, history,
//     node_get, traverse, conflicts resolve) go to the first store that
//     has the id;
//   - creates, search, search_all, smart_search, ingest and node_add go to
//     the project store when there is one, unless store=personal;
//   - recall searches both and merges by score, the project's copy of a
//     duplicate winning;
//   - store=project|personal restricts any operation to that store.
//
// Every item is tagged with its store (Options.Layer).
//
// This package does not hold the graphs' logic (packages graph and
// vector), the file format (package store) or the operations' types and
// validation (package api and below), and does not talk to the kernel
// socket. Only the kernel opens stores.
//
// # Concurrency
//
// A *Store is safe for concurrent use (see packages store, graph and
// vector). Layers holds no state of its own beyond its two stores.
//
// # Crash behaviour
//
// Every operation is one transaction of one store; an operation over both
// stores (a layered read) writes nothing. Init creates the project store
// and its project in two transactions: a crash between them leaves a
// store without the project, which the next init adds.
package knowledge
