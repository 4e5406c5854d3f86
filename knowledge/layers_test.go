package knowledge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-actors/pi-actors/knowledge/api"
	"github.com/pi-actors/pi-actors/knowledge/api/graphop"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/api/vectorop"
	"github.com/pi-actors/pi-actors/knowledge/store"
	"github.com/pi-actors/pi-actors/knowledge/vector"
)

func TestLayers(t *testing.T) {
	e := newEnv(t)
	pp := e.OK("project_create", `{"name":"mine","root":"`+e.repo+`","store":"personal"}`).(*graphop.Project)
	if pp.Store != "personal" {
		t.Fatalf("personal project %+v", pp)
	}
	e.Fail(op.CodeValidation, "root", "project_create", `{"name":"dup","root":"`+e.repo+`","store":"personal"}`)
	pa := e.Atom("P", `["src/**"]`, `,"knowledge":"personal note","store":"personal"`)
	ja := e.Atom("J", `["src/**"]`, `,"knowledge":"project note"`)
	if pa.Store != "personal" || ja.Store != "project" || pa.ProjectID != pp.ID {
		t.Fatalf("stores %s %s", pa.Store, ja.Store)
	}
	// By id: found in whichever store holds it.
	got := e.OK("query_graph", `{"operation":"get","entityType":"atom","id":"`+pa.ID+`"}`).(*graphop.Atom)
	if got.Store != "personal" {
		t.Fatalf("get personal by id: %+v", got)
	}
	e.Fail(op.CodeNotFound, "id", "query_graph", `{"operation":"get","entityType":"atom","id":"`+pa.ID+`","store":"project"}`)
	u := e.OK("manage_graph", `{"operation":"update","entityType":"atom","id":"`+pa.ID+`","version":1,"name":"P2"}`).(*graphop.Atom)
	if u.Store != "personal" || u.Version != 2 {
		t.Fatalf("update routed: %+v", u)
	}
	e.OK("manage_changelog", `{"operation":"append","parentType":"atom","parentId":"`+pa.ID+`","summary":"s"}`)
	// Search spans both, project first, with one page across them.
	p := e.OK("query_graph", `{"operation":"search","entityType":"atom","query":"note"}`).(*op.Page[graphop.Atom])
	if p.Total != 2 || p.Items[0].Store != "project" || p.Items[1].Store != "personal" {
		t.Fatalf("layered search %s", mustJSON(p))
	}
	p = e.OK("query_graph", `{"operation":"search","entityType":"atom","limit":1,"offset":1}`).(*op.Page[graphop.Atom])
	if p.Total != 2 || len(p.Items) != 1 || p.Items[0].Store != "personal" {
		t.Fatalf("layered page 2 %s", mustJSON(p))
	}
	c := e.OK("query_graph", `{"operation":"context","paths":"src/x.go,other.txt"}`).(*graphop.Context)
	if len(c.OrphanAtoms) != 2 || c.OrphanAtoms[0].Store != "project" || c.OrphanAtoms[1].Store != "personal" || len(c.UnmatchedPaths) != 1 {
		t.Fatalf("layered context %s", mustJSON(c))
	}
	// An explicit projectId lives in one store: the other is skipped.
	p = e.OK("query_graph", `{"operation":"search","entityType":"atom","projectId":"`+pp.ID+`"}`).(*op.Page[graphop.Atom])
	if p.Total != 1 || p.Items[0].Store != "personal" {
		t.Fatalf("personal project search %s", mustJSON(p))
	}
	pl := e.OK("project_list", `{}`).(*op.Page[graphop.Project])
	if pl.Total != 2 || pl.Items[0].Store != "project" {
		t.Fatalf("projects %s", mustJSON(pl))
	}
	st := e.OK("status", `{}`).(*api.StatusResult)
	if len(st.Stores) != 2 || st.Stores[0].Counts.Atoms != 1 || st.Stores[1].Counts.Atoms != 1 || st.Stores[1].Counts.Changelog != 1 {
		t.Fatalf("status %s", mustJSON(st))
	}
	// init again is idempotent and reuses the open project store.
	in := e.OK("init", `{}`).(*api.InitResult)
	if in.Created || in.Project.Root != e.repo {
		t.Fatalf("re-init %+v", in)
	}
	// Without a project store.
	e.layers.Project = nil
	e.Fail(op.CodeValidation, "store", "query_graph", `{"operation":"search","entityType":"atom","store":"project"}`)
	a := e.Atom("Q", `["q/**"]`, "")
	if a.Store != "personal" {
		t.Fatalf("fallback create: %+v", a)
	}
	if store.FindProject(filepath.Join(e.repo, "src", "deep")) != filepath.Join(e.repo, store.ProjectFile) || store.FindProject(e.dir) != "" {
		t.Fatal("store.FindProject")
	}
	if store.PersonalPath("/a") != "/a/knowledge/knowledge.db" {
		t.Fatal("store.PersonalPath")
	}
}

// Conflict ids are per store: resolving an id both stores hold needs
// store= (it resolved the project's, for good); one only a store holds
// needs none.
func TestResolveConflictIDInBothStores(t *testing.T) {
	e := newEnv(t)
	for _, st := range []string{"project", "personal"} {
		e.Node("history", "decision", "cache policy", "ttl 60 "+st, `,"store":"`+st+`"`)
		b := e.OK("node_add", `{"domain":"history","type":"decision","name":"cache policy","content":"ttl 300 `+st+`","store":"`+st+`"}`).(*vectorop.NodeAdded)
		if len(b.Conflicts) != 1 || b.Conflicts[0].ID != 1 {
			t.Fatalf("%s conflicts %+v", st, b.Conflicts)
		}
	}
	e.Fail(op.CodeValidation, "store", "conflicts", `{"operation":"resolve","id":1,"resolution":"60 it is"}`)
	r := e.OK("conflicts", `{"operation":"resolve","id":1,"resolution":"60 it is","store":"personal"}`).(*vectorop.ConflictRecord)
	if !r.Resolved {
		t.Fatalf("resolve in personal: %+v", r)
	}
	if p := e.OK("conflicts", `{"store":"project"}`).(*op.Page[vectorop.ConflictRecord]); p.Total != 1 {
		t.Fatalf("the project's conflict #1 was touched: %+v", p)
	}
	e.Node("history", "decision", "queue size", "10", "")
	e.OK("node_add", `{"domain":"history","type":"decision","name":"queue size","content":"20"}`)
	e.OK("conflicts", `{"operation":"resolve","id":2,"resolution":"20"}`) // only the project holds #2
}

// recall asks the project store, then the personal one: a node in both
// (same natural key) comes once, from the project; each hit says where
// it is from.
func TestRecallLayering(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	exit := 0
	rec := vector.RunRecord{RunID: "bench-3", Recipe: "benchmark", Status: "exited", ExitCode: &exit,
		LastOutput: []string{"p99 latency 41ms for the checkout service"}}
	for _, s := range []*Store{e.layers.Project, e.layers.Personal} {
		if err := s.Vectors().CaptureRun(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	e.Node("history", "decision", "checkout latency budget", "checkout p99 latency must stay under 50ms", `,"store":"personal","verified":true,"source":"user"`)
	r := e.OK("recall", `{"query":"checkout p99 latency"}`).(*vectorop.RecallResult)
	if len(r.Stores) != 2 || r.Stores[0] != "project" {
		t.Fatalf("stores %v", r.Stores)
	}
	var runs, personal int
	for _, h := range r.Hits {
		if strings.HasPrefix(h.Name, "run bench-3") {
			runs++
			if h.Store != "project" {
				t.Fatalf("duplicate run kept from %s", h.Store)
			}
		}
		if h.Name == "checkout latency budget" && h.Store == "personal" {
			personal++
		}
	}
	if runs != 1 || personal != 1 {
		t.Fatalf("recall: %s", api.Text(r))
	}
	only := e.OK("recall", `{"query":"checkout p99 latency","store":"personal"}`).(*vectorop.RecallResult)
	if len(only.Stores) != 1 || only.Hits[0].Store != "personal" {
		t.Fatalf("personal recall: %s", api.Text(only))
	}
	if none := e.OK("recall", `{"query":"zebra"}`).(*vectorop.RecallResult); none.Status != vectorop.StatusNoMatches {
		t.Fatalf("zebra recall: %s", api.Text(none))
	}
}

// smart_search widens until confident or out of budget, and never spends
// more than the budget.

// TestIngestNames: a file's nodes are named from the project's root in
// the project store, and from the repository in the personal one, however
// the path ingest was given reaches them; outside both, from the path.
func TestIngestNames(t *testing.T) {
	e := newEnv(t)
	write := func(path, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	names := func(store, query string) map[string]bool {
		t.Helper()
		r := e.OK("search", `{"query":"`+query+`","domain":"code","limit":20,"store":"`+store+`"}`).(*vectorop.SearchResult)
		out := map[string]bool{}
		for _, h := range r.Hits {
			out[h.Type+":"+h.Name] = true
		}
		return out
	}
	write(filepath.Join(e.repo, "src", "a.go"), "package main\n\nfunc Hello() string { return \"hi\" }\n")
	e.OK("ingest", `{"path":"src/a.go"}`)
	e.OK("ingest", `{"path":"src/a.go","store":"personal"}`)
	for _, st := range []string{"project", "personal"} {
		if n := names(st, "Hello package main"); !n["file:src/a.go"] || !n["package:package main (src)"] || n["file:a.go"] {
			t.Fatalf("%s store, ingest path=src/a.go: names %v", st, n)
		}
	}
	// The same file through the directory: unchanged, nothing renamed.
	if r := e.OK("ingest", `{"path":"."}`).(*vectorop.IngestResult); r.Unchanged != 1 || r.Indexed != 0 {
		t.Fatalf("ingest path=. after path=src/a.go: %+v", r)
	}
	// Outside the project and any repository: from the path given.
	out := filepath.Join(e.dir, "loose")
	write(filepath.Join(out, "lib", "b.go"), "package lib\n\nfunc Hello() string { return \"b\" }\n")
	e.OK("ingest", `{"path":"`+out+`","store":"personal"}`)
	// Asked by its name: a node's vector holds its absolute path, so its
	// similarity to other words moves with the temp dir's name (b.go's
	// nodes sat at 0.13 against "Hello package main", by 0.1's floor).
	if n := names("personal", "lib/b.go"); !n["file:lib/b.go"] || n["file:loose/lib/b.go"] {
		t.Fatalf("personal store, a directory outside any repository: names %v", n)
	}
}

// An atom's links to code nodes follow its writes, not only ingests:
// changing its paths moves them, an atom created after the ingest is
// linked at once (a re-ingest finds the files unchanged), a deleted atom
// leaves none.
func TestAtomLinksFollowAtomWrites(t *testing.T) {
	e := newEnv(t)
	for name, body := range map[string]string{
		"src/pay/a.go":  "package pay\n\n// PayAlpha charges a card.\nfunc PayAlpha() {}\n",
		"src/ship/b.go": "package ship\n\n// ShipBeta ships a parcel.\nfunc ShipBeta() {}\n",
		"other/c.go":    "package other\n\n// OtherGamma does other things.\nfunc OtherGamma() {}\n",
	} {
		p := filepath.Join(e.repo, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pay := e.Atom("Payments", `["src/pay/**"]`, "")
	e.OK("ingest", `{"path":"."}`)
	atomsOf := func(fn string) string {
		t.Helper()
		r := e.OK("search", `{"query":"`+fn+`","domain":"code","type":"function","store":"project"}`).(*vectorop.SearchResult)
		for _, h := range r.Hits {
			if h.Name == fn {
				var names []string
				for _, a := range h.Atoms {
					names = append(names, a.Name)
				}
				return strings.Join(names, ",")
			}
		}
		t.Fatalf("no hit %s: %s", fn, mustJSON(r))
		return ""
	}
	if a, b := atomsOf("PayAlpha"), atomsOf("ShipBeta"); a != "Payments" || b != "" {
		t.Fatalf("after the ingest: PayAlpha %q, ShipBeta %q", a, b)
	}
	e.OK("manage_graph", `{"operation":"update","entityType":"atom","id":"`+pay.ID+`","version":1,"paths":["src/ship/*.go"]}`)
	if a, b := atomsOf("PayAlpha"), atomsOf("ShipBeta"); a != "" || b != "Payments" {
		t.Fatalf("after the paths update: PayAlpha %q, ShipBeta %q", a, b)
	}
	late := e.Atom("Late", `["**/c.go","src/pay/a.go"]`, "")
	if a, c := atomsOf("PayAlpha"), atomsOf("OtherGamma"); a != "Late" || c != "Late" {
		t.Fatalf("atom created after the ingest: PayAlpha %q, OtherGamma %q", a, c)
	}
	if r := e.OK("ingest", `{"path":"."}`).(*vectorop.IngestResult); r.Unchanged != 3 {
		t.Fatalf("re-ingest %+v", r)
	}
	e.OK("manage_graph", `{"operation":"delete","entityType":"atom","id":"`+late.ID+`","version":1}`)
	var n int
	if err := e.layers.Project.db.Reader().QueryRow(`SELECT count(*) FROM vg_atom_links WHERE atom_id = ?`, late.ID).Scan(&n); err != nil || n != 0 {
		t.Fatalf("links of the deleted atom: %d %v", n, err)
	}
	if a, b := atomsOf("PayAlpha"), atomsOf("ShipBeta"); a != "" || b != "Payments" {
		t.Fatalf("after the delete: PayAlpha %q, ShipBeta %q", a, b)
	}
}
