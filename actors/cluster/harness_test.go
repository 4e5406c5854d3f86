package cluster_test

import (
	"fmt"
	"github.com/pi-actors/pi-actors/internal/testproc"
	"os"

	"testing"

	"github.com/pi-actors/pi-actors/actors/cluster"
	"github.com/pi-actors/pi-actors/internal/clustertest"
)

// bin holds the pi-actors and pi-actors-cluster binaries the tests run:
// every kernel is a real process with its own agent root, as on separate
// machines, talking over loopback (internal/clustertest).
var bin string

func TestMain(m *testing.M) {
	testproc.Watchdog()
	testproc.Parallel(4) // each test waits on kernels of its own
	dir, err := os.MkdirTemp("", "pa-cluster-bin")
	if err != nil {
		panic(err)
	}
	if err := clustertest.Build(dir, "pi-actors", "pi-actors-cluster", "pi-actors-supervise"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	bin = dir
	os.Setenv(cluster.TestBinEnv, dir) // for the package's internal tests
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
