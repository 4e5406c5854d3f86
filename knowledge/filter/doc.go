// Package filter owns the knowledge store's topic filters: per domain, a
// BinaryFuse8 filter (github.com/FastFilter/xorfilter) over topic keys, so
// that a search can answer "nothing here" without touching the vector index
// or SQLite, and can hint at which other domains may hold the topic.
//
// # Topic keys
//
// Tokens turns text into keys: it splits on anything that is not a Unicode
// letter or digit, lowercases, also splits identifiers at camelCase and
// letter/digit boundaries (so "retryPolicy2" gives "retrypolicy2", "retry",
// "policy"), drops tokens shorter than MinToken runes, and hashes each
// distinct token with 64-bit FNV-1a. The same text always gives the same
// keys, in every process: keys may be stored and filters rebuilt from them.
//
// # Invariants
//
//   - No false negatives: once Add(k) returns, MayContain(k) is true until
//     a Rebuild whose key list lacks k. A Set is its last built filter plus
//     an exact set of the keys added since; Rebuild swaps the new filter in
//     atomically and only then drops from the exact set the keys that the
//     rebuild's key list holds (checked against the list, never against the
//     filter, whose false positives would otherwise turn into false
//     negatives).
//   - False positives happen at about 1/256 per key probed (8-bit
//     fingerprints); a query of several tokens probes each.
//
// # What it does not do
//
// It does not persist filters (they are rebuilt from the store's keys), know
// about stopwords or stemming, or rank anything: a filter only rules topics
// out.
//
// # Concurrency
//
// Set and Domains are safe for concurrent use. Lookups take no lock while
// the exact set is empty (the usual state after a rebuild); Rebuild builds
// the new filter without holding the Set's lock.
package filter
