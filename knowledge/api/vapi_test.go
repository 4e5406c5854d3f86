package api

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestVectorRequests(t *testing.T) {
	id := "00000000-0000-4000-8000-000000000000"
	bad := []struct{ op, raw, field string }{
		{"search", `{}`, "query"},
		{"search", `{"query":"  "}`, "query"},
		{"search", `{"query":"x","domain":"web"}`, "domain"},
		{"search", `{"query":"x","domain":"code","type":"rfc"}`, "type"},
		{"search", `{"query":"x","type":"spaceship"}`, "type"},
		{"search", `{"query":"x","limit":0}`, "limit"},
		{"search_all", `{"query":"x","domains":"code,web"}`, "domains"},
		{"search_all", `{"query":"x","limitPerDomain":51}`, "limitPerDomain"},
		{"smart_search", `{"query":"x","tokenBudget":50}`, "tokenBudget"},
		{"smart_search", `{"query":"x","thoroughness":"deep"}`, "thoroughness"},
		{"ingest", `{}`, "path"},
		{"ingest", `{"path":".","glob":"[a"}`, "glob"},
		{"node_add", `{"type":"decision","name":"n"}`, "domain"},
		{"node_add", `{"domain":"history","name":"n"}`, "type"},
		{"node_add", `{"domain":"history","type":"paper","name":"n"}`, "type"},
		{"node_add", `{"domain":"history","type":"decision"}`, "name"},
		{"node_add", `{"domain":"history","type":"decision","name":"n","source":"oracle"}`, "source"},
		{"node_add", `{"domain":"history","type":"decision","name":"n","trust":101}`, "trust"},
		{"node_add", `{"domain":"history","type":"decision","name":"n","links":[{"to":"x","type":"cites"}]}`, "links"},
		{"node_add", `{"domain":"history","type":"decision","name":"n","links":[{"to":"` + id + `","type":"likes"}]}`, "links"},
		{"node_add", `{"domain":"history","type":"decision","name":"n","links":[{"to":"` + id + `","kind":"cites"}]}`, "links"},
		{"node_get", `{}`, "id"},
		{"traverse", `{"id":"` + id + `","direction":"up"}`, "direction"},
		{"traverse", `{"id":"` + id + `","fanOut":101}`, "fanOut"},
		{"conflicts", `{"operation":"resolve","id":2}`, "resolution"},
		{"conflicts", `{"operation":"resolve","resolution":"r"}`, "id"},
		{"conflicts", `{"id":2}`, "id"},
	}
	for _, c := range bad {
		e := decodeErr(t, c.op, c.raw)
		if e.Details["field"] != c.field {
			t.Errorf("%s %s: error on %v (%s), want %s", c.op, c.raw, e.Details["field"], e.Message, c.field)
		}
	}
	r, err := Decode("search", json.RawMessage(`{"query":" retry ","type":"function","limit":"5"}`))
	if err != nil {
		t.Fatal(err)
	}
	if s := r.(*Search); s.Query != "retry" || s.Domain != "code" || *s.Limit != 5 {
		t.Fatalf("search %+v", s)
	}
	r, err = Decode("search_all", json.RawMessage(`{"query":"x","domains":"history, academic"}`))
	if err != nil || !slices.Equal(r.(*SearchAll).Domains, []string{"history", "academic"}) {
		t.Fatalf("search_all %+v %v", r, err)
	}
	r, err = Decode("node_add", json.RawMessage(`{"domain":"academic","type":"rfc","name":" RFC 7519 ","links":"[{\"to\":\"`+strings.ToUpper(id)+`\",\"type\":\"documents\"}]"}`))
	if err != nil {
		t.Fatal(err)
	}
	if n := r.(*NodeAdd); n.Name != "RFC 7519" || n.Source != SourceModel || n.Links[0].To != id {
		t.Fatalf("node_add %+v", n)
	}
	if DefaultTrust("academic", "rfc", SourceAcademic, false) != TrustStandard || DefaultTrust("history", "entry", SourceHistory, true) != TrustRecent ||
		DefaultTrust("code", "function", SourceModel, false) != TrustModel || DefaultTrust("academic", "blog_post", SourceAcademic, true) != TrustBlog {
		t.Fatal("DefaultTrust")
	}
}

func TestVectorText(t *testing.T) {
	h := Hit{ID: "n1", Domain: "code", Type: "method", Name: "Policy.Next", Path: "/r/retry/policy.go", LineStart: 15, LineEnd: 18,
		Snippet: "func (p *Policy) Next(attempt int)\n  return", Score: 0.91, Similarity: 0.62, Trust: 100, Freshness: 1,
		Provenance: []Provenance{{Source: "code", Ref: "/r/retry/policy.go:15-18", At: "t"}},
		Conflicts:  []ConflictRef{{ID: 4, Type: "source_mismatch", With: "n9", WithName: "backoff"}},
		Atoms:      []AtomRef{{ID: "a", Name: "Retry"}}, Store: "project"}
	out := Text(&SearchResult{Query: "q", Status: StatusOK, Hits: []Hit{h}, AlsoExistsIn: []string{"history"}})
	for _, want := range []string{"status=ok hits=1", `0.91 code/method "Policy.Next" /r/retry/policy.go:15-18`, "from code /r/retry/policy.go:15-18",
		"! conflict #4 (source_mismatch) with n9", "atoms: Retry", "also exists in: history"} {
		if !strings.Contains(out, want) {
			t.Errorf("search text lacks %q:\n%s", want, out)
		}
	}
	many := &SearchAllResult{Query: "q", Results: []DomainResult{{Domain: "code", Status: StatusOK}, {Domain: "history", Status: StatusNoMatches}}}
	for range 30 {
		many.Results[0].Hits = append(many.Results[0].Hits, h)
	}
	out = Text(many)
	if !strings.Contains(out, "code: status=ok hits=30") || !strings.Contains(out, "history: status=no_matches") ||
		!strings.Contains(out, "10 more hits") || len(out) > 12000 {
		t.Fatalf("search_all text (%d bytes):\n%s", len(out), out)
	}
	st := &StatusResult{Stores: []StoreStatus{{Store: "project", Vectors: &VectorStatus{Embedder: "e", Dim: 8, Nodes: 3,
		Embedding: EmbedProgress{Running: true, Done: 64, Total: 130}, Domains: []IndexStatus{{Domain: "code", Index: "hnsw"}}}}}}
	if out = Text(st); !strings.Contains(out, "embedding=64/130") || !strings.Contains(out, "code nodes=0 vectors=0 index=hnsw") {
		t.Fatalf("status text:\n%s", out)
	}
	tr := &TraverseResult{Start: NodeRef{ID: "s", Domain: "code", Type: "file", Name: "f"},
		Nodes: []Step{{NodeRef: NodeRef{ID: "x", Domain: "history", Type: "outcome", Name: "run"}, Depth: 2, Via: "created", Direction: "in"}}}
	if out = Text(tr); !strings.Contains(out, "    ← created history/outcome \"run\" x") {
		t.Fatalf("traverse text:\n%s", out)
	}
}
