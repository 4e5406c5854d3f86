//go:build !race

package runs_test

const raceEnabled = false
