//go:build race

package cluster

// raceBuild: the race detector is on.
const raceBuild = true
