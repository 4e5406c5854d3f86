package verbs

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/pi-actors/pi-actors/knowledge/api"
	"github.com/pi-actors/pi-actors/knowledge/api/graphop"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
)

// Every front door decodes a knowledge operation the api's way: unknown
// and mistyped parameters are VALIDATION_ERROR naming the field (exit 65),
// never the generic usage error.
func TestKnowledgeSpecsDecodeTheAPIWay(t *testing.T) {
	spec := Find("query_graph")
	if spec == nil || spec.Tool == nil || !spec.Hidden {
		t.Fatalf("query_graph: %+v (want a hidden verb that is an MCP tool)", spec)
	}
	for _, c := range []struct {
		name, raw, field string
		exit             int
	}{
		{"unknown", `{"operation":"get","entityType":"atom","id":"00000000-0000-4000-8000-000000000000","bogus":1}`, "bogus", ExitUsage},
		{"mistyped", `{"operation":"search","entityType":"atom","limit":"many"}`, "limit", ExitDataErr},
		{"missing", `{"entityType":"atom"}`, "operation", ExitDataErr},
	} {
		_, err := spec.DecodeJSON([]byte(c.raw))
		e := Classify(err)
		d, _ := e.Details.(map[string]any)
		if e.Code != string(op.CodeValidation) || e.Exit != c.exit || d["field"] != c.field {
			t.Errorf("%s: %+v, want VALIDATION_ERROR about %s, exit %d", c.name, e, c.field, c.exit)
		}
	}
	// The CLI's key=value strings: numbers and booleans as strings, paths
	// comma-separated.
	req, err := spec.DecodeCLI(nil, map[string]any{"operation": "context", "paths": "a.ts, b/c.ts", "changelogLimit": "2", "includeChangelog": "false"})
	if err != nil {
		t.Fatal(err)
	}
	q := req.(*QueryGraph)
	if strings.Join(q.Paths, "|") != "a.ts|b/c.ts" || *q.ChangelogLimit != 2 || *q.IncludeChangelog {
		t.Fatalf("decoded %+v", q.QueryGraph)
	}
}

// The parameters travel to the kernel as given: an empty relatedAtoms
// (clear the relations) and moleculeId null (unassign) survive.
func TestKnowledgeParamsKeepEmptyAndNull(t *testing.T) {
	raw := `{"operation":"update","entityType":"atom","id":"00000000-0000-4000-8000-000000000000","version":2,"relatedAtoms":[],"moleculeId":null,"lastTaskId":"t"}`
	req, err := DecodeKnowledge("manage_graph", json.RawMessage(raw))
	if err != nil {
		t.Fatal(err)
	}
	p, err := paramsOf(req.(knowledgeRequest))
	if err != nil || string(p) != raw {
		t.Fatalf("params = %s, %v", p, err)
	}
	// Built in Go (no JSON it came from): moleculeId null is written "".
	m := &ManageGraph{}
	if err := json.Unmarshal([]byte(raw), &m.ManageGraph); err != nil {
		t.Fatal(err)
	}
	p, err = paramsOf(m)
	if err != nil || !strings.Contains(string(p), `"moleculeId":""`) {
		t.Fatalf("encoded %s, %v", p, err)
	}
	again, err := api.Decode("manage_graph", p)
	if err != nil || !again.(*graphop.ManageGraph).Unassign() {
		t.Fatalf("decoded again: %+v, %v", again, err)
	}
}

// Each operation's result renders as its own text, and a verify with a
// break fails with INVARIANT_VIOLATION (exit 65) carrying the report.
func TestKnowledgeOutcomes(t *testing.T) {
	cases := []struct {
		op, params, result, text string
	}{
		{"query_graph", `{"operation":"get","entityType":"molecule","id":"00000000-0000-4000-8000-000000000000"}`,
			`{"id":"m1","name":"Pages","version":3,"atoms":[{"id":"a1","name":"Checkout","paths":["src/c/**"],"version":1}]}`, `molecule=m1 name="Pages" version=3`},
		{"query_graph", `{"operation":"search","entityType":"atom"}`, `{"items":[],"total":0,"limit":20,"offset":0}`, "total=0 limit=20 offset=0"},
		{"query_graph", `{"operation":"context","paths":"a"}`, `{"molecules":[],"orphanAtoms":[],"unmatchedPaths":["a"]}`, "unmatched: a"},
		{"manage_graph", `{"operation":"delete","entityType":"atom","id":"00000000-0000-4000-8000-000000000000","version":1,"lastTaskId":"t"}`,
			`{"entityType":"atom","id":"x","deleted":true,"version":2,"deletedChangelog":0}`, "deleted=atom id=x version=2"},
		{"manage_changelog", `{"operation":"search","parentType":"atom","parentId":"00000000-0000-4000-8000-000000000000"}`,
			`{"items":[{"taskId":"t9","summary":"did it","createdAt":"now"}],"total":1,"limit":20,"offset":0}`, "now task=t9  did it"},
		{"history", `{"id":"00000000-0000-4000-8000-000000000000","version":1}`,
			`{"entityType":"atom","id":"x","version":2,"items":[],"total":2,"limit":20,"offset":0,"state":{"id":"x","name":"Old","paths":["a/**"],"version":1}}`, `state: atom=x name="Old" version=1`},
		{"project_list", `{}`, `{"items":[{"id":"p","name":"repo","root":"/r"}],"total":1,"limit":20,"offset":0}`, `p "repo" root=/r`},
		{"init", `{}`, `{"path":"/r/.pi/knowledge.db","created":true,"project":{"id":"p","name":"r","root":"/r"}}`, "path=/r/.pi/knowledge.db created=true project=p"},
	}
	for _, c := range cases {
		req, err := api.Decode(c.op, json.RawMessage(c.params))
		if err != nil {
			t.Fatalf("%s %s: %v", c.op, c.params, err)
		}
		out, err := KnowledgeOutcome(req, json.RawMessage(c.result))
		if err != nil || !strings.Contains(out.Text, c.text) || string(out.Result.(json.RawMessage)) != c.result {
			t.Errorf("%s: text %q (want %q), result %s, %v", c.op, out.Text, c.text, out.Result, err)
		}
	}
	report := `{"ok":false,"stores":[{"store":"project","path":"/k.db","ok":false,"entities":1,"deltas":1,"breaks":[{"entityType":"atom","entityId":"x","version":1,"reason":"altered"}]}]}`
	out, err := KnowledgeOutcome(&graphop.Verify{}, json.RawMessage(report))
	if err != nil || out.Fail == nil || out.Fail.Code != string(op.CodeInvariant) || out.Exit != ExitDataErr || !strings.Contains(out.Text, "atom x v1: altered") {
		t.Fatalf("broken verify: %+v, %v", out, err)
	}
}

// A write that lost a race with another process on the same store (a
// second kernel's ingest) is CONFLICT, exit 75, with a hint to run it
// again — not exit 70 with SQLite's message.
func TestKnowledgeBusyIsTempFail(t *testing.T) {
	err := fmt.Errorf("ingest /repo: %w", op.Busy("path", "file /repo/a.go was indexed by another process during this ingest"))
	e := Classify(err)
	d, _ := e.Details.(map[string]any)
	if e.Exit != ExitTempFail || e.Code != string(op.CodeConflict) || e.Hint != op.BusyHint || d["reason"] != op.ReasonBusy || d["field"] != "path" {
		t.Fatalf("%+v", e)
	}
}
