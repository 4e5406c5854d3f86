//go:build !race

package main

// raceEnabled loosens timing targets under the race detector.
const raceEnabled = false
