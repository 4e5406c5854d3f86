package top

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/internal/config"
	"github.com/pi-actors/pi-actors/verbs"
)

// newClustered is newTest on a kernel of cluster "test" as node alpha.
func newClustered(t *testing.T, session string) *Model {
	t.Helper()
	env := &verbs.Env{AgentDir: t.TempDir(), Session: session}
	env.Config.Cluster = config.Cluster{Name: "test", Node: "alpha"}
	m := New(env, 80, 24, false)
	m.now = func() time.Time { return clock }
	m.Update(frameMsg{f: fixture()})
	return m
}

// clusterAnswer is a poll's answer: node gpu1 has three runs (one with the
// id of a run on alpha, one child of a run on alpha), spare is unreachable.
func clusterAnswer(gen int) clusterMsg {
	dir := func(id string) string { return "/agent/tmp/pi-actors/runs/" + id }
	return clusterMsg{gen: gen,
		res: &verbs.PsResult{Runs: []verbs.RunRow{
			{Run: "far", Node: "gpu1", Status: "running", Owner: "s1", Command: "sleep 300", Pid: 7, CreatedAt: clock.Add(-90 * time.Minute),
				CPUPercent: 0.1, RSSBytes: 1 << 20, StateDir: dir("far")},
			{Run: "web", Node: "gpu1", Status: "running", Owner: "s2", Command: "python3 -m http.server", Pid: 8, CreatedAt: clock.Add(-10 * time.Minute),
				RSSBytes: 20 << 20, LastLine: "serving on gpu1", StateDir: dir("web")},
			{Run: "gpu-job", Node: "gpu1", Parent: "worker-1", Status: "running", Owner: "s1", Recipe: "train", Pid: 9,
				CreatedAt: clock.Add(-15 * time.Minute), CPUPercent: 98, RSSBytes: 900 << 20, LastLine: "epoch 3", StateDir: dir("gpu-job")},
		}, Unreachable: map[string]string{"spare": "unreachable"}},
		nodes: &verbs.ClusterNodes{Cluster: "test", Node: "alpha", Nodes: []verbs.ClusterNode{
			{Node: "alpha", Status: "up", Self: true}, {Node: "gpu1", Status: "up"}, {Node: "spare", Status: "unreachable"}}}}
}

// selectRun moves the selection to the row of run on node ("" for this
// node's).
func selectRun(t *testing.T, m *Model, run, node string) {
	t.Helper()
	press(m, "g")
	for range m.items {
		if r := m.selected(); r != nil && r.Run == run && r.Node == node {
			return
		}
		press(m, "j")
	}
	t.Fatalf("run %s@%s is not listed", run, node)
}

func TestClusterGoldenFrames(t *testing.T) {
	cases := []struct {
		name  string
		setup func(m *Model)
	}{
		{name: "cluster-asking", setup: func(m *Model) { press(m, "c") }},
		{name: "cluster", setup: func(m *Model) {
			press(m, "c")
			m.Update(clusterAnswer(m.cl.gen))
		}},
		{name: "cluster-filter-node", setup: func(m *Model) {
			press(m, "c")
			m.Update(clusterAnswer(m.cl.gen))
			press(m, "/", "g", "p", "u", "1", "enter")
		}},
		{name: "cluster-kill-confirm", setup: func(m *Model) {
			press(m, "c")
			m.Update(clusterAnswer(m.cl.gen))
			selectRun(t, m, "far", "gpu1")
			press(m, "K")
		}},
		{name: "cluster-detail", setup: func(m *Model) {
			press(m, "c")
			m.Update(clusterAnswer(m.cl.gen))
			selectRun(t, m, "far", "gpu1")
			press(m, "enter")
			m.Update(detailMsg{dir: "gpu1\x00/agent/tmp/pi-actors/runs/far", d: &detail{
				facts:  "run=far status=running pid=7 node=gpu1 next=inspect_target=run:far@gpu1_view=tail",
				stdout: []string{"(empty)"}}})
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newClustered(t, "")
			c.setup(m)
			golden(t, c.name, readable(m.Render()))
		})
	}
	// Without a cluster, c says so and nothing else changes.
	m := newTest(t, "")
	before := m.Render()
	press(m, "c")
	if m.cl.on || !strings.Contains(m.Render(), "not clustered") {
		t.Errorf("c without a cluster:\n%s", m.Render())
	}
	press(m, "esc")
	if after := m.Render(); after != before {
		t.Errorf("c without a cluster changed the frame:\n%s\nwas:\n%s", after, before)
	}
	golden(t, "not-clustered", readable(func() string { press(m, "c"); return m.Render() }()))
}

// The poll chain: an answer schedules the next poll; answers of an older
// chain (the scope turned off and on) are dropped; off drops the other
// nodes' rows; a kill or restart polls at once.
func TestClusterPollChain(t *testing.T) {
	m := newClustered(t, "")
	local := len(m.items)
	_, cmd := m.Update(keyMsg("c"))
	if cmd == nil || !m.cl.on {
		t.Fatal("c on a clustered kernel did not ask the nodes")
	}
	old := m.cl.gen
	_, next := m.Update(clusterAnswer(old))
	if next == nil {
		t.Error("an answer did not schedule the next poll")
	}
	if len(m.items) != local+3 {
		t.Errorf("%d rows in the cluster scope, want %d", len(m.items), local+3)
	}
	if _, cmd := m.Update(clusterTickMsg{gen: old}); cmd == nil {
		t.Error("the chain's tick did not poll")
	}
	selectRun(t, m, "far", "gpu1")
	m.detail = &detail{facts: "run=far"}
	press(m, "c") // off
	if len(m.items) != local || m.cl.rows != nil {
		t.Errorf("off: %d rows, want %d", len(m.items), local)
	}
	if r := m.selected(); r == nil || r.Node != "" || m.detail != nil {
		t.Errorf("off: selected %+v, detail %+v (another node's run was selected)", r, m.detail)
	}
	if _, cmd := m.Update(clusterTickMsg{gen: old}); cmd != nil {
		t.Error("a tick of a stopped chain polled")
	}
	press(m, "c") // on again: a new chain
	if _, cmd := m.Update(clusterAnswer(old)); cmd != nil || len(m.cl.rows) != 0 {
		t.Error("an answer of the old chain was taken")
	}
	m.Update(clusterAnswer(m.cl.gen))
	gen := m.cl.gen
	if _, cmd := m.Update(actionMsg{note: "kill: to=run:far@gpu1"}); cmd == nil || m.cl.gen == gen {
		t.Error("a kill in the cluster scope did not poll at once")
	}
	// A failed poll keeps the rows as last seen and says why.
	m.Update(clusterMsg{gen: m.cl.gen, err: &verbs.Error{Exit: 69, Code: "unavailable", Message: "cluster side down"}})
	if len(m.cl.rows) != 3 || !strings.Contains(m.header(), "cluster test: cluster side down") {
		t.Errorf("after a failed poll: %d rows, header %q", len(m.cl.rows), m.header())
	}
}

// The tree keeps runs of different nodes apart: the same id on two
// nodes is two rows; a child's parent is on its own node first, else the
// one run with that id elsewhere.
func TestClusterTree(t *testing.T) {
	m := newClustered(t, "")
	press(m, "c")
	m.Update(clusterAnswer(m.cl.gen))
	var lines []string
	for _, it := range m.items {
		lines = append(lines, it.prefix+address(it.row))
	}
	got := strings.Join(lines, "\n")
	for _, want := range []string{"web\n├─worker-1\n│ └─gpu-job@gpu1\n└─worker-2", "web@gpu1"} {
		if !strings.Contains(got, want) {
			t.Errorf("tree lacks %q:\n%s", want, got)
		}
	}
}

// A result another node's kernel answered is JSON: the panes read it as
// they read a local one.
func TestResultMapRouted(t *testing.T) {
	raw := json.RawMessage(`{"stdout":["a","b"],"stderr":[],"stdoutLog":"/x/stdout.log","node":"b"}`)
	m := resultMap(&verbs.Outcome{Result: raw})
	if got := strs(m["stdout"]); strings.Join(got, ",") != "a,b" {
		t.Errorf("stdout %v", got)
	}
	if p, _ := m["stdoutLog"].(string); p != "/x/stdout.log" {
		t.Errorf("stdoutLog %v", m["stdoutLog"])
	}
	local := resultMap(&verbs.Outcome{Result: map[string]any{"stdout": []string{"c"}}})
	if got := strs(local["stdout"]); len(got) != 1 || got[0] != "c" {
		t.Errorf("local stdout %v", got)
	}
}
