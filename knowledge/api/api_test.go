package api

import (
	"encoding/json"
	"errors"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func decodeErr(t *testing.T, op, raw string) *Error {
	t.Helper()
	_, err := Decode(op, json.RawMessage(raw))
	e, ok := AsError(err)
	if !ok {
		t.Fatalf("Decode(%s, %s) = %v, want an *Error", op, raw, err)
	}
	return e
}

func TestDecode(t *testing.T) {
	req, err := Decode("query_graph", json.RawMessage(`{"operation":"search","entityType":"ATOM"}`))
	if err == nil {
		t.Fatalf("entityType is case-sensitive: %+v", req)
	}
	e := decodeErr(t, "manage_graph", `{"operation":"create","entityType":"atom","name":"n","paths":["a"],"colour":"red"}`)
	if e.Code != CodeValidation || e.Details["field"] != "colour" || !strings.Contains(e.Message, "unknown parameter colour") {
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
	if e = decodeErr(t, "status", `[1]`); e.Code != CodeValidation {
		t.Fatalf("non-object: %+v", e)
	}
	r, err := Decode("manage_graph", json.RawMessage(`{"operation":"update","entityType":"atom","id":"00000000-0000-4000-8000-00000000000A",
		"version":"3","moleculeId":null,"relatedAtoms":"[{\"atomId\":\"00000000-0000-4000-8000-000000000001\",\"reason\":\" r \"}]"}`))
	if err != nil {
		t.Fatal(err)
	}
	m := r.(*ManageGraph)
	if *m.Version != 3 || !m.Unassign() || m.ID != "00000000-0000-4000-8000-00000000000a" || m.RelatedAtoms[0].Reason != "r" {
		t.Fatalf("decoded %+v", m)
	}
	r, err = Decode("query_graph", json.RawMessage(`{"operation":"context","paths":" a.ts, b/c.ts ,,","includeChangelog":"false"}`))
	if err != nil {
		t.Fatal(err)
	}
	q := r.(*QueryGraph)
	if !slices.Equal(q.Paths, []string{"a.ts", "b/c.ts"}) || BoolOr(q.IncludeChangelog, true) {
		t.Fatalf("context decode %+v", q)
	}
	r, _ = Decode("query_graph", json.RawMessage(`{"operation":"context","paths":["x", " y "]}`))
	if !slices.Equal(r.(*QueryGraph).Paths, []string{"x", "y"}) {
		t.Fatalf("array paths %v", r.(*QueryGraph).Paths)
	}
	// json.Unmarshal of a request goes through the same strict decoder.
	var mg ManageGraph
	err = json.Unmarshal([]byte(`{"operation":"create","bogus":1}`), &mg)
	if ae, ok := AsError(err); !ok || ae.Details["field"] != "bogus" {
		t.Fatalf("json.Unmarshal strictness: %v", err)
	}
	if err := json.Unmarshal([]byte(`{"operation":"create","entityType":"atom"}`), &mg); err != nil {
		t.Fatalf("json.Unmarshal: %v", err)
	}
	for _, op := range Ops {
		if _, err := Decode(op, nil); err != nil {
			if ae, ok := AsError(err); !ok || ae.Code != CodeValidation {
				t.Fatalf("%s with no parameters: %v", op, err)
			}
		}
	}
}

func TestErrors(t *testing.T) {
	for _, c := range []struct {
		e    *Error
		exit int
		is   error
	}{
		{Invalid("f", "x"), 65, ErrValidation},
		{Invariant("f", "x"), 65, ErrInvariant},
		{NotFound("id", "atom", "a"), 66, ErrNotFound},
		{Conflict("atom", "a", 1, 2), 75, ErrConflict},
	} {
		var err error = c.e
		if c.e.Exit() != c.exit || !errors.Is(err, c.is) || errors.Is(err, ErrValidation) != (c.is == ErrValidation) {
			t.Fatalf("%+v: exit %d", c.e, c.e.Exit())
		}
	}
	b, _ := json.Marshal(Conflict("atom", "a", 1, 2))
	if string(b) != `{"code":"CONFLICT","message":"atom a is at version 2, not 1: read it again (query_graph operation=get) and retry with version=2","details":{"currentVersion":2,"field":"version"}}` {
		t.Fatalf("conflict JSON %s", b)
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
	for _, op := range Ops {
		typ := reflect.TypeOf(New(op)).Elem()
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

func TestText(t *testing.T) {
	mol := "m1"
	big := strings.Repeat("knowledge ", 2000)
	a := &Atom{ID: "a1", Name: "Atom", MoleculeID: &mol, Paths: []string{"src/**"}, Knowledge: big, Version: 2, Store: "project",
		Changelog: []ChangelogEntry{{TaskID: "t", Summary: "s"}}}
	out := Text(a)
	if !strings.HasPrefix(out, `atom=a1 name="Atom" version=2`) || !strings.Contains(out, "store=project") ||
		!strings.Contains(out, "--json for the whole text") || len(out) > 3000 || !strings.Contains(out, "manage_changelog operation=search") {
		t.Fatalf("atom text (%d bytes):\n%s", len(out), out)
	}
	p := &Page[Atom]{Total: 150, Limit: 100, Offset: 0}
	for range 100 {
		p.Items = append(p.Items, *a)
	}
	out = Text(p)
	if !strings.HasPrefix(out, "total=150 limit=100 offset=0 shown=20") || !strings.Contains(out, "80 more on this page") ||
		!strings.Contains(out, "next page: offset=100") || len(out) > 8000 {
		t.Fatalf("page text (%d bytes):\n%s", len(out), out)
	}
	c := &Context{Molecules: []ContextMolecule{{ID: "m", Name: "M", Atoms: []ContextAtom{{ID: "a", Name: "A", MatchedPaths: []string{"x"}}}}},
		UnmatchedPaths: []string{"y"}}
	if out = Text(c); !strings.HasPrefix(out, "molecules=1 atoms=1 orphan_atoms=0 unmatched_paths=1") || !strings.Contains(out, "unmatched: y") {
		t.Fatalf("context text:\n%s", out)
	}
	v := &VerifyResult{OK: false, Stores: []VerifyReport{{Store: "project", Breaks: []Break{{EntityID: "a", Version: 2, Reason: "r"}}}}}
	if out = Text(v); !strings.HasPrefix(out, "ok=false") || !strings.Contains(out, "a v2: r") {
		t.Fatalf("verify text:\n%s", out)
	}
}

// StoreOf reads the store parameter of every operation that has one.
func TestStoreOf(t *testing.T) {
	n := 0
	for _, op := range Ops {
		r := New(op)
		f := reflect.ValueOf(r).Elem().FieldByName("Store")
		if !f.IsValid() {
			continue
		}
		f.SetString(StorePersonal)
		if got := StoreOf(r); got != StorePersonal {
			t.Errorf("%s: StoreOf = %q, want personal", op, got)
		}
		n++
	}
	if n < 10 {
		t.Errorf("only %d operations have a store parameter", n)
	}
}
