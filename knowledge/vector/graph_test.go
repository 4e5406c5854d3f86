package vector

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pi-actors/pi-actors/knowledge/api"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/api/vectorop"
	"github.com/pi-actors/pi-actors/knowledge/store"
)

func link(to, typ string) string { return fmt.Sprintf(`{"to":%q,"type":%q}`, to, typ) }

// Walks stop at the depth, the fan-out and the limit, visit every node
// once (a cycle ends the walk) and follow only the asked edge types.
func TestTraverseBoundsAndCycles(t *testing.T) {
	e := newEnv(t)
	// A chain a0 → a1 → … → a7 → a0 (a cycle) of related_to edges.
	chain := make([]*vectorop.Node, 8)
	for i := range chain {
		extra := ""
		if i > 0 {
			extra = `,"links":[` + link(chain[i-1].ID, "related_to") + `]`
		}
		chain[i] = e.Node("academic", "paper", fmt.Sprintf("paper %d", i), "on consensus", extra)
	}
	e.Node("academic", "paper", "closing", "", `,"links":[`+link(chain[7].ID, "cites")+`]`)
	// a0 → a7 closes the cycle.
	_, err := e.s.writeGraph(t.Context(), func(tx *vtx) (any, error) {
		return nil, tx.addEdge(t.Context(), chain[0].ID, "related_to", chain[7].ID, store.Now())
	})
	if err != nil {
		t.Fatal(err)
	}

	walk := func(raw string) *vectorop.TraverseResult {
		t.Helper()
		return e.OK("traverse", raw).(*vectorop.TraverseResult)
	}
	// in direction from a0: a1 (depth 1) … a5 (depth 5), never past 5.
	r := walk(`{"id":"` + chain[0].ID + `","direction":"in","depth":5,"edgeTypes":"related_to"}`)
	if len(r.Nodes) != 5 || r.Nodes[4].Depth != 5 || r.Nodes[4].Name != "paper 5" || r.Truncated {
		t.Fatalf("depth 5 walk: %s", api.Text(r))
	}
	// Both directions, full depth: every node once, the start never again.
	r = walk(`{"id":"` + chain[0].ID + `","depth":5}`)
	seen := map[string]bool{chain[0].ID: true}
	for _, n := range r.Nodes {
		if seen[n.ID] {
			t.Fatalf("node %s twice: %s", n.Name, api.Text(r))
		}
		seen[n.ID] = true
	}
	if len(r.Nodes) != 8 {
		t.Fatalf("both-way walk reached %d nodes: %s", len(r.Nodes), api.Text(r))
	}
	if r = walk(`{"id":"` + chain[0].ID + `","depth":5,"edgeTypes":"cites"}`); len(r.Nodes) != 0 {
		t.Fatalf("cites from a0: %s", api.Text(r))
	}
	// Fan-out: a hub with 30 spokes.
	hub := e.Node("history", "decision", "hub decision", "", "")
	for i := range 30 {
		e.Node("academic", "rfc", fmt.Sprintf("rfc %d", i), "", `,"source":"academic","links":[`+link(hub.ID, "references")+`]`)
	}
	r = walk(`{"id":"` + hub.ID + `","fanOut":10}`)
	if len(r.Nodes) != 10 || !r.Truncated {
		t.Fatalf("fan-out 10: %d nodes, truncated %t", len(r.Nodes), r.Truncated)
	}
	r = walk(`{"id":"` + hub.ID + `","fanOut":100,"limit":7}`)
	if len(r.Nodes) != 7 || !r.Truncated {
		t.Fatalf("limit 7: %d nodes, truncated %t", len(r.Nodes), r.Truncated)
	}
	e.Fail(op.CodeValidation, "depth", "traverse", `{"id":"`+hub.ID+`","depth":6}`)
	e.Fail(op.CodeValidation, "edgeTypes", "traverse", `{"id":"`+hub.ID+`","edgeTypes":"calls,eats"}`)
	e.Fail(op.CodeNotFound, "id", "traverse", `{"id":"00000000-0000-4000-8000-000000000000"}`)
}

// A query whose topics no domain filter holds answers no_matches without
// a vector search or a row read; a domain without the topic hints at the
// domains that may have it.
func TestFilterEarlyExit(t *testing.T) {
	e := newEnv(t)
	s := e.s
	e.Node("academic", "documentation", "Raft leader election", "a candidate becomes leader with a quorum of votes", `,"source":"academic"`)
	e.Node("code", "function", "StartElection", "func StartElection() starts a raft election", `,"source":"code","verified":true`)
	g, err := s.load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	searches, reads := g.searches.Load(), g.rowReads.Load()
	r := e.OK("search_all", `{"query":"zebra giraffe"}`).(*vectorop.SearchAllResult)
	for _, d := range r.Results {
		if d.Status != vectorop.StatusNoMatches || len(d.Hits) != 0 {
			t.Fatalf("zebra: %s", api.Text(r))
		}
	}
	if g.searches.Load() != searches || g.rowReads.Load() != reads {
		t.Fatalf("the filter did not stop the search: %d searches, %d row reads", g.searches.Load()-searches, g.rowReads.Load()-reads)
	}
	one := e.OK("search", `{"query":"quorum votes","domain":"code"}`).(*vectorop.SearchResult)
	if one.Status != vectorop.StatusNoMatches || len(one.AlsoExistsIn) != 1 || one.AlsoExistsIn[0] != "academic" ||
		!strings.Contains(one.Hint, "domain=academic") {
		t.Fatalf("quorum in code: %s", mustJSON(one))
	}
	if g.searches.Load() != searches {
		t.Fatal("a filtered-out domain was searched")
	}
	hit := e.OK("search", `{"query":"quorum votes","domain":"academic"}`).(*vectorop.SearchResult)
	if hit.Status != vectorop.StatusOK || hit.Hits[0].Name != "Raft leader election" || hit.Hits[0].Trust != vectorop.TrustStandard {
		t.Fatalf("quorum in academic: %s", mustJSON(hit))
	}
	// Every domain, one list: the topic is in code and academic.
	both := e.OK("search", `{"query":"raft election"}`).(*vectorop.SearchResult)
	if len(both.Hits) != 2 || both.Hits[0].Domain != "code" {
		t.Fatalf("raft election: %s", api.Text(both))
	}
}

// Two statements with the same subject and different content are a
// conflict; both stay, hits carry it until it is resolved.
func TestConflicts(t *testing.T) {
	e := newEnv(t)
	a := e.Node("history", "decision", "session storage", "we use redis for sessions", "")
	b := e.OK("node_add", `{"domain":"history","type":"decision","name":"Session Storage","content":"we use postgres for sessions"}`).(*vectorop.NodeAdded)
	if len(b.Conflicts) != 1 || b.Conflicts[0].With != a.ID || b.Conflicts[0].Type != vectorop.ConflictSemantic {
		t.Fatalf("conflicts: %s", mustJSON(b))
	}
	code := e.OK("node_add", `{"domain":"code","type":"function","name":"session storage","content":"func sessions() *sql.DB","source":"code"}`).(*vectorop.NodeAdded)
	if len(code.Conflicts) != 2 || code.Conflicts[0].Type != vectorop.ConflictSourceMismatch {
		t.Fatalf("code conflicts: %s", mustJSON(code))
	}
	r := e.OK("search", `{"query":"sessions redis postgres","domain":"history"}`).(*vectorop.SearchResult)
	for _, h := range r.Hits {
		if (h.ID == a.ID || h.ID == b.Node.ID) && len(h.Conflicts) != 2 {
			t.Fatalf("hit %s conflicts %+v", h.Name, h.Conflicts)
		}
	}
	page := e.OK("conflicts", `{}`).(*op.Page[vectorop.ConflictRecord])
	if page.Total != 3 {
		t.Fatalf("conflicts page %s", mustJSON(page))
	}
	id := b.Conflicts[0].ID
	res := e.OK("conflicts", fmt.Sprintf(`{"operation":"resolve","id":%d,"resolution":"postgres since the June migration"}`, id)).(*vectorop.ConflictRecord)
	if !res.Resolved || res.Resolution == "" {
		t.Fatalf("resolved %s", mustJSON(res))
	}
	// A retry answers the same record; another resolution is refused.
	again := e.OK("conflicts", fmt.Sprintf(`{"operation":"resolve","id":%d,"resolution":"postgres since the June migration"}`, id)).(*vectorop.ConflictRecord)
	if again.ResolvedAt != res.ResolvedAt {
		t.Fatalf("a retry resolved it again: %s then %s", res.ResolvedAt, again.ResolvedAt)
	}
	e.Fail(op.CodeValidation, "id", "conflicts", fmt.Sprintf(`{"operation":"resolve","id":%d,"resolution":"mysql after all"}`, id))
	if page = e.OK("conflicts", `{}`).(*op.Page[vectorop.ConflictRecord]); page.Total != 2 {
		t.Fatalf("after resolve %s", mustJSON(page))
	}
	if page = e.OK("conflicts", `{"all":true}`).(*op.Page[vectorop.ConflictRecord]); page.Total != 3 {
		t.Fatalf("all %s", mustJSON(page))
	}
	d := e.OK("node_get", `{"id":"`+a.ID+`"}`).(*vectorop.NodeDetail)
	if len(d.Conflicts) != 1 || d.Conflicts[0].Type != vectorop.ConflictSourceMismatch {
		t.Fatalf("a's open conflicts %s", mustJSON(d.Conflicts))
	}
	e.Fail(op.CodeNotFound, "id", "conflicts", `{"operation":"resolve","id":999,"resolution":"x","store":"project"}`)
	e.Fail(op.CodeValidation, "resolution", "conflicts", `{"operation":"resolve","id":1}`)
	// A superseding statement ends nothing silently: the old conflicts stay.
	c := e.OK("node_add", `{"domain":"history","type":"decision","name":"session storage","content":"we use postgres","supersedes":"`+a.ID+`"}`).(*vectorop.NodeAdded)
	if d = e.OK("node_get", `{"id":"`+a.ID+`"}`).(*vectorop.NodeDetail); d.Node.SupersededBy != c.Node.ID || len(d.Conflicts) != 1 {
		t.Fatalf("superseded a: %s", mustJSON(d))
	}
	// Same content is no conflict.
	same := e.OK("node_add", `{"domain":"history","type":"entry","name":"session storage","content":"we use postgres"}`).(*vectorop.NodeAdded)
	for _, x := range same.Conflicts {
		if x.With == c.Node.ID {
			t.Fatalf("same content: %s", mustJSON(same))
		}
	}
}

func TestSmartSearch(t *testing.T) {
	e := newEnv(t)
	for i := range 40 {
		e.Node("history", "entry", fmt.Sprintf("cache eviction note %d", i),
			fmt.Sprintf("the LRU cache evicted hot keys during run %d; raise the cache size", i), `,"verified":true,"source":"history"`)
	}
	quick := e.OK("smart_search", `{"query":"LRU cache eviction","thoroughness":"quick"}`).(*vectorop.SmartSearchResult)
	if !quick.Confident || quick.Rounds != 1 || len(quick.Hits) == 0 {
		t.Fatalf("quick: %s", api.Text(quick))
	}
	thorough := e.OK("smart_search", `{"query":"LRU cache eviction","thoroughness":"thorough","tokenBudget":400}`).(*vectorop.SmartSearchResult)
	if thorough.Confident || thorough.TokensUsed > 400 || len(thorough.Hits) <= len(quick.Hits)/2 {
		t.Fatalf("thorough: %s", api.Text(thorough))
	}
	big := e.OK("smart_search", `{"query":"LRU cache eviction","thoroughness":"thorough","tokenBudget":32000}`).(*vectorop.SmartSearchResult)
	if big.Rounds < 2 || len(big.Hits) != 40 {
		t.Fatalf("big budget: %d hits in %d rounds", len(big.Hits), big.Rounds)
	}
	if none := e.OK("smart_search", `{"query":"zebra"}`).(*vectorop.SmartSearchResult); none.Status != vectorop.StatusNoMatches || none.Rounds != 1 {
		t.Fatalf("zebra: %s", api.Text(none))
	}
}
