package actors

import (
	"runtime/debug"
	"time"

	cmap "github.com/orcaman/concurrent-map"
)

// The actor system's process registry is 1,024 buckets, each a
// concurrent map of cmap.SHARD_COUNT shards (32 by default): 32,768 maps
// and 1.5 MiB of the kernel's heap before the first run, for a registry
// that holds one entry per live actor. One shard per bucket still stripes
// the registry 1,024 ways. Set before any actor system exists.
func init() { cmap.SHARD_COUNT = 1 }

// releaseBatch is the batch size from which the kernel hands the memory
// a batch used back to the operating system once it is answered.
const releaseBatch = 32

// releaseAfter returns a large batch's transient memory (request and
// response buffers, encoders, spawn goroutines' grown stacks) to the
// operating system: a collection and a scavenge, a few milliseconds of
// one CPU, instead of the runtime's background scavenger giving it back
// over minutes while the kernel idles. The kernel lives as long as the
// agent root is in use; bursts must not set its size.
func releaseAfter(items int) {
	if items >= releaseBatch {
		// The batch's runs go on settling after the answer (run actors,
		// rooms, follow-up state): idleRelease makes a second pass once
		// the kernel is idle (a batch counts as its items).
		go debug.FreeOSMemory()
	}
}

// idleBurst is how many requests since the last release make the kernel
// hand memory back once it is idle (a few calls now and then leave the
// runtime's own scavenger to it).
const idleBurst = 16

// idleRelease hands back the memory a burst of requests left (50
// spawns one by one, say: no batch to release after) once the kernel
// has been idle for a whole second.
func (k *Kernel) idleRelease() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	var seen, released uint64
	for {
		select {
		case <-k.stopped:
			return
		case <-t.C:
		}
		n := k.work.Load()
		if n != seen {
			seen = n // busy in the last second
			continue
		}
		if n-released >= idleBurst {
			debug.FreeOSMemory()
		}
		released = n
	}
}
