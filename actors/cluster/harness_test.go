package cluster_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/actors/cluster"
	"github.com/pi-actors/pi-actors/internal/testproc"
)

// bin holds the pi-actors and pi-actors-cluster binaries the tests run:
// every kernel is a real process with its own agent root, as on separate
// machines, talking over loopback.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "pa-cluster-bin")
	if err != nil {
		panic(err)
	}
	cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "github.com/pi-actors/pi-actors/cmd/pi-actors", "github.com/pi-actors/pi-actors/cmd/pi-actors-cluster", "github.com/pi-actors/pi-actors/cmd/pi-actors-supervise")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build binaries: %v\n%s", err, out)
		os.Exit(2)
	}
	bin = dir
	os.Setenv(cluster.TestBinEnv, dir) // for the package's internal tests
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// member is one kernel of a test cluster.
type member struct {
	name   string
	root   string // its agent root
	manage int    // automanaged health port
	config string // [cluster] body, written to pi-actors.toml
}

// testCluster is a set of kernels on loopback with a cluster CA.
type testCluster struct {
	t       *testing.T
	dir     string
	ca      string
	certs   string
	members map[string]*member
	order   []string
}

// newCluster writes a CA and one certificate per node, an agent root per
// node with [cluster] (automanaged provider, every node a peer, mutual
// TLS), starts every kernel and waits until each sees every other up.
func newCluster(t *testing.T, names ...string) *testCluster {
	t.Helper()
	c := withCA(t)
	for _, n := range names {
		c.add(n, nil)
	}
	c.writeConfigs()
	c.startAll()
	for _, n := range names {
		c.waitUp(n, 20*time.Second, names...)
	}
	return c
}

// withCA is a cluster with its CA written and no member yet.
func withCA(t *testing.T) *testCluster {
	t.Helper()
	c := &testCluster{t: t, dir: t.TempDir(), members: map[string]*member{}}
	c.ca, c.certs = filepath.Join(c.dir, "ca"), filepath.Join(c.dir, "certs")
	c.run("", "cluster", "ca", "dir="+c.ca)
	return c
}

// startAll starts every member's kernel, in the order added; they are
// stopped when the test ends.
func (c *testCluster) startAll() {
	c.t.Helper()
	c.t.Cleanup(c.close)
	for _, n := range c.order {
		c.start(n)
	}
}

// add makes a member (its certificate from the cluster CA unless it has
// one already); writeConfigs must follow.
func (c *testCluster) add(name string, edit func(m *member)) *member {
	m := &member{name: name, root: filepath.Join(c.dir, name), manage: testproc.MustFreePort(c.t)}
	os.MkdirAll(m.root, 0o700)
	if _, err := os.Stat(filepath.Join(c.certs, name+".crt")); err != nil {
		c.run("", "cluster", "cert", "node="+name, "ca="+c.ca, "out="+c.certs)
	}
	m.config = fmt.Sprintf("name = \"test\"\nnode = %q\nprovider = \"automanaged\"\nmanage = \"127.0.0.1:%d\"\nbind = \"127.0.0.1:0\"\n"+
		"tls_ca = %q\ntls_cert = %q\ntls_key = %q\n", name, m.manage,
		filepath.Join(c.ca, "ca.crt"), filepath.Join(c.certs, name+".crt"), filepath.Join(c.certs, name+".key"))
	if edit != nil {
		edit(m)
	}
	c.members[name] = m
	c.order = append(c.order, name)
	return m
}

// writeConfigs writes every member's pi-actors.toml; every member lists
// every member's manage address as a peer.
func (c *testCluster) writeConfigs() {
	var peers []string
	for _, n := range c.order {
		peers = append(peers, fmt.Sprintf("%q", fmt.Sprintf("127.0.0.1:%d", c.members[n].manage)))
	}
	for _, n := range c.order {
		m := c.members[n]
		body := "[cluster]\n" + m.config
		if !strings.Contains(m.config, "peers") && strings.Contains(m.config, "automanaged") {
			body += "peers = [" + strings.Join(peers, ", ") + "]\n"
		}
		if err := os.WriteFile(filepath.Join(m.root, "pi-actors.toml"), []byte(body), 0o600); err != nil {
			c.t.Fatal(err)
		}
	}
}

func (c *testCluster) start(name string) {
	c.t.Helper()
	if out, code := c.cli(name, "kernel", "start"); code != 0 {
		c.t.Fatalf("kernel start %s: exit %d\n%s", name, code, out)
	}
}

// cli runs pi-actors as a client of member name (session s1).
func (c *testCluster) cli(name string, args ...string) (string, int) {
	return c.cliIn(name, "s1", "", args...)
}

// cliIn runs pi-actors for member name with a session and stdin.
func (c *testCluster) cliIn(name, session, stdin string, args ...string) (string, int) {
	cmd := exec.Command(filepath.Join(bin, "pi-actors"), args...)
	cmd.Env = append(testproc.CleanEnv(), "PI_ACTORS_SESSION="+session)
	if name != "" {
		cmd.Env = append(cmd.Env, "PI_CODING_AGENT_DIR="+c.members[name].root)
		cmd.Dir = c.members[name].root
	} else {
		cmd.Env = append(cmd.Env, "PI_CODING_AGENT_DIR="+filepath.Join(c.dir, "none"))
	}
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		c.t.Fatalf("pi-actors %v: %v", args, err)
	}
	return out.String(), code
}

// proc is a pi-actors call left running (logs -f, watch).
type proc struct {
	cmd  *exec.Cmd
	out  *syncBuffer
	exit chan int
}

// background starts pi-actors as a client of member name (session s1);
// it is killed when the test ends.
func (c *testCluster) background(name string, args ...string) *proc {
	c.t.Helper()
	p := &proc{cmd: exec.Command(filepath.Join(bin, "pi-actors"), args...), out: &syncBuffer{}, exit: make(chan int, 1)}
	p.cmd.Env = append(testproc.CleanEnv(), "PI_ACTORS_SESSION=s1", "PI_CODING_AGENT_DIR="+c.members[name].root)
	p.cmd.Dir = c.members[name].root
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	go func() {
		p.cmd.Wait()
		p.exit <- p.cmd.ProcessState.ExitCode()
	}()
	c.t.Cleanup(func() { p.cmd.Process.Kill() })
	return p
}

// exited waits for the call to end within d and returns its exit code.
func (p *proc) exited(t *testing.T, d time.Duration, what string) int {
	t.Helper()
	select {
	case code := <-p.exit:
		return code
	case <-time.After(d):
		t.Fatalf("%s: still running after %s\n%s", what, d, p.out.String())
		return 0
	}
}

// run is cli that must succeed.
func (c *testCluster) run(name string, args ...string) string {
	c.t.Helper()
	out, code := c.cli(name, args...)
	if code != 0 {
		c.t.Fatalf("pi-actors %s (node %s): exit %d\n%s", strings.Join(args, " "), name, code, out)
	}
	return out
}

// json runs a --json call and returns its envelope.
func (c *testCluster) json(name string, args ...string) (map[string]any, int) {
	c.t.Helper()
	out, code := c.cli(name, append(args, "--json")...)
	var env map[string]any
	if err := json.Unmarshal([]byte(out), &env); err != nil {
		c.t.Fatalf("pi-actors %s --json (node %s): %v\n%s", strings.Join(args, " "), name, err, out)
	}
	return env, code
}

// nodes is member name's view: node → status.
func (c *testCluster) nodes(name string) map[string]string {
	env, code := c.json(name, "inspect", "target=cluster", "view=nodes")
	out := map[string]string{}
	if code != 0 {
		return out
	}
	res, _ := env["result"].(map[string]any)
	list, _ := res["nodes"].([]any)
	for _, n := range list {
		m := n.(map[string]any)
		out[m["node"].(string)] = m["status"].(string)
	}
	return out
}

// waitUp waits until name sees every node in want up.
func (c *testCluster) waitUp(name string, within time.Duration, want ...string) time.Duration {
	c.t.Helper()
	return c.waitStatus(name, within, "up", want...)
}

// waitStatus waits until name sees every node in want with status.
func (c *testCluster) waitStatus(name string, within time.Duration, status string, want ...string) time.Duration {
	c.t.Helper()
	start := time.Now()
	var seen map[string]string
	for time.Since(start) < within {
		seen = c.nodes(name)
		ok := true
		for _, w := range want {
			ok = ok && seen[w] == status
		}
		if ok {
			return time.Since(start)
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.t.Fatalf("node %s does not see %v %s within %s: %v", name, want, status, within, seen)
	return 0
}

// kernelPid is member name's kernel process.
func (c *testCluster) kernelPid(name string) int {
	b, err := os.ReadFile(filepath.Join(c.members[name].root, "tmp", "pi-actors", "kernel.json"))
	if err != nil {
		c.t.Fatalf("kernel.json of %s: %v", name, err)
	}
	var info struct {
		Pid int `json:"pid"`
	}
	if json.Unmarshal(b, &info) != nil || info.Pid <= 0 {
		c.t.Fatalf("kernel.json of %s names no pid: %s", name, b)
	}
	return info.Pid
}

// close kills every process any member started: kernels, supervisors,
// leaves (found by the agent root in their environment).
func (c *testCluster) close() {
	for _, n := range c.order {
		// Never pid -1 (a member without kernel.json): kill(-1, …) signals
		// every process this user may signal — it continued the stopped
		// runs of other tests' suspended sessions.
		if pid := c.kernelPidQuiet(n); pid > 0 {
			syscall.Kill(pid, syscall.SIGCONT)
		}
	}
	for i := 0; i < 50; i++ {
		pids := testproc.AgentProcesses(c.dir)
		if len(pids) == 0 {
			return
		}
		for _, p := range pids {
			syscall.Kill(p, syscall.SIGCONT)
			syscall.Kill(p, syscall.SIGKILL)
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.t.Errorf("processes left behind: %v", testproc.AgentProcesses(c.dir))
}

func (c *testCluster) kernelPidQuiet(name string) int {
	b, err := os.ReadFile(filepath.Join(c.members[name].root, "tmp", "pi-actors", "kernel.json"))
	if err != nil {
		return -1
	}
	var info struct {
		Pid int `json:"pid"`
	}
	json.Unmarshal(b, &info)
	if info.Pid <= 0 {
		return -1
	}
	return info.Pid
}

// eventually polls cond until it holds or within passes.
func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s: not within %s", what, within)
}
