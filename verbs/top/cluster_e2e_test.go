package top

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/pi-actors/pi-actors/internal/clustertest"
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
	if err := clustertest.Build(bin, "pi-actors", "pi-actors-kernel", "pi-actors-cluster", "pi-actors-front", "pi-actors-supervise"); err != nil {
		t.Fatal(err)
	}
	c := clustertest.New(t, bin, "a", "b")
	c.Env = []string{"COLUMNS=80", "LINES=24"} // top's frame

	c.Run("a", "spawn", "as=run:far", "node=b", "template=sh -c 'echo far-line; exec sleep 300'")
	c.Run("a", "spawn", "as=run:near", "template=sleep 300")
	clustertest.Eventually(t, 30*time.Second, "far's output on b", func() bool {
		out, _ := c.CLI("b", "logs", "far")
		return strings.Contains(out, "far-line")
	})

	// top --once --cluster on a: both runs, each with its node.
	out := c.Run("a", "top", "--once", "--cluster")
	for _, re := range []string{`(?m)^pi-actors top · cluster test 2/2 up · 2 runs, 2 live · session s1`,
		`(?m)^RUN +NODE +STATUS `, `(?m)^far +b +running +\S+ +0 `, `(?m)^near +a +running `} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("top --once --cluster lacks %s:\n%s", re, out)
		}
	}
	// ps --cluster (the same data, verbs.ClusterPs) agrees.
	if out := c.Run("a", "ps", "--cluster"); !regexp.MustCompile(`(?m)^b +far `).MatchString(out) || !regexp.MustCompile(`(?m)^a +near `).MatchString(out) {
		t.Errorf("ps --cluster:\n%s", out)
	}
	// Without --cluster: this node's runs only, no NODE column.
	out = c.Run("a", "top", "--once")
	if strings.Contains(out, "far") || strings.Contains(out, "NODE") || !strings.Contains(out, "near") {
		t.Errorf("top --once on a clustered kernel:\n%s", out)
	}

	// The model in this process, as a's top: c, then the row of run:far@b.
	t.Setenv("PI_CODING_AGENT_DIR", c.Root("a"))
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
	clustertest.Eventually(t, 30*time.Second, "far's detail pane from b", func() bool {
		run(t, m, m.refreshPane(false))
		return m.detail != nil && strings.HasPrefix(m.detail.facts, "run=far") && strings.Contains(strings.Join(m.detail.stdout, "\n"), "far-line")
	})
	if !strings.Contains(m.Render(), "── run:far@b · running") {
		t.Errorf("detail title:\n%s", m.Render())
	}
	m.Update(keyMsg("l"))
	clustertest.Eventually(t, 30*time.Second, "far's log from b", func() bool {
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
	clustertest.Eventually(t, 30*time.Second, "far restarted on b", func() bool {
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
	clustertest.Eventually(t, 30*time.Second, "far killed on b, as a's top shows it", func() bool {
		run(t, m, m.pollNow())
		return findRow(t, m, "far", "b").Status == "killed"
	})
	env2, _ := c.JSON("b", "inspect", "target=run:far", "view=status")
	if res, _ := env2["result"].(map[string]any); res["status"] != "killed" {
		t.Errorf("b's inspect of run:far: %v", env2)
	}
	// Nothing of far is left on b: its supervisor and leaf are gone; the
	// kernel (and the idle supervisor it keeps started ahead, run "-")
	// are b's only processes.
	var left []string
	clustertest.Eventually(t, 30*time.Second, "far's processes gone on b", func() bool {
		left = left[:0]
		for _, p := range testproc.AgentProcesses(c.Root("b")) {
			cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
			if p == c.KernelPid("b") || strings.HasSuffix(string(cmd), "pi-actors-supervise\x00-\x00") {
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
