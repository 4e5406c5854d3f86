// Package clustertest runs test clusters for the packages whose tests
// need real clustered kernels (actors/cluster, verbs/top): a cluster CA,
// one certificate, agent root and pi-actors.toml per node, each node's
// kernel a real process on loopback — as on separate machines — driven
// through the real CLI. Only tests import it.
package clustertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/internal/testproc"
)

// Build builds the named commands of this module (cmd/<name>) into dir,
// as the README's install does (no cgo).
func Build(dir string, names ...string) error {
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	for _, n := range names {
		args = append(args, "github.com/pi-actors/pi-actors/cmd/"+n)
	}
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", strings.Join(names, " "), err, out)
	}
	return nil
}

// Member is one node of a test cluster.
type Member struct {
	Name   string
	Root   string // its agent root
	Manage int    // automanaged health port
	Config string // [cluster] body, written to pi-actors.toml
}

// Cluster is a set of kernels on loopback with a cluster CA.
type Cluster struct {
	T       testing.TB
	Bin     string // holds pi-actors and the binaries it execs
	Dir     string // every member's root, the CA and the certificates
	CA      string
	Certs   string
	Members map[string]*Member
	Order   []string // members, in the order added
	// Env is added to the environment of every CLI call.
	Env []string
}

// New writes a CA and one certificate per node, an agent root per node
// with [cluster] (automanaged provider, every node a peer, mutual TLS),
// starts every kernel and waits (30 s: a loaded machine) until each sees
// every other up.
func New(t testing.TB, bin string, names ...string) *Cluster {
	t.Helper()
	c := WithCA(t, bin)
	for _, n := range names {
		c.Add(n, nil)
	}
	c.WriteConfigs()
	c.StartAll()
	for _, n := range names {
		c.WaitUp(n, 30*time.Second, names...)
	}
	return c
}

// WithCA is a cluster with its CA written and no member yet.
func WithCA(t testing.TB, bin string) *Cluster {
	t.Helper()
	c := &Cluster{T: t, Bin: bin, Dir: t.TempDir(), Members: map[string]*Member{}}
	c.CA, c.Certs = filepath.Join(c.Dir, "ca"), filepath.Join(c.Dir, "certs")
	c.Run("", "cluster", "ca", "dir="+c.CA)
	return c
}

// Root is member name's agent root.
func (c *Cluster) Root(name string) string { return c.Members[name].Root }

// StartAll starts every member's kernel, in the order added; everything
// they start is killed when the test ends (Close).
func (c *Cluster) StartAll() {
	c.T.Helper()
	c.T.Cleanup(c.Close)
	for _, n := range c.Order {
		c.Start(n)
	}
}

// Add makes a member (its certificate from the cluster CA unless it has
// one already); edit may change it before it is kept. WriteConfigs must
// follow.
func (c *Cluster) Add(name string, edit func(m *Member)) *Member {
	m := &Member{Name: name, Root: filepath.Join(c.Dir, name), Manage: testproc.MustFreePort(c.T)}
	os.MkdirAll(m.Root, 0o700)
	if _, err := os.Stat(filepath.Join(c.Certs, name+".crt")); err != nil {
		c.Run("", "cluster", "cert", "node="+name, "ca="+c.CA, "out="+c.Certs)
	}
	m.Config = fmt.Sprintf("name = \"test\"\nnode = %q\nprovider = \"automanaged\"\nmanage = \"127.0.0.1:%d\"\nbind = \"127.0.0.1:0\"\n"+
		"tls_ca = %q\ntls_cert = %q\ntls_key = %q\n", name, m.Manage,
		filepath.Join(c.CA, "ca.crt"), filepath.Join(c.Certs, name+".crt"), filepath.Join(c.Certs, name+".key"))
	if edit != nil {
		edit(m)
	}
	c.Members[name] = m
	c.Order = append(c.Order, name)
	return m
}

// WriteConfigs writes every member's pi-actors.toml; an automanaged
// member without peers of its own lists every member's manage address.
func (c *Cluster) WriteConfigs() {
	var peers []string
	for _, n := range c.Order {
		peers = append(peers, fmt.Sprintf("%q", fmt.Sprintf("127.0.0.1:%d", c.Members[n].Manage)))
	}
	for _, n := range c.Order {
		m := c.Members[n]
		body := "[cluster]\n" + m.Config
		if !strings.Contains(m.Config, "peers") && strings.Contains(m.Config, "automanaged") {
			body += "peers = [" + strings.Join(peers, ", ") + "]\n"
		}
		if err := os.WriteFile(filepath.Join(m.Root, "pi-actors.toml"), []byte(body), 0o600); err != nil {
			c.T.Fatal(err)
		}
	}
}

// Start starts member name's kernel.
func (c *Cluster) Start(name string) {
	c.T.Helper()
	if out, code := c.CLI(name, "kernel", "start"); code != 0 {
		c.T.Fatalf("kernel start %s: exit %d\n%s", name, code, out)
	}
}

// CLI runs pi-actors as a client of member name (session s1); name ""
// is no member (cluster ca and cert).
func (c *Cluster) CLI(name string, args ...string) (string, int) {
	return c.CLIIn(name, "s1", "", args...)
}

// CLIIn is CLI with a session and stdin.
func (c *Cluster) CLIIn(name, session, stdin string, args ...string) (string, int) {
	cmd := c.command(name, session, args)
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		c.T.Fatalf("pi-actors %v: %v", args, err)
	}
	return out.String(), code
}

// CLISplit is CLI with stdout and stderr apart.
func (c *Cluster) CLISplit(name string, args ...string) (stdout, stderr string, code int) {
	cmd := c.command(name, "s1", args)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		c.T.Fatalf("pi-actors %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// command is pi-actors args as a client of member name, in its root.
func (c *Cluster) command(name, session string, args []string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(c.Bin, "pi-actors"), args...)
	cmd.Env = append(append(testproc.CleanEnv(), c.Env...), "PI_ACTORS_SESSION="+session)
	if name != "" {
		cmd.Env = append(cmd.Env, "PI_CODING_AGENT_DIR="+c.Members[name].Root)
		cmd.Dir = c.Members[name].Root
	} else {
		cmd.Env = append(cmd.Env, "PI_CODING_AGENT_DIR="+filepath.Join(c.Dir, "none"))
	}
	return cmd
}

// Run is CLI that must succeed; it returns the output.
func (c *Cluster) Run(name string, args ...string) string {
	c.T.Helper()
	out, code := c.CLI(name, args...)
	if code != 0 {
		c.T.Fatalf("pi-actors %s (node %s): exit %d\n%s", strings.Join(args, " "), name, code, out)
	}
	return out
}

// JSON runs a --json call and returns its envelope and exit code.
func (c *Cluster) JSON(name string, args ...string) (map[string]any, int) {
	c.T.Helper()
	out, code := c.CLI(name, append(args, "--json")...)
	var env map[string]any
	if err := json.Unmarshal([]byte(out), &env); err != nil {
		c.T.Fatalf("pi-actors %s --json (node %s): %v\n%s", strings.Join(args, " "), name, err, out)
	}
	return env, code
}

// Nodes is member name's view of the cluster: node → status.
func (c *Cluster) Nodes(name string) map[string]string {
	env, code := c.JSON(name, "inspect", "target=cluster", "view=nodes")
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

// WaitUp waits until name sees every node in want up; it returns how
// long that took.
func (c *Cluster) WaitUp(name string, within time.Duration, want ...string) time.Duration {
	c.T.Helper()
	return c.WaitStatus(name, within, "up", want...)
}

// WaitStatus waits until name sees every node in want with status.
func (c *Cluster) WaitStatus(name string, within time.Duration, status string, want ...string) time.Duration {
	c.T.Helper()
	start := time.Now()
	var seen map[string]string
	for time.Since(start) < within {
		seen = c.Nodes(name)
		ok := true
		for _, w := range want {
			ok = ok && seen[w] == status
		}
		if ok {
			return time.Since(start)
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.T.Fatalf("node %s does not see %v %s within %s: %v", name, want, status, within, seen)
	return 0
}

// KernelPid is member name's kernel process (from its kernel.json).
func (c *Cluster) KernelPid(name string) int {
	pid := c.kernelPid(name)
	if pid <= 0 {
		c.T.Fatalf("kernel.json of %s names no kernel pid", name)
	}
	return pid
}

// kernelPid is KernelPid, -1 when kernel.json is missing or names none.
func (c *Cluster) kernelPid(name string) int {
	b, err := os.ReadFile(filepath.Join(c.Members[name].Root, "tmp", "pi-actors", "kernel.json"))
	if err != nil {
		return -1
	}
	var info struct {
		Pid int `json:"pid"`
	}
	if json.Unmarshal(b, &info) != nil || info.Pid <= 0 {
		return -1
	}
	return info.Pid
}

// Close kills every process any member started: kernels, supervisors,
// leaves (found by the agent root in their environment), continuing the
// stopped ones first; it reports any that stay.
func (c *Cluster) Close() {
	for _, n := range c.Order {
		// Never pid -1 (a member without kernel.json): kill(-1, …) signals
		// every process this user may signal — it continued the stopped
		// runs of other tests' suspended sessions.
		if pid := c.kernelPid(n); pid > 0 {
			syscall.Kill(pid, syscall.SIGCONT)
		}
	}
	for range 50 {
		pids := testproc.AgentProcesses(c.Dir)
		if len(pids) == 0 {
			return
		}
		for _, p := range pids {
			syscall.Kill(p, syscall.SIGCONT)
			syscall.Kill(p, syscall.SIGKILL)
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.T.Errorf("processes left behind: %v", testproc.AgentProcesses(c.Dir))
}

// Proc is a pi-actors call left running (logs -f, watch).
type Proc struct {
	Cmd  *exec.Cmd
	Out  *Buffer
	exit chan int
}

// Background starts pi-actors as a client of member name (session s1);
// it is killed when the test ends.
func (c *Cluster) Background(name string, args ...string) *Proc {
	c.T.Helper()
	p := &Proc{Cmd: c.command(name, "s1", args), Out: &Buffer{}, exit: make(chan int, 1)}
	p.Cmd.Stdout, p.Cmd.Stderr = p.Out, p.Out
	if err := p.Cmd.Start(); err != nil {
		c.T.Fatal(err)
	}
	go func() {
		p.Cmd.Wait()
		p.exit <- p.Cmd.ProcessState.ExitCode()
	}()
	c.T.Cleanup(func() { p.Cmd.Process.Kill() })
	return p
}

// Ended reports whether the call has ended, and its exit code (which
// Exited still returns).
func (p *Proc) Ended() (int, bool) {
	select {
	case code := <-p.exit:
		p.exit <- code
		return code, true
	default:
		return 0, false
	}
}

// Exited waits for the call to end within d and returns its exit code.
func (p *Proc) Exited(t testing.TB, d time.Duration, what string) int {
	t.Helper()
	select {
	case code := <-p.exit:
		return code
	case <-time.After(d):
		t.Fatalf("%s: still running after %s\n%s", what, d, p.Out.String())
		return 0
	}
}

// Buffer is a bytes.Buffer safe for a writing process and a reading
// test.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Eventually polls cond every 100 ms until it holds, or fails the test
// after within.
func Eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
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
