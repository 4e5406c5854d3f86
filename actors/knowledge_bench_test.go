package actors_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/actors"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// BenchmarkKnowledgeSearch10k: text search (FTS5) over 10,000 atoms in
// the knowledge actor, each request over the kernel socket (so the figure
// is an upper bound on the time in the actor). It prints the median
// beside the target:
//
//	go test -run '^$' -bench KnowledgeSearch -benchtime 200x ./actors
func BenchmarkKnowledgeSearch10k(b *testing.B) {
	agent, err := os.MkdirTemp("", "pakb")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(agent)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- actors.Run(ctx, actors.Config{AgentDir: agent, Supervisor: []string{piActors, "supervise"}, Version: "bench", Settings: settings(nil)})
	}()
	defer func() { cancel(); <-done }()
	repo := filepath.Join(agent, "repo")
	os.MkdirAll(filepath.Join(repo, ".git"), 0o755)
	c := dialRetry(b, agent)
	defer c.Close()
	call := func(body map[string]any) *wire.Response {
		resp, err := c.Call(wire.Request{Op: "knowledge", Cwd: repo, Params: rawParams(body)})
		if err != nil {
			b.Fatal(err)
		}
		if resp.Error != nil {
			b.Fatalf("%v: %+v", body["op"], resp.Error)
		}
		return resp
	}
	call(map[string]any{"op": "init"})
	words := []string{"webhook", "gateway", "locale", "registry", "checkout", "payment", "retry", "backoff", "ledger", "invoice"}
	var batch []json.RawMessage
	for i := range 10_000 {
		w := words[i%len(words)]
		batch = append(batch, rawParams(map[string]any{"operation": "create", "entityType": "atom", "name": fmt.Sprintf("atom %05d %s", i, w),
			"paths":           []string{fmt.Sprintf("src/m%d/**", i), fmt.Sprintf("src/m%d/*.ts", i), fmt.Sprintf("lib/m%d/*.go", i), fmt.Sprintf("docs/m%d/**/*.md", i), fmt.Sprintf("test/m%d/**", i)},
			"knowledge":       fmt.Sprintf("%s handler number%d integrates with %s", w, i, words[(i/7)%len(words)]),
			"createdByTaskId": "bench"}))
	}
	call(map[string]any{"op": "manage_graph", "batch": batch})
	queries := []string{"webhook", "gateway integrates", "number42", "retry back", "ledger invoice", "locale"}
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		t := time.Now()
		call(map[string]any{"op": "query_graph", "params": map[string]any{"operation": "search", "entityType": "atom", "query": queries[i%len(queries)]}})
		times = append(times, time.Since(t))
	}
	b.StopTimer()
	slices.Sort(times)
	med := times[len(times)/2]
	b.ReportMetric(float64(med.Microseconds())/1000, "median-ms")
	b.Logf("text search over 10,000 atoms through the knowledge actor (kernel socket included), median of %d: %.2f ms (target ≤ 5 ms, %.2f of target)",
		len(times), float64(med.Microseconds())/1000, float64(med.Microseconds())/5000)
}

func dialRetry(b *testing.B, agent string) *wire.Conn {
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := wire.Dial(agent, time.Second)
		if err == nil {
			return c
		}
		if time.Now().After(deadline) {
			b.Fatalf("kernel did not answer: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
