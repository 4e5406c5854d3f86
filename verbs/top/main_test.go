package top

import (
	"os"
	"testing"

	"github.com/pi-actors/pi-actors/internal/testproc"
)

// TestMain starts the watchdog: the tmux and cluster tests start kernels,
// which must not outlive a test binary killed by -timeout.
func TestMain(m *testing.M) {
	testproc.Watchdog()
	os.Exit(m.Run())
}
