package actors

import (
	"fmt"
	"net"
	"os"
	"testing"
	"time"
)

// A killed kernel's fallback socket in /tmp (nothing listens on it) is
// swept once it is old; a young one, a live one and this kernel's own
// stay.
func TestSweepStaleSockets(t *testing.T) {
	name := func(tag string) string {
		return fmt.Sprintf("/tmp/pi-actors-%d-sweeptest%s%d.sock", os.Getuid(), tag, os.Getpid())
	}
	dead := func(path string, age time.Duration) {
		ln, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		ln.(*net.UnixListener).SetUnlinkOnClose(false)
		ln.Close()
		old := time.Now().Add(-age)
		if err := os.Chtimes(path, old, old); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(path) })
	}
	stale, young, mine, live := name("stale"), name("young"), name("mine"), name("live")
	dead(stale, time.Hour)
	dead(young, 0)
	dead(mine, time.Hour)
	ln, err := net.Listen("unix", live)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	old := time.Now().Add(-time.Hour)
	os.Chtimes(live, old, old)

	sweepStaleSockets(mine, time.Minute)
	if _, err := os.Lstat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale socket is still there (%v)", err)
	}
	for _, p := range []string{young, mine, live} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
}
