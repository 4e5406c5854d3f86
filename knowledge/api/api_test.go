package api

import (
	"encoding/json"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pi-actors/pi-actors/knowledge/api/graphop"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/api/vectorop"
)

func decodeErr(t *testing.T, name, raw string) *op.Error {
	t.Helper()
	_, err := Decode(name, json.RawMessage(raw))
	e, ok := op.AsError(err)
	if !ok {
		t.Fatalf("Decode(%s, %s) = %v, want an *op.Error", name, raw, err)
	}
	return e
}

func TestDecode(t *testing.T) {
	req, err := Decode("query_graph", json.RawMessage(`{"operation":"search","entityType":"ATOM"}`))
	if err == nil {
		t.Fatalf("entityType is case-sensitive: %+v", req)
	}
	e := decodeErr(t, "manage_graph", `{"operation":"create","entityType":"atom","name":"n","paths":["a"],"colour":"red"}`)
	if e.Code != op.CodeValidation || e.Details["field"] != "colour" || !strings.Contains(e.Message, "unknown parameter colour") {
		t.Fatalf("unknown field: %+v", e)
	}
	e = decodeErr(t, "manage_graph", `{"operation":"update","entityType":"atom","id":"00000000-0000-4000-8000-000000000000","version":"two","name":"x"}`)
	if e.Details["field"] != "version" || !strings.Contains(e.Message, "integer") {
		t.Fatalf("bad int: %+v", e)
	}
	e = decodeErr(t, "nope", `{}`)
	if e.Details["field"] != "operation" {
		t.Fatalf("unknown op: %+v", e)
	}
	if e = decodeErr(t, "status", `[1]`); e.Code != op.CodeValidation {
		t.Fatalf("non-object: %+v", e)
	}
	r, err := Decode("manage_graph", json.RawMessage(`{"operation":"update","entityType":"atom","id":"00000000-0000-4000-8000-00000000000A",
		"version":"3","moleculeId":null,"relatedAtoms":"[{\"atomId\":\"00000000-0000-4000-8000-000000000001\",\"reason\":\" r \"}]"}`))
	if err != nil {
		t.Fatal(err)
	}
	m := r.(*graphop.ManageGraph)
	if *m.Version != 3 || !m.Unassign() || m.ID != "00000000-0000-4000-8000-00000000000a" || m.RelatedAtoms[0].Reason != "r" {
		t.Fatalf("decoded %+v", m)
	}
	r, err = Decode("query_graph", json.RawMessage(`{"operation":"context","paths":" a.ts, b/c.ts ,,","includeChangelog":"false"}`))
	if err != nil {
		t.Fatal(err)
	}
	q := r.(*graphop.QueryGraph)
	if !slices.Equal(q.Paths, []string{"a.ts", "b/c.ts"}) || op.BoolOr(q.IncludeChangelog, true) {
		t.Fatalf("context decode %+v", q)
	}
	r, _ = Decode("query_graph", json.RawMessage(`{"operation":"context","paths":["x", " y "]}`))
	if !slices.Equal(r.(*graphop.QueryGraph).Paths, []string{"x", "y"}) {
		t.Fatalf("array paths %v", r.(*graphop.QueryGraph).Paths)
	}
	// json.Unmarshal of a request goes through the same strict decoder.
	var mg graphop.ManageGraph
	err = json.Unmarshal([]byte(`{"operation":"create","bogus":1}`), &mg)
	if ae, ok := op.AsError(err); !ok || ae.Details["field"] != "bogus" {
		t.Fatalf("json.Unmarshal strictness: %v", err)
	}
	if err := json.Unmarshal([]byte(`{"operation":"create","entityType":"atom"}`), &mg); err != nil {
		t.Fatalf("json.Unmarshal: %v", err)
	}
	for _, name := range Ops {
		if _, err := Decode(name, nil); err != nil {
			if ae, ok := op.AsError(err); !ok || ae.Code != op.CodeValidation {
				t.Fatalf("%s with no parameters: %v", name, err)
			}
		}
	}
}

func TestValidateRules(t *testing.T) {
	id := "00000000-0000-4000-8000-000000000000"
	cases := []struct{ op, raw, field string }{
		{"manage_changelog", `{"operation":"search","parentType":"atom","parentId":"` + id + `","summary":"s"}`, "summary"},
		{"manage_changelog", `{"operation":"append","parentType":"atom"}`, "parentId"},
		{"project_create", `{}`, "name"},
		{"project_create", `{"name":"` + strings.Repeat("n", 256) + `"}`, "name"},
		{"history", `{}`, "id"},
		{"history", `{"id":"` + id + `","version":0}`, "version"},
		{"task_context", `{"file":"a","text":"b"}`, "file"},
		{"verify", `{"store":"team"}`, "store"},
		{"query_graph", `{"operation":"get","entityType":"atom","id":"` + id + `","query":"x"}`, "query"},
		{"query_graph", `{"operation":"context","paths":"a","projectId":"nope"}`, "projectId"},
		{"query_graph", `{"operation":"search","entityType":"atom","query":"` + strings.Repeat("q", 1025) + `"}`, "query"},
		{"manage_graph", `{"operation":"create","entityType":"atom","name":"a","paths":["a\\"]}`, "paths"},
		{"manage_graph", `{"operation":"create","entityType":"atom","name":"a","paths":["C:/x"]}`, "paths"},
		{"manage_graph", `{"operation":"create","entityType":"atom","name":"a","paths":["a/..\\b"]}`, "paths"},
		{"manage_graph", `{"operation":"delete","entityType":"atom","id":"` + id + `","version":1,"knowledge":"k"}`, "knowledge"},
	}
	for _, c := range cases {
		e := decodeErr(t, c.op, c.raw)
		if e.Details["field"] != c.field {
			t.Errorf("%s %s: error on %v (%s), want %s", c.op, c.raw, e.Details["field"], e.Message, c.field)
		}
	}
	ok := []struct{ op, raw string }{
		{"manage_graph", `{"operation":"create","entityType":"atom","name":" a ","paths":["src/**/x.{ts,tsx}","a/[bc]/d?.go","**"]}`},
		{"manage_graph", `{"operation":"delete","entityType":"molecule","id":"` + id + `","version":3,"cascade":true,"lastTaskId":"t"}`},
		{"manage_changelog", `{"operation":"search","parentType":"molecule","parentId":"` + id + `","limit":100}`},
		{"status", `{}`}, {"init", `{"name":"x"}`}, {"project_list", `{"limit":"5"}`},
	}
	for _, c := range ok {
		if _, err := Decode(c.op, json.RawMessage(c.raw)); err != nil {
			t.Errorf("%s %s: %v", c.op, c.raw, err)
		}
	}
}

// Every request field has a json name and a jsonschema description that
// jsonschema-go accepts (it reserves tags that start with WORD=).
func TestSchemaTags(t *testing.T) {
	reserved := regexp.MustCompile(`^[A-Za-z_]+=`)
	for _, name := range Ops {
		typ := reflect.TypeOf(New(name)).Elem()
		for i := range typ.NumField() {
			f := typ.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			desc := f.Tag.Get("jsonschema")
			if name == "" || desc == "" || reserved.MatchString(desc) {
				t.Errorf("%s.%s: json %q jsonschema %q", typ.Name(), f.Name, name, desc)
			}
		}
	}
}

// StoreOf reads the store parameter of every operation that has one.
func TestStoreOf(t *testing.T) {
	n := 0
	for _, name := range Ops {
		r := New(name)
		f := reflect.ValueOf(r).Elem().FieldByName("Store")
		if !f.IsValid() {
			continue
		}
		f.SetString(op.StorePersonal)
		if got := op.StoreOf(r); got != op.StorePersonal {
			t.Errorf("%s: StoreOf = %q, want personal", name, got)
		}
		n++
	}
	if n < 10 {
		t.Errorf("only %d operations have a store parameter", n)
	}
}

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
	if s := r.(*vectorop.Search); s.Query != "retry" || s.Domain != "code" || *s.Limit != 5 {
		t.Fatalf("search %+v", s)
	}
	r, err = Decode("search_all", json.RawMessage(`{"query":"x","domains":"history, academic"}`))
	if err != nil || !slices.Equal(r.(*vectorop.SearchAll).Domains, []string{"history", "academic"}) {
		t.Fatalf("search_all %+v %v", r, err)
	}
	r, err = Decode("node_add", json.RawMessage(`{"domain":"academic","type":"rfc","name":" RFC 7519 ","links":"[{\"to\":\"`+strings.ToUpper(id)+`\",\"type\":\"documents\"}]"}`))
	if err != nil {
		t.Fatal(err)
	}
	if n := r.(*vectorop.NodeAdd); n.Name != "RFC 7519" || n.Source != vectorop.SourceModel || n.Links[0].To != id {
		t.Fatalf("node_add %+v", n)
	}
	if vectorop.DefaultTrust("academic", "rfc", vectorop.SourceAcademic, false) != vectorop.TrustStandard || vectorop.DefaultTrust("history", "entry", vectorop.SourceHistory, true) != vectorop.TrustRecent ||
		vectorop.DefaultTrust("code", "function", vectorop.SourceModel, false) != vectorop.TrustModel || vectorop.DefaultTrust("academic", "blog_post", vectorop.SourceAcademic, true) != vectorop.TrustBlog {
		t.Fatal("DefaultTrust")
	}
}

func TestStatusText(t *testing.T) {
	st := &StatusResult{Stores: []StoreStatus{{Store: "project", Vectors: &vectorop.VectorStatus{Embedder: "e", Dim: 8, Nodes: 3,
		Embedding: vectorop.EmbedProgress{Running: true, Done: 64, Total: 130}, Domains: []vectorop.IndexStatus{{Domain: "code", Index: "hnsw"}}}}}}
	if out := Text(st); !strings.Contains(out, "embedding=64/130") || !strings.Contains(out, "code nodes=0 vectors=0 index=hnsw") {
		t.Fatalf("status text:\n%s", out)
	}
}
