package graph

import (
	"fmt"
	"slices"
	"testing"

	"github.com/pi-actors/pi-actors/knowledge/api/graphop"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/store"
)

// contextOf runs context and returns atom name → matched paths (molecule
// atoms as "Molecule/Atom"), and the unmatched paths.
func contextOf(e *env, paths string) (map[string][]string, []string, *graphop.Context) {
	e.t.Helper()
	c := e.OK("query_graph", fmt.Sprintf(`{"operation":"context","paths":%s}`, paths)).(*graphop.Context)
	got := map[string][]string{}
	for _, m := range c.Molecules {
		for _, a := range m.Atoms {
			got[m.Name+"/"+a.Name] = a.MatchedPaths
		}
	}
	for _, a := range c.OrphanAtoms {
		got[a.Name] = a.MatchedPaths
	}
	return got, c.UnmatchedPaths, c
}

func TestContextGlobs(t *testing.T) {
	e := newEnv(t)
	auth, pay := e.Molecule("Auth", `,"knowledge":"auth k"`), e.Molecule("Payments", "")
	e.Atom("AnyTS", `["**/*.ts"]`, "")                                     // ** at the start
	e.Atom("Tests", `["src/**/test/*.go"]`, "")                            // ** in the middle
	e.Atom("Checkout", `["src/pages/checkout/**"]`, "")                    // ** at the end
	e.Atom("Star", `["src/*.md"]`, "")                                     // * within one segment
	e.Atom("Dot", `["config/.*"]`, "")                                     // dotfiles
	e.Atom("Exact", `["src/shared/email-client.ts", "docs/{a,b}.md"]`, "") // literal and braces
	shared := e.Atom("Shared Retry", `["src/shared/retry-*.ts"]`, `,"moleculeId":"`+auth.ID+`"`)
	e.Atom("Shared Retry Pay", `["src/shared/*.ts"]`, `,"moleculeId":"`+pay.ID+`"`)
	e.Atom("Gateway", `["src/payments/gateway/**", "src/payments/stripe-*.ts"]`, `,"moleculeId":"`+pay.ID+`","relatedAtoms":[{"atomId":"`+shared.ID+`","reason":"retries calls"}]`)

	got, unmatched, c := contextOf(e, `["src/a.ts","x.ts","src/deep/er/test/a_test.go","src/test/b.go","src/x/test/sub/c.go",
		"src/pages/checkout","src/pages/checkout/a/b.tsx","src/README.md","src/sub/README.md","config/.env","config/sub/.env",
		"src/shared/email-client.ts","docs/b.md","src/shared/retry-utils.ts","src/payments/gateway/x.go","src/payments/stripe-api.ts",
		"./src/pages/checkout/c.css","`+e.repo+`/src/README.md","/outside/x.ts","../x.ts","nothing/here.txt","src/a.ts"]`)
	want := map[string][]string{
		"AnyTS":                     {"src/a.ts", "x.ts", "src/shared/email-client.ts", "src/shared/retry-utils.ts", "src/payments/stripe-api.ts"},
		"Tests":                     {"src/deep/er/test/a_test.go", "src/test/b.go"},
		"Checkout":                  {"src/pages/checkout", "src/pages/checkout/a/b.tsx", "./src/pages/checkout/c.css"},
		"Star":                      {"src/README.md", e.repo + "/src/README.md"},
		"Dot":                       {"config/.env"},
		"Exact":                     {"src/shared/email-client.ts", "docs/b.md"},
		"Auth/Shared Retry":         {"src/shared/retry-utils.ts"},
		"Payments/Shared Retry Pay": {"src/shared/email-client.ts", "src/shared/retry-utils.ts"},
		"Payments/Gateway":          {"src/payments/gateway/x.go", "src/payments/stripe-api.ts"},
	}
	for k, w := range want {
		if !slices.Equal(got[k], w) {
			t.Errorf("%s matched %q, want %q", k, got[k], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("matched atoms %v", got)
	}
	wantUn := []string{"src/x/test/sub/c.go", "src/sub/README.md", "config/sub/.env", "/outside/x.ts", "../x.ts", "nothing/here.txt"}
	if !slices.Equal(unmatched, wantUn) {
		t.Errorf("unmatched %q, want %q", unmatched, wantUn)
	}
	// Order: molecules by name, atoms by name within; orphans by name.
	if len(c.Molecules) != 2 || c.Molecules[0].Name != "Auth" || c.Molecules[1].Name != "Payments" || c.Molecules[0].Knowledge != "auth k" {
		t.Fatalf("molecules %s", mustJSON(c.Molecules))
	}
	if pa := c.Molecules[1].Atoms; pa[0].Name != "Gateway" || pa[1].Name != "Shared Retry Pay" {
		t.Fatalf("atom order %s", mustJSON(pa))
	}
	var names []string
	for _, a := range c.OrphanAtoms {
		names = append(names, a.Name)
	}
	if !slices.IsSorted(names) || len(names) != 6 {
		t.Fatalf("orphans %q", names)
	}
	gw := c.Molecules[1].Atoms[0]
	if len(gw.RelatedAtoms) != 1 || gw.RelatedAtoms[0].Name != "Shared Retry" || gw.RelatedAtoms[0].Reason != "retries calls" || gw.Changelog == nil {
		t.Fatalf("related %s", mustJSON(gw))
	}

	e.Fail(op.CodeValidation, "paths", "query_graph", `{"operation":"context"}`)
	e.Fail(op.CodeValidation, "paths", "query_graph", `{"operation":"context","paths":" , "}`)
	e.Fail(op.CodeValidation, "paths", "query_graph", `{"operation":"context","paths":5}`)
	e.Fail(op.CodeValidation, "entityType", "query_graph", `{"operation":"context","paths":"a","entityType":"molecule"}`)
}

func TestContextFollowsWrites(t *testing.T) {
	e := newEnv(t)
	a := e.Atom("A", `["old/**"]`, "")
	got, _, _ := contextOf(e, `"old/x.go,new/x.go"`)
	if !slices.Equal(got["A"], []string{"old/x.go"}) {
		t.Fatalf("before: %v", got)
	}
	e.OK("manage_graph", `{"operation":"update","entityType":"atom","id":"`+a.ID+`","version":1,"paths":["new/**"]}`)
	got, _, _ = contextOf(e, `"old/x.go,new/x.go"`)
	if !slices.Equal(got["A"], []string{"new/x.go"}) {
		t.Fatalf("after paths update: %v", got)
	}
	// A write by another Store on the same file (another process's view).
	other := openGraph(t, e.path, store.Options{Layer: op.StoreProject})
	name := "B"
	_, err := other.ManageGraph(t.Context(), e.caller, &graphop.ManageGraph{Operation: "create", EntityType: "atom", Name: &name, Paths: graphop.Patterns{"old/**"}})
	if err != nil {
		t.Fatal(err)
	}
	got, _, _ = contextOf(e, `"old/x.go"`)
	if !slices.Equal(got["B"], []string{"old/x.go"}) {
		t.Fatalf("after another store's create: %v", got)
	}
	e.OK("manage_graph", `{"operation":"delete","entityType":"atom","id":"`+a.ID+`","version":2}`)
	got, un, _ := contextOf(e, `"new/x.go"`)
	if len(got) != 0 || !slices.Equal(un, []string{"new/x.go"}) {
		t.Fatalf("after delete: %v %v", got, un)
	}
}

func TestContextFiles(t *testing.T) {
	text := "# Task\n\nSome text src/not/this.ts\n\n## Context Files\n\n" +
		"- `src/payments/webhook-handler.ts` - the handler\n" +
		"- src/payments/stripe-gateway.ts, src/shared/retry-utils.ts\n" +
		"* [gateway](src/payments/gateway/index.ts)\n" +
		"1. ./docs/payments.md\n" +
		"src/a.go,src/b.go , ,src/c.go\n" +
		"this line is prose\n" +
		"- https://example.com/x.ts\n" +
		"- ../escape.ts\n" +
		"- src/**/glob.ts\n" +
		"- src/a.go\n" +
		"```\nsrc/fenced.ts\n```\n" +
		"## Implementation Plan\n- src/after.ts\n"
	got, found := contextFiles(text)
	want := []string{"src/payments/webhook-handler.ts", "src/payments/stripe-gateway.ts", "src/shared/retry-utils.ts",
		"src/payments/gateway/index.ts", "docs/payments.md", "src/a.go", "src/b.go", "src/c.go", "src/fenced.ts"}
	if !found || !slices.Equal(got, want) {
		t.Fatalf("got %q (found %v)\nwant %q", got, found, want)
	}
	got, found = contextFiles("**Context Files:**\nsrc/x.ts\n\nNotes:\nsrc/y.ts\n")
	if !found || !slices.Equal(got, []string{"src/x.ts"}) {
		t.Fatalf("label form: %q %v", got, found)
	}
	if _, found := contextFiles("# Task\nsrc/x.ts\n"); found {
		t.Fatal("found a section in a task without one")
	}
}

func TestTaskContextAndHints(t *testing.T) {
	e := newEnv(t)
	roots := func(limit int) ([]string, bool) {
		t.Helper()
		r, more, err := e.g.AtomRoots(t.Context(), limit)
		if err != nil {
			t.Fatal(err)
		}
		return r, more
	}
	if r, _ := roots(10); len(r) != 0 || UnderRoot(e.repo, r) {
		t.Fatalf("roots %q for a project without atoms", r)
	}
	e.Atom("Pay", `["src/pay/**"]`, "")
	r, more := roots(10)
	if more || !UnderRoot(e.repo+"/src", r) || !UnderRoot(e.repo, r) {
		t.Fatalf("roots %q (more %v) do not cover the project %s", r, more, e.repo)
	}
	for _, cwd := range []string{"/elsewhere", e.repo + "-sibling", "relative/src", ""} {
		if UnderRoot(cwd, r) {
			t.Fatalf("%q is under the roots %q", cwd, r)
		}
	}
	if r, more := roots(0); len(r) != 0 || !more {
		t.Fatalf("limit 0: %q more %v", r, more)
	}
	if h := AdvanceHints(); h.Message != "Task completed. Consider updating the knowledge graph." || len(h.SuggestedActions) != 3 {
		t.Fatalf("hints %+v", h)
	}
	res := e.OK("task_context", `{"text":"## Context Files\nsrc/pay/a.ts\nsrc/other.ts\n"}`).(*graphop.TaskContextResult)
	if len(res.GraphContext.OrphanAtoms) != 1 || !slices.Equal(res.GraphContext.UnmatchedPaths, []string{"src/other.ts"}) {
		t.Fatalf("task context %s", mustJSON(res))
	}
	if s := mustJSON(res); s[:16] != `{"graphContext":` {
		t.Fatalf("shape %s", s)
	}
	e.Fail(op.CodeValidation, "text", "task_context", `{"text":"no section"}`)
	e.Fail(op.CodeValidation, "file", "task_context", `{}`)
	e.Fail(op.CodeNotFound, "file", "task_context", `{"file":"missing.md"}`)
}
