package actors

import (
	cmap "github.com/orcaman/concurrent-map"
)

// The actor system's process registry is 1,024 buckets, each a
// concurrent map of cmap.SHARD_COUNT shards (32 by default): 32,768 maps
// and 1.5 MiB of the kernel's heap before the first run, for a registry
// that holds one entry per live actor. One shard per bucket still stripes
// the registry 1,024 ways. Set before any actor system exists.
func init() { cmap.SHARD_COUNT = 1 }
