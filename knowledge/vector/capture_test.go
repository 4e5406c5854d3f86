package vector

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/api/vectorop"
)

func exitCode(n int) *int { return &n }

// findHit returns the first hit whose name contains sub.
func findHit(hs []vectorop.Hit, sub string) *vectorop.Hit {
	for i := range hs {
		if strings.Contains(hs[i].Name, sub) {
			return &hs[i]
		}
	}
	return nil
}

func edgeTypes(d *vectorop.NodeDetail, dir string) []string {
	var out []string
	for _, e := range d.Edges {
		if e.Direction == dir {
			out = append(out, e.Type+":"+e.Node.Type)
		}
	}
	slices.Sort(out)
	return out
}

// A captured run is a history node linked to its recipe and artifacts;
// capturing it again changes nothing; a task.result captured before the
// run gets linked when the run is captured; recall finds the run.
func TestCaptureRun(t *testing.T) {
	e := newEnv(t)
	s := e.s
	ctx := t.Context()
	start := time.Now().Add(-90 * time.Second).UTC()
	msg := MessageRecord{ID: "m-1", RunID: "deploy-7", Type: "task.result", From: "run:deploy-7", To: "session:s1",
		Text: "staging deploy failed: migration 0042 locked the orders table"}
	if err := s.CaptureMessage(ctx, msg); err != nil {
		t.Fatal(err)
	}
	rec := RunRecord{RunID: "deploy-7", Recipe: "deploy-staging", Template: "kubectl apply -f {manifest}", Status: "failed",
		ExitCode: exitCode(3), StartedAt: start, EndedAt: start.Add(80 * time.Second),
		Artifacts:  []string{"out/report.txt", filepath.Join(e.repo, "out", "plan.json")},
		LastOutput: []string{"applying migration 0042", "error: lock timeout on table orders"},
		FollowUp:   "retry after the lock clears", Session: "s1", Cwd: e.repo}
	for range 2 {
		if err := s.CaptureRun(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	res := e.OK("recall", `{"query":"deploy staging lock timeout orders","domain":"history"}`).(*vectorop.RecallResult)
	run := findHit(res.Hits, "run deploy-7")
	if run == nil || run.Store != op.StoreProject || run.Type != "outcome" || run.Trust != vectorop.TrustRecent || !run.Verified {
		t.Fatalf("recall hits: %s", mustJSON(res))
	}
	if len(run.Provenance) != 1 || run.Provenance[0].Source != vectorop.SourceHistory || run.Provenance[0].Ref != "run:deploy-7" {
		t.Fatalf("provenance %+v", run.Provenance)
	}
	n := 0
	for _, h := range res.Hits {
		if strings.HasPrefix(h.Name, "run deploy-7") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d run nodes after two captures", n)
	}
	d := e.OK("node_get", `{"id":"`+run.ID+`"}`).(*vectorop.NodeDetail)
	if got, want := edgeTypes(d, "out"), []string{"created:file", "created:file", "produced_by:workflow"}; !slices.Equal(got, want) {
		t.Fatalf("out edges %v, want %v", got, want)
	}
	if got := edgeTypes(d, "in"); !slices.Equal(got, []string{"produced_by:entry"}) {
		t.Fatalf("in edges %v", got)
	}
	if len(d.Code) != 2 || !strings.Contains(d.Node.Content, "lock timeout") || d.Node.Metadata["exitCode"] != float64(3) {
		t.Fatalf("node %s", mustJSON(d))
	}
	// A restart of the same run id is a new node, followed_by the first.
	rec.StartedAt = rec.StartedAt.Add(time.Hour)
	if err := s.CaptureRun(ctx, rec); err != nil {
		t.Fatal(err)
	}
	// So is a restart on its state directory (same start time, resumed):
	// each ends as a run instance of its own.
	rec.Resumes = 1
	if err := s.CaptureRun(ctx, rec); err != nil {
		t.Fatal(err)
	}
	tr := e.OK("traverse", `{"id":"`+run.ID+`","direction":"out","edgeTypes":"followed_by"}`).(*vectorop.TraverseResult)
	if len(tr.Nodes) != 2 || tr.Nodes[0].Type != "outcome" || tr.Nodes[1].Type != "outcome" {
		t.Fatalf("followed_by %s", mustJSON(tr))
	}
	// A decision captured after the run links to the newest run node.
	if err := s.CaptureMessage(ctx, MessageRecord{ID: "o-9", RunID: "deploy-7", Type: "outbox.decision", Text: "roll back 0042"}); err != nil {
		t.Fatal(err)
	}
	dec := e.OK("search", `{"query":"roll back 0042","type":"decision"}`).(*vectorop.SearchResult)
	if len(dec.Hits) != 1 || dec.Hits[0].Trust != vectorop.TrustModel || dec.Hits[0].Warning == "" {
		t.Fatalf("decision %s", mustJSON(dec))
	}
	dd := e.OK("node_get", `{"id":"`+dec.Hits[0].ID+`"}`).(*vectorop.NodeDetail)
	if got := edgeTypes(dd, "out"); !slices.Equal(got, []string{"produced_by:outcome", "produced_by:outcome", "produced_by:outcome"}) {
		t.Fatalf("decision edges %v", got)
	}
	v := status(t, s)
	if v.Nodes != 8 || v.Pending != 0 || v.Embedder != "local-hash-384-v1" {
		t.Fatalf("status %s", mustJSON(v))
	}
}

// A run is recalled by its id and by its command although 40 lines of
// output make its vector unlike either (cosine under minSimilarity): a
// node whose name holds the query's words is a hit by name, found through
// the indexes (run id, name prefix) and ranked before hits by similarity
// alone; a decision by its name too. Words its name does not hold still
// find nothing.
func TestRecallByName(t *testing.T) {
	e := newEnv(t)
	start := time.Now().Add(-time.Minute).UTC()
	var out []string
	for i := range 60 {
		out = append(out, fmt.Sprintf("row %d copied: customer=%d amount=%d.%02d currency=EUR region=eu-west-%d", i, 1000+i, i*7, i, i%3))
	}
	rec := RunRecord{RunID: "orders-backfill", Template: "cat out.txt", Status: "exited", ExitCode: exitCode(0),
		StartedAt: start, EndedAt: start.Add(2 * time.Second), LastOutput: out[20:], Cwd: e.repo}
	if err := e.s.CaptureRun(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
	// Noise that is more like the query by similarity.
	for i := range 30 {
		e.Node("history", "entry", fmt.Sprintf("orders note %d", i), fmt.Sprintf("orders backfill orders backfill planning %d", i), "")
	}
	e.Node("history", "decision", "session storage", "postgres, since June", `,"source":"user","verified":true`)
	for _, q := range []string{"orders-backfill", "ORDERS-BACKFILL", "cat out.txt"} {
		r := e.OK("recall", `{"query":"`+q+`"}`).(*vectorop.RecallResult)
		if r.Status != vectorop.StatusOK || len(r.Hits) == 0 || r.Hits[0].Type != "outcome" || !strings.Contains(r.Hits[0].Name, "orders-backfill") {
			t.Fatalf("recall %q: %s", q, mustJSON(r))
		}
	}
	if r := e.OK("search", `{"query":"session storage","domain":"history"}`).(*vectorop.SearchResult); len(r.Hits) == 0 || r.Hits[0].Name != "session storage" {
		t.Fatalf("search by a decision's name: %s", mustJSON(r))
	}
	if r := e.OK("recall", `{"query":"zebra-migration"}`).(*vectorop.RecallResult); r.Status != vectorop.StatusNoMatches {
		t.Fatalf("recall of words no name holds: %s", mustJSON(r))
	}
}
