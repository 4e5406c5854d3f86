package vectorop

import (
	"strings"
	"testing"
)

func TestVectorText(t *testing.T) {
	h := Hit{ID: "n1", Domain: "code", Type: "method", Name: "Policy.Next", Path: "/r/retry/policy.go", LineStart: 15, LineEnd: 18,
		Snippet: "func (p *Policy) Next(attempt int)\n  return", Score: 0.91, Similarity: 0.62, Trust: 100, Freshness: 1,
		Provenance: []Provenance{{Source: "code", Ref: "/r/retry/policy.go:15-18", At: "t"}},
		Conflicts:  []ConflictRef{{ID: 4, Type: "source_mismatch", With: "n9", WithName: "backoff"}},
		Atoms:      []AtomRef{{ID: "a", Name: "Retry"}}, Store: "project"}
	out, _ := Text(&SearchResult{Query: "q", Status: StatusOK, Hits: []Hit{h}, AlsoExistsIn: []string{"history"}})
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
	out, _ = Text(many)
	if !strings.Contains(out, "code: status=ok hits=30") || !strings.Contains(out, "history: status=no_matches") ||
		!strings.Contains(out, "10 more hits") || len(out) > 12000 {
		t.Fatalf("search_all text (%d bytes):\n%s", len(out), out)
	}
	tr := &TraverseResult{Start: NodeRef{ID: "s", Domain: "code", Type: "file", Name: "f"},
		Nodes: []Step{{NodeRef: NodeRef{ID: "x", Domain: "history", Type: "outcome", Name: "run"}, Depth: 2, Via: "created", Direction: "in"}}}
	if out, _ = Text(tr); !strings.Contains(out, "    ← created history/outcome \"run\" x") {
		t.Fatalf("traverse text:\n%s", out)
	}
}
