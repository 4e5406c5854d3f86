package testproc

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Ports tests hand to servers they start are picked below Linux's
// ephemeral range (32768-60999): a port found free there can be taken,
// before its server binds it, by an outgoing connection of any process
// on the machine (the test's own kernels dialling each other included).
const (
	portLow  = 20000
	portHigh = 32000
)

var (
	portsMu sync.Mutex
	given   = map[int]bool{}
)

// FreePort returns a loopback TCP port nothing listens on now and that
// this process has not handed out before.
func FreePort() (int, error) {
	portsMu.Lock()
	defer portsMu.Unlock()
	for range 1000 {
		p := portLow + rand.IntN(portHigh-portLow)
		if given[p] {
			continue
		}
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			continue
		}
		ln.Close()
		given[p] = true
		return p, nil
	}
	return 0, fmt.Errorf("no free loopback port in %d-%d", portLow, portHigh)
}

// TB is the part of testing.TB MustFreePort uses (this package does not
// import testing: its helpers run in plain binaries too).
type TB interface {
	Helper()
	Fatal(args ...any)
}

// MustFreePort is FreePort for a test: it fails the test when no port is
// free.
func MustFreePort(t TB) int {
	t.Helper()
	p, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// CleanEnv is this process's environment without pi-actors' own
// variables (PI_ACTORS_*, PI_CODING_AGENT_DIR): a child starts with no
// run identity and no agent root but the one a test gives it.
func CleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PI_ACTORS_") && !strings.HasPrefix(kv, "PI_CODING_AGENT_DIR=") {
			out = append(out, kv)
		}
	}
	return out
}

// AgentProcesses lists the processes (this one aside) whose environment
// names an agent root that is dir or under it.
func AgentProcesses(dir string) []int {
	return withEnv(func(kv []byte) bool {
		root, ok := bytes.CutPrefix(kv, []byte("PI_CODING_AGENT_DIR="))
		return ok && (string(root) == dir || strings.HasPrefix(string(root), dir+"/"))
	})
}

// withEnv lists the processes (this one aside) with an environment entry
// that match takes.
func withEnv(match func(kv []byte) bool) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if match(kv) {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}
