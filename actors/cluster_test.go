package actors_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/actors"
	"github.com/pi-actors/pi-actors/internal/config"
	"github.com/pi-actors/pi-actors/internal/testproc"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// recordingCluster is a cluster side that reaches no other node: it hands
// the test the kernel it was started with and records every request the
// kernel asks it to carry elsewhere.
type recordingCluster struct {
	node    string
	started chan *actors.Kernel
	mu      sync.Mutex
	carried []string // op@node of every Forward and Stream
	pending []string // every Pending session
}

func (c *recordingCluster) Start(k *actors.Kernel) { c.started <- k }
func (c *recordingCluster) Stop()                  {}
func (c *recordingCluster) Node() string           { return c.node }

func (c *recordingCluster) Forward(node string, req wire.Request) wire.Response {
	c.note(req.Op + "@" + node)
	return wire.Response{ID: req.ID, Error: &wire.Error{Code: "node_unreachable", Exit: 69, Message: "test cluster: node " + node}}
}

func (c *recordingCluster) Stream(node string, req wire.Request, write func(wire.Response) error, _ <-chan struct{}) {
	c.note(req.Op + "@" + node)
	write(wire.Response{ID: req.ID, Error: &wire.Error{Code: "node_unreachable", Exit: 69, Message: "test cluster: node " + node}})
}

func (c *recordingCluster) note(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.carried = append(c.carried, s)
}

func (c *recordingCluster) carriedOps() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.carried...)
}

func (c *recordingCluster) Locate(string) []string         { return nil }
func (c *recordingCluster) Place() (string, error)         { return c.node, nil }
func (c *recordingCluster) View(wire.Request) (any, error) { return map[string]any{"state": "up"}, nil }
func (c *recordingCluster) Pending(session string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending = append(c.pending, session)
}

func (c *recordingCluster) pendingSessions() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.pending...)
}

// startClustered runs a kernel with cl as its cluster side (node a of
// cluster t) and returns it once it answers.
func startClustered(t *testing.T, cl *recordingCluster) *actors.Kernel {
	t.Helper()
	k, _ := startClusteredIn(t, newAgent(t), cl)
	return k
}

// startClusteredIn is startClustered for agent; stop ends that kernel.
func startClusteredIn(t *testing.T, agent string, cl *recordingCluster) (k *actors.Kernel, stop func()) {
	t.Helper()
	cfg := settings(func(c *config.Config) { c.Cluster = config.Cluster{Name: "t", Node: cl.node, Provider: "automanaged"} })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- actors.Run(ctx, actors.Config{AgentDir: agent, Supervisor: []string{piActors, "supervise"}, Version: "test", Settings: cfg, Cluster: cl})
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Errorf("kernel did not stop")
			}
		})
	}
	t.Cleanup(stop)
	select {
	case k = <-cl.started:
		return k, stop
	case err := <-done:
		t.Fatalf("kernel exited: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the kernel did not start its cluster side within 10 s")
	}
	return nil, stop
}

// TestHandleRefusesWhatOtherNodesMayNotAsk: a request that arrives over
// the cluster is answered here or refused, never taken for a local one:
// without the node it comes from (or claiming this node) it is refused
// before anything routes it again; operations that are this machine's
// own business (stop, session queues, ingesting a local path) are not
// served to other nodes.
func TestHandleRefusesWhatOtherNodesMayNotAsk(t *testing.T) {
	cl := &recordingCluster{node: "a", started: make(chan *actors.Kernel, 1)}
	k := startClustered(t, cl)
	msg := func(to string) wire.Request {
		p, _ := json.Marshal(map[string]any{"to": to, "type": "greet.hi"})
		return wire.Request{Op: "message", Session: "s1", Params: p}
	}

	for _, from := range []string{"", "a", "b@c", "../x"} {
		resp := k.Handle(from, msg("run:w1@b"))
		if resp.Error == nil || resp.Error.Exit != 65 {
			t.Fatalf("a request from %q over the cluster: %+v, want refused with 65", from, resp)
		}
	}
	// Handled from node b: answered here (the run is not here), never
	// carried on to another node.
	if resp := k.Handle("b", msg("run:w1@c")); resp.Error == nil || resp.Error.Code == "node_unreachable" {
		t.Fatalf("a message for node c that node b sent here: %+v", resp)
	}
	var streamed []wire.Response
	if !k.HandleStream("", wire.Request{Op: "watch_room", Params: json.RawMessage(`{"target":"room:w1@b"}`)}, func(r wire.Response) error {
		streamed = append(streamed, r)
		return nil
	}, make(chan struct{})) || len(streamed) != 1 || streamed[0].Error == nil || streamed[0].Error.Exit != 65 {
		t.Fatalf("a stream without its node: %+v", streamed)
	}
	if got := cl.carriedOps(); len(got) != 0 {
		t.Fatalf("requests from the cluster were carried on to other nodes: %v", got)
	}

	for _, req := range []wire.Request{
		{Op: "stop"},
		{Op: "followups", Session: "s1"},
		{Op: "session", Params: json.RawMessage(`{"action":"suspend","session":"s1"}`)},
		{Op: "knowledge", Params: json.RawMessage(`{"op":"ingest","params":{"path":"/"}}`)},
		{Op: "knowledge", Params: json.RawMessage(`{"op":"recall","batch":[{"query":"x"}]}`)},
	} {
		if resp := k.Handle("b", req); resp.Error == nil || resp.Error.Exit != 64 {
			t.Fatalf("%s %s from node b: %+v, want refused with 64", req.Op, req.Params, resp)
		}
	}
	// Nor through a routed verb: only what the cluster routes.
	for _, params := range []string{
		`{"verb":"inspect","params":{"target":"coordinator","view":"followups"}}`,
		`{"verb":"inspect","params":{"target":"session:s1","view":"runs"}}`,
		`{"verb":"mailbox","params":{"action":"claim","state_dir":"/elsewhere/w1"}}`,
		`{"verb":"ps","params":{"cluster":true}}`,
	} {
		if resp := k.Handle("b", wire.Request{Op: "verb", Session: "s1", Params: json.RawMessage(params)}); resp.Error == nil || resp.Error.Exit != 64 {
			t.Fatalf("verb %s from node b: %+v, want refused with 64", params, resp)
		}
	}
	if resp := k.Handle("b", wire.Request{Op: "verb", Session: "s1", Params: json.RawMessage(`{"verb":"inspect","params":{"target":"run:nosuch","view":"status"}}`)}); resp.Error == nil || resp.Error.Exit != 66 {
		t.Fatalf("inspect of a run from node b: %+v, want 66 (no such run here)", resp)
	}
	for _, op := range []string{"watch", "events", "knowledge_ingest"} {
		var got []wire.Response
		k.HandleStream("b", wire.Request{Op: op, Session: "s1"}, func(r wire.Response) error { got = append(got, r); return nil }, make(chan struct{}))
		if len(got) != 1 || got[0].Error == nil || got[0].Error.Exit != 64 {
			t.Fatalf("stream %s from node b: %+v, want refused with 64", op, got)
		}
	}
	// What the cluster does ask is served: recall scope=cluster.
	if resp := k.Handle("b", wire.Request{Op: "knowledge", Params: json.RawMessage(`{"op":"recall","params":{"query":"anything"}}`)}); resp.Error != nil {
		t.Fatalf("recall from node b: %+v", resp.Error)
	}
	// The kernel is still up: the stop was refused.
	if _, err := os.Stat(k.AgentDir()); err != nil {
		t.Fatal(err)
	}
	if resp := callConn(t, k.AgentDir(), wire.Request{Op: "ping"}); resp.Error != nil {
		t.Fatalf("ping after a refused stop: %+v", resp.Error)
	}
}

// TestHandleDropsTheCallersRunIdentity: a run id in the environment of a
// caller on another node names a run there, not here: a run spawned for
// it has no parent here (it would be this node's run of that id), and a
// routed verb sees the caller's address qualified with its node.
func TestHandleDropsTheCallersRunIdentity(t *testing.T) {
	cl := &recordingCluster{node: "a", started: make(chan *actors.Kernel, 1)}
	k := startClustered(t, cl)
	agent := k.AgentDir()
	local := callConn(t, agent, wire.Request{Op: "spawn", Session: "s1", Cwd: agent, Env: append(os.Environ(), testproc.EnvVar+"=1"), Params: rawParams(spawnParams("w0", "sleep-forever", nil))})
	if local.Error != nil {
		t.Fatalf("spawn run:w0: %+v", local.Error)
	}
	env := append(os.Environ(), testproc.EnvVar+"=1", "PI_ACTORS_RUN_ID=w0", "PI_ACTORS_STATE_DIR=/elsewhere/w0", "PI_ACTORS_ADDRESS=run:w0")
	resp := k.Handle("b", wire.Request{Op: "spawn", Session: "s1", Cwd: agent, Env: env, Params: rawParams(spawnParams("w1", "sleep-forever", nil))})
	if resp.Error != nil {
		t.Fatalf("spawn from node b: %+v", resp.Error)
	}
	m, err := runs.StateDirFor(agent, "w1").Meta()
	if err != nil {
		t.Fatal(err)
	}
	if m.Parent != "" {
		t.Fatalf("a run spawned for node b's run:w0 has parent %q here (this node's run:w0)", m.Parent)
	}
	for _, id := range []string{"w0", "w1"} {
		if r := callConn(t, agent, wire.Request{Op: "message", Session: "s1", Params: rawParams(map[string]any{"to": "run:" + id, "type": "control.kill"})}); r.Error != nil {
			t.Fatalf("kill run:%s: %+v", id, r.Error)
		}
	}
}

// TestSpawnRefusesAMissingWorkingDirectory: a caller on another node may
// be in a directory this machine does not have: the spawn is refused
// naming it (66), and nothing is written.
func TestSpawnRefusesAMissingWorkingDirectory(t *testing.T) {
	cl := &recordingCluster{node: "a", started: make(chan *actors.Kernel, 1)}
	k := startClustered(t, cl)
	missing := filepath.Join(k.AgentDir(), "only-on-b")
	resp := k.Handle("b", wire.Request{Op: "spawn", Session: "s1", Cwd: missing, Env: append(os.Environ(), testproc.EnvVar+"=1"), Params: rawParams(spawnParams("w1", "sleep-forever", nil))})
	if resp.Error == nil || resp.Error.Exit != 66 || !strings.Contains(resp.Error.Message, missing) || !strings.Contains(resp.Error.Message, "node a") {
		t.Fatalf("spawn from a directory node a does not have: %+v", resp)
	}
	if _, err := os.Stat(string(runs.StateDirFor(k.AgentDir(), "w1"))); err == nil {
		t.Fatal("a refused spawn left a state dir")
	}
}

// TestRebuildHandsRemoteFollowupsToTheCluster: a run spawned for a session
// on another node that ended while its kernel was down has its follow-up
// queued when the kernel starts again (rebuild), and the cluster side is
// told to deliver it: the kernel knows its cluster side before it
// rebuilds.
func TestRebuildHandsRemoteFollowupsToTheCluster(t *testing.T) {
	agent := newAgent(t)
	cl := &recordingCluster{node: "a", started: make(chan *actors.Kernel, 1)}
	k, stop := startClusteredIn(t, agent, cl)
	pidFile := filepath.Join(agent, "w1.pid")
	resp := k.Handle("b", wire.Request{Op: "spawn", Session: "s1", Cwd: agent, Env: append(os.Environ(), testproc.EnvVar+"=1"), Params: rawParams(spawnParams("w1", "sleep-forever "+pidFile, nil))})
	if resp.Error != nil {
		t.Fatalf("spawn from node b: %+v", resp.Error)
	}
	var pid int
	eventually(t, 15*time.Second, "run:w1's leaf is up", func() bool {
		b, _ := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return pid > 0
	})
	stop()
	syscall.Kill(pid, syscall.SIGKILL) // the run ends while its kernel is down
	eventually(t, 15*time.Second, "run:w1 ends while its kernel is down", func() bool {
		in, err := runs.Load(runs.StateDirFor(agent, "w1"))
		return err == nil && in.Result != nil
	})
	again := &recordingCluster{node: "a", started: make(chan *actors.Kernel, 1)}
	k2, _ := startClusteredIn(t, agent, again)
	if got := homes(k2, again.pendingSessions()); !slices.Contains(got, "s1@b") {
		t.Fatalf("follow-ups queued at rebuild for session s1 (home b): cluster told %v, want s1@b", got)
	}
}

// homes names the follow-up queues the cluster side was told of by
// <session>@<node> they are delivered to.
func homes(k *actors.Kernel, keys []string) []string {
	var out []string
	for _, key := range keys {
		node, session := k.SessionHome(key)
		out = append(out, session+"@"+node)
	}
	return out
}

// TestFollowupsGoToTheSpawningSessionsNode: a run spawned here for a
// session on another node has its follow-ups delivered to that node — the
// node the request names as the session's (a run there, itself spawned
// from a third node, spawned it), else the node it came from — and a
// run of the same session name started here keeps its follow-ups here:
// each run has its own home, not each session name.
func TestFollowupsGoToTheSpawningSessionsNode(t *testing.T) {
	cl := &recordingCluster{node: "a", started: make(chan *actors.Kernel, 1)}
	k := startClustered(t, cl)
	env := append(os.Environ(), testproc.EnvVar+"=1")
	for _, req := range []wire.Request{
		{Op: "spawn", Session: "s1", Cwd: k.AgentDir(), Env: env, Home: "c", Params: rawParams(spawnParams("fromc", "exit 0", nil))},
		{Op: "spawn", Session: "s1", Cwd: k.AgentDir(), Env: env, Params: rawParams(spawnParams("fromb", "exit 0", nil))},
	} {
		if resp := k.Handle("b", req); resp.Error != nil {
			t.Fatalf("spawn from node b: %+v", resp.Error)
		}
	}
	if resp := callConn(t, k.AgentDir(), wire.Request{Op: "spawn", Session: "s1", Cwd: k.AgentDir(), Env: env, Params: rawParams(spawnParams("local", "exit 0", nil))}); resp.Error != nil {
		t.Fatalf("local spawn: %+v", resp.Error)
	}
	eventually(t, 15*time.Second, "both remote runs' follow-ups handed to the cluster", func() bool {
		got := homes(k, cl.pendingSessions())
		return slices.Contains(got, "s1@c") && slices.Contains(got, "s1@b")
	})
	eventually(t, 15*time.Second, "the local run's follow-up queued here", func() bool {
		b, _ := os.ReadFile(filepath.Join(k.AgentDir(), "tmp", "pi-actors", "sessions", "s1.jsonl"))
		return strings.Contains(string(b), `"run":"local"`)
	})
	b, _ := os.ReadFile(filepath.Join(k.AgentDir(), "tmp", "pi-actors", "sessions", "s1.jsonl"))
	if strings.Contains(string(b), `"run":"fromb"`) || strings.Contains(string(b), `"run":"fromc"`) {
		t.Fatalf("a remote session's follow-up is in this node's queue of s1:\n%s", b)
	}
	for _, node := range homes(k, cl.pendingSessions()) {
		if node == "s1@" {
			t.Fatalf("the local session's queue was handed to the cluster: %v", cl.pendingSessions())
		}
	}
}
