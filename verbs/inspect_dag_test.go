package verbs

import (
	"strings"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/workflows"
)

// TestDagTextClocks: a node's took= leaves out the time it spent
// suspended, and while the workflow is suspended its clocks stand where
// they stopped (took=, retry_in=) and the first line says since when.
func TestDagTextClocks(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	st := &workflows.State{Run: "wf", Status: workflows.StatusRunning, Layers: [][]string{{"a", "b"}},
		Nodes: []workflows.NodeState{
			{ID: "a", Status: workflows.NodeRunning, Attempts: 1, Run: "wf-a", StartedAt: t0, PausedMS: 20_000},
			{ID: "b", Status: workflows.NodeBackoff, Attempts: 1, Run: "wf-b", NextAt: t0.Add(70 * time.Second)},
		}}
	// Running: 60 s since the start, 20 of them suspended earlier.
	text := dagText(&DagView{RunStatus: "running", State: st}, 10, t0.Add(60*time.Second))
	for _, want := range []string{"L0 a running attempts=1 took=40s", "L0 b backoff attempts=1 retry_in=10s"} {
		if !strings.Contains(text, want) {
			t.Fatalf("running: no %q in\n%s", want, text)
		}
	}
	// Suspended at 60 s and looked at 100 s later: nothing moved.
	paused := t0.Add(60 * time.Second)
	text = dagText(&DagView{RunStatus: "suspended", PausedSince: paused, State: st}, 10, paused.Add(100*time.Second))
	for _, want := range []string{"clocks_paused_since=2026-11-26T12:01:00Z", "took=40s", "retry_in=10s"} {
		if !strings.Contains(text, want) {
			t.Fatalf("suspended: no %q in\n%s", want, text)
		}
	}
}

// TestDagTextReadyTimedOut: a service not ready within its ready_timeout
// says so on its line (its "ready" dependents were skipped).
func TestDagTextReadyTimedOut(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	st := &workflows.State{Run: "wf", Status: workflows.StatusFailed, Layers: [][]string{{"svc"}, {"use"}},
		Nodes: []workflows.NodeState{
			{ID: "svc", Status: workflows.NodeKilled, Service: true, Attempts: 1, Run: "wf-svc", StartedAt: t0, EndedAt: t0.Add(3 * time.Second), ReadyTimedOut: true},
			{ID: "use", Status: workflows.NodeSkipped, Reason: "dependency_svc_not_ready"},
		}}
	text := dagText(&DagView{RunStatus: "failed", State: st}, 10, t0.Add(time.Minute))
	if !strings.Contains(text, "L0 svc killed service attempts=1 took=3s ready_timed_out ") {
		t.Fatalf("no ready_timed_out on the service's line:\n%s", text)
	}
	if strings.Contains(text, "L1 use skipped ready_timed_out") {
		t.Fatalf("ready_timed_out on a node that was not waited for:\n%s", text)
	}
}
