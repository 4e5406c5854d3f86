package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/actors"
	"github.com/pi-actors/pi-actors/internal/config"
	"github.com/pi-actors/pi-actors/internal/pki"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// TestBinEnv names the directory with the pi-actors binaries that
// TestMain (harness_test.go) built: the in-process kernels here start
// their runs' supervisors from it.
const TestBinEnv = "PI_ACTORS_CLUSTER_TEST_BIN"

// captureSide is a cluster side that only hands the test its kernel.
type captureSide struct{ k chan *actors.Kernel }

func (c captureSide) Start(k *actors.Kernel)                                                { c.k <- k }
func (captureSide) Stop()                                                                   {}
func (captureSide) Node() string                                                            { return "a" }
func (captureSide) Forward(string, wire.Request) wire.Response                              { return wire.Response{} }
func (captureSide) Stream(string, wire.Request, func(wire.Response) error, <-chan struct{}) {}
func (captureSide) Locate(string) []string                                                  { return nil }
func (captureSide) Place() (string, error)                                                  { return "a", nil }
func (captureSide) View(wire.Request) (any, error)                                          { return nil, nil }
func (captureSide) Pending(string)                                                          {}

// runKernel runs a kernel in this process with [cluster] cc and cl as its
// cluster side, until the test ends; it returns its agent root once the
// kernel answers.
func runKernel(t *testing.T, cc config.Cluster, cl actors.Cluster) string {
	t.Helper()
	bin := os.Getenv(TestBinEnv)
	if bin == "" {
		t.Fatal(TestBinEnv + " is not set (TestMain builds the binaries)")
	}
	agent, err := os.MkdirTemp("", "pac") // short: the socket path is limited
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Defaults()
	cfg.Cluster = cc
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- actors.Run(ctx, actors.Config{AgentDir: agent, Supervisor: []string{filepath.Join(bin, "pi-actors"), "supervise"}, Version: "test", Settings: cfg, Cluster: cl})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Errorf("kernel did not stop")
		}
		killRuns(agent)
		os.RemoveAll(agent)
	})
	waitFor(t, 20*time.Second, "the kernel answers", func() bool {
		c, err := wire.Dial(agent, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return agent
}

// killRuns kills what the runs of agent started.
func killRuns(agent string) {
	entries, _ := runs.NewIndex(agent).Entries()
	for _, e := range entries {
		if m, err := runs.Dir(e.StateDir).Meta(); err == nil && m.Pid > 0 {
			runs.KillAll(runs.SessionMembers(m.Pid), syscall.SIGKILL)
		}
	}
}

// TestSideSettlesItsConfigBeforeItsLoop: [cluster] is checked (defaults
// filled in, paths made absolute) when the side starts, not on its loop
// while status and view already read it.
func TestSideSettlesItsConfigBeforeItsLoop(t *testing.T) {
	cap := captureSide{k: make(chan *actors.Kernel, 1)}
	cc := config.Cluster{Name: "t", Node: "a", Provider: "automanaged", Manage: "127.0.0.1:1", Peers: []string{"127.0.0.1:1"},
		TLSCA: "certs/ca.crt", TLSCert: "certs/a.crt", TLSKey: "certs/a.key"}
	agent := runKernel(t, cc, cap)
	k := <-cap.k
	s := New()
	s.Start(k)
	defer s.Stop()
	if st := s.status(); st["tls"] != true || st["cluster"] != "t" {
		t.Fatalf("status: %v", st)
	}
	if want := filepath.Join(agent, "certs", "ca.crt"); s.cfg.TLSCA != want || s.cfg.Bind != "127.0.0.1:0" {
		t.Fatalf("after Start: tls_ca %q bind %q, want %q and the default bind", s.cfg.TLSCA, s.cfg.Bind, want)
	}
	waitFor(t, 10*time.Second, "the side is down for want of its CA", func() bool {
		st := s.status()
		e, _ := st["error"].(string)
		return st["state"] == stateDown && strings.Contains(e, "cluster.tls_ca")
	})
}

// TestGatewayAnswersPingsWhileRequestsWait: requests from another node
// that wait (claims with wait=) never hold up the pings behind them; the
// gateway took each request's slot itself and stopped answering anything
// once 64 waited, so its peers took it for unreachable.
func TestGatewayAnswersPingsWhileRequestsWait(t *testing.T) {
	if raceBuild {
		t.Skip("two engines in one process race on grpc's global logger (the engine's remote.Start); run without -race")
	}
	ma, mb := loopbackAddr(t), loopbackAddr(t)
	s := New()
	agent := runKernel(t, config.Cluster{Name: "t", Node: "a", Provider: "automanaged", Manage: ma, Peers: []string{ma, mb}}, s)
	waitFor(t, 20*time.Second, "a's member is up", func() bool { return s.current() != nil })
	ea := s.current()
	c, err := wire.Dial(agent, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	spawn := wire.Request{Op: "spawn", Session: "s1", Cwd: agent, Env: os.Environ()}
	spawn.Encode(map[string]any{"as": "run:coord", "template": "sleep 60"})
	resp, err := c.Call(spawn)
	c.Close()
	if err != nil || resp.Error != nil {
		t.Fatalf("spawn run:coord: %v %+v", err, resp)
	}
	eb, err := startEngine(engineSide("b", mb, ma, mb), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer eb.stop(false)
	params, _ := json.Marshal(map[string]any{"verb": "mailbox", "params": map[string]any{"action": "claim", "address": "branch:coord/w1", "wait": "8s", "pid": -1}})
	claim := &envelope{Kind: kindRequest, From: "b", Req: &wire.Request{Op: "verb", Session: "s1", Cwd: agent, Params: params}}
	for range 70 {
		eb.system.Root.RequestFuture(pidOf(ea.address), pack(claim), 15*time.Second)
	}
	time.Sleep(500 * time.Millisecond) // the claims reached a and wait there
	start := time.Now()
	e, err := eb.request(ea.address, &envelope{Kind: kindPing, From: "b"}, 3*time.Second)
	if err != nil || e.Info == nil || e.Info.Node != "a" {
		t.Fatalf("a ping behind 70 waiting claims: %v %+v", err, e)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("a ping behind 70 waiting claims took %s", d)
	}
}

// TestRejectedPeers: refused handshakes are counted per peer and role,
// at most maxRejected peers are kept (the most recent), and what a peer's
// certificate says is shown without control characters and bounded.
func TestRejectedPeers(t *testing.T) {
	s := New()
	s.log = slog.New(slog.DiscardHandler)
	bad := errors.New("x509: certificate signed by unknown authority")
	s.reject(pki.Rejection{Peer: "x", Role: "server", Err: bad})
	s.reject(pki.Rejection{Peer: "x", Role: "server", Err: bad})
	s.reject(pki.Rejection{Peer: "evil\n\x1b[31mnode " + strings.Repeat("y", 100), Role: "client", Err: errors.New("bad\x1b[0m")})
	list := s.rejectedList()
	if len(list) != 2 || list[1].Peer != "x" || list[1].Count != 2 || list[1].Reason != bad.Error() {
		t.Fatalf("rejected %+v", list)
	}
	if p := list[0].Peer; strings.ContainsAny(p, "\n\x1b") || !strings.HasPrefix(p, "evil??[31mnode y") || len([]rune(p)) != 65 || list[0].Reason != "bad?[0m" {
		t.Fatalf("a hostile certificate name shown as %q, reason %q", p, list[0].Reason)
	}
	for i := range 10 {
		s.reject(pki.Rejection{Peer: fmt.Sprintf("n%d", i), Role: "client", Err: bad})
	}
	list = s.rejectedList()
	if len(list) != maxRejected || list[0].Peer != "n9" || list[maxRejected-1].Peer != "n2" {
		t.Fatalf("after 12 peers: %+v", list)
	}
}

// While the member starts again under a new id (renew), a request is told
// the side is starting and why (it said "up; try again"), and status says
// why; once up, the reason goes.
func TestStartingAgainSaysWhy(t *testing.T) {
	s := New()
	s.log = slog.New(slog.DiscardHandler)
	s.setState(stateStarting, nil)
	s.mu.Lock()
	s.why = "restarting the member under a new id: no other member"
	s.mu.Unlock()
	err := s.errDown()
	var ce *clusterError
	if !errors.As(err, &ce) || ce.exit != 69 || !strings.Contains(ce.msg, "is starting (restarting the member under a new id: no other member); try again") {
		t.Fatalf("errDown = %v", err)
	}
	if r := s.status()["reason"]; r != "restarting the member under a new id: no other member" {
		t.Errorf("status reason %v", r)
	}
	s.setState(stateUp, nil)
	if _, ok := s.status()["reason"]; ok {
		t.Errorf("status still gives a reason once up: %v", s.status())
	}
}
