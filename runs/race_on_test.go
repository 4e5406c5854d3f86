//go:build race

package runs_test

// raceEnabled: the race detector slows a follower several times over.
const raceEnabled = true
