package testproc

import (
	"os"
	"strings"
)

// NoRaceExitSleep makes the race-instrumented processes a test starts
// (the test binary itself as a helper, a CLI, a kernel, a supervisor)
// exit at once: by default the race runtime sleeps a second in every
// process that exits with status 0 (GORACE atexit_sleep_ms=1000), to
// catch races with goroutines still running at exit. Under `go test
// -race` that second lands on every successful CLI call of a testscript
// and every run that ends: a script of 60 calls took 130 s instead of 2.
// Race detection itself is unchanged. It sets GORACE in this process's
// environment, which every child inherits; a GORACE that already names
// atexit_sleep_ms is left alone. Call it from TestMain.
func NoRaceExitSleep() {
	cur := os.Getenv("GORACE")
	if strings.Contains(cur, "atexit_sleep_ms") {
		return
	}
	os.Setenv("GORACE", strings.TrimSpace(cur+" atexit_sleep_ms=0"))
}
