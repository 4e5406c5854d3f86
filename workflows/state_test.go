package workflows_test

import (
	"strings"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/workflows"
)

// TestFinishRecordsHowTheWorkflowEnded: a workflow ended from outside its
// scheduler gets the status and reason it is given (failed, start_limit
// for a scheduler past its restart limit), its running node killed and
// the others cancelled; a workflow that recorded its end keeps it.
func TestFinishRecordsHowTheWorkflowEnded(t *testing.T) {
	t.Parallel()
	w, err := parse(t, `{"nodes": [{"id": "a", "template": "true"}, {"id": "b", "template": "true", "depends_on": ["a"]}]}`)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	st := workflows.NewState(w, "wf", "i1", time.Now())
	st.Node("a").Status = workflows.NodeRunning
	if err := st.Save(dir); err != nil {
		t.Fatal(err)
	}
	var ended []string
	if err := workflows.Finish(dir, workflows.StatusFailed, "start_limit", time.Second, "", 0, func(n *workflows.NodeState) {
		ended = append(ended, n.ID+" "+n.Status)
	}); err != nil {
		t.Fatal(err)
	}
	// The cancelled b too: the trace says why it never ran.
	if strings.Join(ended, ",") != "a killed,b cancelled" {
		t.Errorf("nodes told ended: %v, want the killed a and the cancelled b", ended)
	}
	got, err := workflows.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != workflows.StatusFailed || got.Reason != "start_limit" || got.EndedAt.IsZero() {
		t.Fatalf("workflow %s (%s) ended_at %v; want failed (start_limit)", got.Status, got.Reason, got.EndedAt)
	}
	wantStatus(t, got, map[string]string{"a": workflows.NodeKilled, "b": workflows.NodeCancelled})
	if r := got.Node("a").Reason; r != "start_limit" {
		t.Errorf("node a reason %q", r)
	}
	// Ended already: a later Finish changes nothing.
	if err := workflows.Finish(dir, workflows.StatusKilled, "control.kill", time.Second, "", 0, func(n *workflows.NodeState) {
		t.Errorf("a Finish of an ended workflow told %s ended", n.ID)
	}); err != nil {
		t.Fatal(err)
	}
	if again, _ := workflows.Load(dir); again.Status != workflows.StatusFailed || again.Reason != "start_limit" {
		t.Errorf("after a second Finish: %s (%s)", again.Status, again.Reason)
	}
}
