// Package embed owns the knowledge store's embedders: what turns text into
// the vectors that knowledge/hnsw indexes. One small interface, Embedder,
// and two implementations.
//
// # Local (the default)
//
// Local needs no network and no model file. It is deterministic feature
// hashing: word unigrams and bigrams (words split at non-alphanumerics and
// at camelCase/letter-digit boundaries, lowercased) and character 3-, 4- and
// 5-grams of each word (with boundary marks, as in fastText) are hashed into
// 384 dimensions with a hash-derived sign, weighted, summed and
// L2-normalised. Its ID, local-hash-384-v1, names exactly this algorithm:
// any change to the output makes a new ID, so stored vectors never mix
// versions.
//
// Good at: lexical overlap, identifiers and paths (a function name finds
// its definition and its callers), partial words and typos (through the
// character n-grams), any language or script, speed (microseconds per text).
// Bad at: synonyms ("car" vs "automobile"), paraphrase, negation, and
// anything cross-lingual — it knows spelling, not meaning. For those,
// configure a model through the OpenAI-compatible embedder.
//
// # OpenAI-compatible HTTP
//
// OpenAI posts {"model": …, "input": […]} to an /v1/embeddings endpoint
// (OpenAI, a local Ollama or llama.cpp server, …) in batches and reads
// data[i].embedding, in the order given by data[i].index. Its ID is
// openai:<model>@<host>; its dimension is configured or learned from the
// first response, and every later vector must match it.
//
// # What it does not do
//
// It does not cache, retry, rate-limit or store vectors, and does not
// choose between embedders: the knowledge store records each vector's
// embedder ID and re-embeds when it changes.
//
// # Concurrency
//
// Both embedders are safe for concurrent use.
package embed
