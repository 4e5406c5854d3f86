// Package hnsw owns an in-memory approximate nearest-neighbour index: a
// Hierarchical Navigable Small World graph (Malkov & Yashunin, 2016) in pure
// Go, with flat storage, deletes, filtered search and a fast on-disk format.
//
// # Model
//
// Every vector added gets an internal slot (0, 1, 2, …) in the order it was
// added. Slots are never moved or reused: vectors live in one flat []float32
// (slot i at [i*dim, (i+1)*dim)), level-0 neighbour lists in one fixed-size
// slab of 1+M0 uint32 per slot (a count, then the neighbours), and the lists
// of the upper levels in a second slab of 1+M uint32 per (slot, level) for
// the few slots that reach level 1 or higher. The only map is a compact
// open-addressing table from the caller's uint64 id to the slot.
//
// Insertion follows the paper: a random level drawn with mL = 1/ln(M), a
// greedy descent through the upper levels, a beam search of width
// EfConstruction on each level the new vector occupies, and the
// neighbour-selection heuristic (the paper's algorithm 4, without the
// candidate extension) both for the new vector's own list (up to the
// level's capacity, as in FAISS) and when an overfull neighbour list is
// pruned. Defaults: M=16, M0=2M,
// EfConstruction=200, EfSearch=64.
//
// Metrics: Cosine (vectors are L2-normalised when added and queries when
// searched; the distance is 1-cos), L2 (squared Euclidean distance) and
// InnerProduct (1-dot; vectors are used as given). On amd64 CPUs with
// AVX2 and FMA the dot product and the squared L2 distance are two small
// assembly kernels (simd_amd64.s: four 8-wide accumulators, called
// directly, no function value or length checks per call), and a whole
// neighbour list is scored by one call (dotBatchAVX2); elsewhere, and when
// built with the purego tag, scalar loops (see SIMD).
//
// A search is bound by memory latency, not arithmetic: it scores a few
// hundred vectors scattered over the slab. So before scoring a neighbour
// list it asks for every cache line of every unvisited neighbour's vector
// (and, on level 0, for the list of each new candidate), so that the
// misses overlap; on amd64 a small assembly stub issues the prefetches
// (a no-op elsewhere and under purego). On Linux the big slabs (4 MiB and
// more) are advised to transparent huge pages, which saves most TLB
// misses; the visited set is a generation-stamped []uint16 (half the cache
// footprint of uint32, cleared once per 65,535 searches). No cgo anywhere.
//
// # Invariants
//
//   - Every neighbour entry is a slot below Len+deleted count; lists hold at
//     most M0 (level 0) or M (upper levels) entries; the entry point is a
//     slot on the highest level. The list-scoring kernel reads rows
//     without bounds checks and relies on this (Read checks every list
//     before the index is used).
//   - Delete tombstones a slot: its id leaves the id table, it is never
//     returned again, but its vector and lists stay so searches can still
//     pass through it. Its neighbours that linked back to it are repaired at
//     once (the link is replaced by the best of the deleted slot's own
//     neighbours, chosen with the heuristic); other links to it are dropped
//     whenever the list holding them is next pruned. An id may be added
//     again after a delete; it gets a new slot.
//   - SearchFilter applies keep only to what it returns: the traversal
//     still walks through rejected and deleted slots, so a selective filter
//     costs more distance computations but does not lose reachable matches.
//
// # On-disk format (version 1, little endian)
//
//	magic "PIHNSW\x00\x01", version u32, header (dim, metric, M, M0,
//	EfConstruction, EfSearch, seed, slots, live, entry, max level, upper
//	slab length), then flat sections: ids (u64 per slot), levels (u8 per
//	slot, padded to 8 bytes), tombstone bitset (u64 words), vectors (f32),
//	level-0 slab (u32), upper offsets (u32 per slot), upper slab (u32),
//	and a CRC-32C of everything before it.
//
// Read allocates each section once and reads it straight into place, then
// checks the checksum and every structural bound, so truncated, foreign or
// corrupted data is rejected with an error instead of panicking later.
//
// # What it does not do
//
// It does not store payloads, persist incrementally, compact tombstoned
// slots (write and rebuild the index for that), or know about SQLite or
// embedders; the knowledge store owns those.
//
// # Concurrency
//
// An Index is safe for concurrent use: searches share a read lock, Add,
// Delete and AddBatch take the write lock. AddBatch inserts with several
// goroutines under that write lock, using striped per-slot locks between
// its own workers.
package hnsw
