package main

import "runtime/debug"

// listingVerbs read many small files (every run's state) and exit: they
// run without garbage collection until the process holds gcLimit, then
// with it. Collecting a heap that the exit frees a moment later is wasted
// CPU — a quarter of a 10,000-run listing's. Long-lived verbs (watch,
// the bridge, foreground exec, swarm actors) keep the default.
var listingVerbs = map[string]bool{"inspect": true, "ps": true}

// gcLimit is the memory past which a listing verb collects again.
const gcLimit = 64 << 20

// listingGC switches the collector off up to gcLimit for a listing verb.
func listingGC(verb string) {
	if listingVerbs[verb] {
		debug.SetGCPercent(-1)
		debug.SetMemoryLimit(gcLimit)
	}
}
