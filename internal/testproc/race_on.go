//go:build race

package testproc

// Race reports whether this binary was built with the race detector,
// which makes every memory access several times slower: soak tests size
// their load by it.
const Race = true
