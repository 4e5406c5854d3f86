package top

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/pi-actors/pi-actors/internal/testproc"
	"github.com/pi-actors/pi-actors/verbs"
)

// The cluster scope against real kernels: two pi-actors-cluster kernels
// (nodes a and b) on loopback, automanaged provider, mutual TLS from
// `pi-actors cluster ca/cert`, each with its own agent root as on two
// machines. A run on b shows in a's top with its node — `top --once
// --cluster` and the model — its detail and log come from b, and
// restart and kill from a's cluster scope act on b's run.
func TestClusterScopeRealKernels(t *testing.T) {
	if testing.Short() {
		t.Skip("builds three binaries and starts two clustered kernels")
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin+"/", "../../cmd/pi-actors", "../../cmd/pi-actors-kernel", "../../cmd/pi-actors-cluster", "../../cmd/pi-actors-front", "../../cmd/pi-actors-supervise")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	dir, err := os.MkdirTemp("", "patc") // short: the kernel's socket path is limited
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		killAgents(t, dir)
		os.RemoveAll(dir)
	})
	c := &twoNodes{t: t, bin: bin, dir: dir}
	c.form("a", "b")

	c.run("a", "spawn", "as=run:far", "node=b", "template=sh -c 'echo far-line; exec sleep 300'")
	c.run("a", "spawn", "as=run:near", "template=sleep 300")
	eventually(t, "far's output on b", func() bool {
		out, _ := c.cli("b", "logs", "far")
		return strings.Contains(out, "far-line")
	})

	// top --once --cluster on a: both runs, each with its node.
	out := c.run("a", "top", "--once", "--cluster")
	for _, re := range []string{`(?m)^pi-actors top · cluster test 2/2 up · 2 runs, 2 live · session s1`,
		`(?m)^RUN +NODE +STATUS `, `(?m)^far +b +running +\S+ +0 `, `(?m)^near +a +running `} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("top --once --cluster lacks %s:\n%s", re, out)
		}
	}
	// ps --cluster (the same data, verbs.ClusterPs) agrees.
	if out := c.run("a", "ps", "--cluster"); !regexp.MustCompile(`(?m)^b +far `).MatchString(out) || !regexp.MustCompile(`(?m)^a +near `).MatchString(out) {
		t.Errorf("ps --cluster:\n%s", out)
	}
	// Without --cluster: this node's runs only, no NODE column.
	out = c.run("a", "top", "--once")
	if strings.Contains(out, "far") || strings.Contains(out, "NODE") || !strings.Contains(out, "near") {
		t.Errorf("top --once on a clustered kernel:\n%s", out)
	}

	// The model in this process, as a's top: c, then the row of run:far@b.
	t.Setenv("PI_CODING_AGENT_DIR", c.root("a"))
	t.Setenv("PI_ACTORS_SESSION", "s1")
	t.Setenv("PI_ACTORS_CLUSTER_BIN", filepath.Join(bin, "pi-actors-cluster"))
	env, err := verbs.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	if err := env.LoadConfig(); err != nil {
		t.Fatal(err)
	}
	m := New(env, 120, 30, false)
	firstFrame(t, m, env)
	run(t, m, keyMsg("c"))
	far := findRow(t, m, "far", "b")
	if far.Status != "running" || far.Pid <= 0 {
		t.Fatalf("far@b: %+v", far)
	}
	selectRun(t, m, "far", "b")

	m.Update(keyMsg("enter"))
	eventually(t, "far's detail pane from b", func() bool {
		run(t, m, m.refreshPane(false))
		return m.detail != nil && strings.HasPrefix(m.detail.facts, "run=far") && strings.Contains(strings.Join(m.detail.stdout, "\n"), "far-line")
	})
	if !strings.Contains(m.Render(), "── run:far@b · running") {
		t.Errorf("detail title:\n%s", m.Render())
	}
	m.Update(keyMsg("l"))
	eventually(t, "far's log from b", func() bool {
		run(t, m, m.refreshPane(false))
		return m.logs != nil && strings.Contains(strings.Join(m.logs.lines, "\n"), "far-line")
	})
	m.Update(keyMsg("esc"))
	m.Update(keyMsg("esc"))

	// restart, then kill, from the cluster scope.
	m.Update(keyMsg("r"))
	if !strings.Contains(m.footer(), "restart run:far@b?") {
		t.Fatalf("restart question: %q", m.footer())
	}
	run(t, m, keyMsg("y"))
	if !strings.HasPrefix(m.note, "restart: ") || !strings.Contains(m.note, "run:far@b") {
		t.Errorf("restart note %q", m.note)
	}
	eventually(t, "far restarted on b", func() bool {
		run(t, m, m.pollNow())
		r := findRow(t, m, "far", "b")
		return r.Status == "running" && r.Restarts == far.Restarts+1
	})
	selectRun(t, m, "far", "b")
	m.Update(keyMsg("K"))
	run(t, m, keyMsg("y"))
	if !strings.HasPrefix(m.note, "kill: ") || !strings.Contains(m.note, "run:far@b") {
		t.Errorf("kill note %q", m.note)
	}
	eventually(t, "far killed on b, as a's top shows it", func() bool {
		run(t, m, m.pollNow())
		return findRow(t, m, "far", "b").Status == "killed"
	})
	env2, _ := c.json("b", "inspect", "target=run:far", "view=status")
	if res, _ := env2["result"].(map[string]any); res["status"] != "killed" {
		t.Errorf("b's inspect of run:far: %v", env2)
	}
	// Nothing of far is left on b: its supervisor and leaf are gone; the
	// kernel (and the idle supervisor it keeps started ahead, run "-")
	// are b's only processes.
	var left []string
	eventually(t, "far's processes gone on b", func() bool {
		left = left[:0]
		for _, p := range testproc.AgentProcesses(c.root("b")) {
			cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
			if p == c.kernelPid("b") || strings.HasSuffix(string(cmd), "pi-actors-supervise\x00-\x00") {
				continue
			}
			left = append(left, fmt.Sprintf("%d %q", p, cmd))
		}
		return len(left) == 0
	})
	if len(left) > 0 {
		t.Errorf("left on b: %v", left)
	}
	if r := findRow(t, m, "near", ""); r.Status != "running" {
		t.Errorf("a's own run: %+v", r)
	}
}

// twoNodes is a two-node test cluster: a CA, a certificate and an agent
// root per node, kernels started by the lean CLI (pi-actors-cluster).
type twoNodes struct {
	t        *testing.T
	bin, dir string
}

func (c *twoNodes) root(node string) string { return filepath.Join(c.dir, node) }

// kernelPid is node's kernel process.
func (c *twoNodes) kernelPid(node string) int {
	var info struct {
		Pid int `json:"pid"`
	}
	b, err := os.ReadFile(filepath.Join(c.root(node), "tmp", "pi-actors", "kernel.json"))
	if err == nil {
		err = json.Unmarshal(b, &info)
	}
	if err != nil {
		c.t.Fatalf("kernel.json of %s: %v", node, err)
	}
	return info.Pid
}

// form writes the CA, the certificates and each node's [cluster]
// (automanaged, every node a peer, mutual TLS), starts the kernels and
// waits until each sees the other up.
func (c *twoNodes) form(nodes ...string) {
	c.t.Helper()
	ca, certs := filepath.Join(c.dir, "ca"), filepath.Join(c.dir, "certs")
	c.run("", "cluster", "ca", "dir="+ca)
	ports := map[string]int{}
	var peers []string
	for _, n := range nodes {
		c.run("", "cluster", "cert", "node="+n, "ca="+ca, "out="+certs)
		ports[n] = testproc.MustFreePort(c.t)
		peers = append(peers, strconv.Quote(fmt.Sprintf("127.0.0.1:%d", ports[n])))
	}
	for _, n := range nodes {
		os.MkdirAll(c.root(n), 0o700)
		body := fmt.Sprintf("[cluster]\nname = \"test\"\nnode = %q\nprovider = \"automanaged\"\nmanage = \"127.0.0.1:%d\"\nbind = \"127.0.0.1:0\"\n"+
			"tls_ca = %q\ntls_cert = %q\ntls_key = %q\npeers = [%s]\n", n, ports[n], filepath.Join(ca, "ca.crt"),
			filepath.Join(certs, n+".crt"), filepath.Join(certs, n+".key"), strings.Join(peers, ", "))
		if err := os.WriteFile(filepath.Join(c.root(n), "pi-actors.toml"), []byte(body), 0o600); err != nil {
			c.t.Fatal(err)
		}
	}
	for _, n := range nodes {
		c.run(n, "kernel", "start")
	}
	for _, n := range nodes {
		eventually(c.t, "node "+n+" sees every node up", func() bool {
			res, code := c.json(n, "inspect", "target=cluster", "view=nodes")
			if code != 0 {
				return false
			}
			up := 0
			list, _ := res["result"].(map[string]any)["nodes"].([]any)
			for _, x := range list {
				if x.(map[string]any)["status"] == "up" {
					up++
				}
			}
			return up == len(nodes)
		})
	}
}

// cli runs pi-actors as a client of node's kernel (session s1) with an
// 80-column frame for top; node "" is no node (cluster ca/cert).
func (c *twoNodes) cli(node string, args ...string) (string, int) {
	cmd := exec.Command(filepath.Join(c.bin, "pi-actors"), args...)
	cmd.Env = append(testproc.CleanEnv(), "PI_ACTORS_SESSION=s1", "COLUMNS=80", "LINES=24", "PI_CODING_AGENT_DIR="+c.root(orElse(node, "none")))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return out.String(), ee.ExitCode()
	} else if err != nil {
		c.t.Fatalf("pi-actors %v: %v", args, err)
	}
	return out.String(), 0
}

func (c *twoNodes) run(node string, args ...string) string {
	c.t.Helper()
	out, code := c.cli(node, args...)
	if code != 0 {
		c.t.Fatalf("pi-actors %s (node %s): exit %d\n%s", strings.Join(args, " "), node, code, out)
	}
	return out
}

func (c *twoNodes) json(node string, args ...string) (map[string]any, int) {
	c.t.Helper()
	out, code := c.cli(node, append(args, "--json")...)
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		c.t.Fatalf("pi-actors %s --json (node %s): %v\n%s", strings.Join(args, " "), node, err, out)
	}
	return v, code
}

// firstFrame applies the kernel's first runs frame to m.
func firstFrame(t *testing.T, m *Model, env *verbs.Env) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	err := verbs.StreamEvents(ctx, env, &verbs.Events{}, func(f *verbs.EventsFrame) error {
		m.apply(f)
		return errFirstFrame
	})
	if !errors.Is(err, errFirstFrame) {
		t.Fatalf("runs stream: %v", err)
	}
}

// run feeds msg to m (a tea.Cmd is run first), then runs the command
// it returns and feeds its message, and so on; a poll's answer ends the
// chain (what follows it is the timer of the next poll).
func run(t *testing.T, m *Model, msg tea.Msg) {
	t.Helper()
	for msg != nil {
		if cmd, ok := msg.(tea.Cmd); ok {
			if cmd == nil {
				return
			}
			msg = cmd()
			continue
		}
		_, cmd := m.Update(msg)
		if _, ok := msg.(clusterMsg); ok || cmd == nil {
			return
		}
		msg = cmd()
	}
}

// findRow is the row of run on node ("" for this node's) in m's list.
func findRow(t *testing.T, m *Model, id, node string) verbs.RunRow {
	t.Helper()
	for _, it := range m.items {
		if it.row.Run == id && it.row.Node == node {
			return *it.row
		}
	}
	t.Fatalf("run %s@%s is not listed:\n%s", id, node, m.Render())
	return verbs.RunRow{}
}

// eventually polls cond for up to 30 s (a loaded machine).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// killAgents kills every process whose environment names an agent root
// under dir (kernels, supervisors, leaves) and reports any that stay.
func killAgents(t *testing.T, dir string) {
	for range 100 {
		pids := testproc.AgentProcesses(dir)
		if len(pids) == 0 {
			return
		}
		for _, p := range pids {
			syscall.Kill(p, syscall.SIGCONT)
			syscall.Kill(p, syscall.SIGKILL)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("processes left behind: %v", testproc.AgentProcesses(dir))
}
