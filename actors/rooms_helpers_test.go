package actors_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/actors"
	"github.com/pi-actors/pi-actors/internal/testproc"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// tbKernel is a kernel run in this process by a test or a benchmark
// (kernel_test.go's helpers take a *testing.T).
type tbKernel struct {
	tb    testing.TB
	agent string
	stop  context.CancelFunc
	done  chan error
}

// startTB runs a kernel for a fresh agent root until the test ends.
func startTB(tb testing.TB, opts ...func(*actors.Config)) *tbKernel {
	tb.Helper()
	agent, err := os.MkdirTemp("", "pak")
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	k := &tbKernel{tb: tb, agent: agent, stop: cancel, done: make(chan error, 1)}
	go func() {
		cfg := actors.Config{AgentDir: agent, Supervisor: []string{piActors, "supervise"}, Version: "test", Settings: settings(nil)}
		for _, o := range opts {
			o(&cfg)
		}
		k.done <- actors.Run(ctx, cfg)
	}()
	tb.Cleanup(func() {
		cancel()
		select {
		case <-k.done:
		case <-time.After(10 * time.Second):
			tb.Errorf("kernel did not stop")
		}
		killRuns(agent)
		os.RemoveAll(agent)
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		if c, err := wire.Dial(agent, time.Second); err == nil {
			c.Close()
			return k
		}
		if time.Now().After(deadline) {
			tb.Fatal("kernel did not start")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// call sends one request (a batch with items) as session.
func (k *tbKernel) call(op, session string, params map[string]any, items ...map[string]any) *wire.Response {
	k.tb.Helper()
	c, err := wire.Dial(k.agent, time.Second)
	if err != nil {
		k.tb.Fatal(err)
	}
	defer c.Close()
	resp, err := c.Call(wire.Request{Op: op, Session: session, Cwd: k.agent, Env: append(os.Environ(), testproc.EnvVar+"=1"),
		Params: rawParams(params), Items: rawItems(items)})
	if err != nil {
		k.tb.Fatalf("%s: %v", op, err)
	}
	return resp
}

// spawn starts a helper run owned by session.
func (k *tbKernel) spawn(session, id, args string, values map[string]any) map[string]any {
	k.tb.Helper()
	resp := k.call("spawn", session, spawnParams(id, args, values))
	if resp.Error != nil {
		k.tb.Fatalf("spawn run:%s: %+v", id, resp.Error)
	}
	var m map[string]any
	json.Unmarshal(resp.Result, &m)
	return m
}
