package template

import (
	"os"
	"testing"

	"github.com/pi-actors/pi-actors/internal/testproc"
)

// TestMain doubles as the named helper processes (internal/testproc): when
// PI_ACTORS_TEST_HELPER is set the binary runs a helper instead of tests.
func TestMain(m *testing.M) {
	testproc.NoRaceExitSleep()
	if os.Getenv(testproc.EnvVar) != "" {
		testproc.Main(os.Args[1:])
	}
	testproc.Watchdog()
	os.Exit(m.Run())
}

// helperEnv is the environment that makes os.Args[0] a helper process.
func helperEnv() []string {
	return append(os.Environ(), testproc.EnvVar+"=1")
}

// helper returns argv for a helper process.
func helper(args ...string) []string {
	return append([]string{os.Args[0]}, args...)
}
