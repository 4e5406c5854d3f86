package graph

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pi-actors/pi-actors/knowledge/api/graphop"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/store"
)

func TestCreateValidation(t *testing.T) {
	e := newEnv(t)
	m := e.Molecule("M", "")
	long := strings.Repeat("x", 256)
	cases := []struct {
		code  op.Code
		field string
		raw   string
	}{
		{op.CodeValidation, "operation", `{"operation":"make","entityType":"atom"}`},
		{op.CodeValidation, "entityType", `{"operation":"create","entityType":"thing"}`},
		{op.CodeValidation, "entityType", `{"operation":"create"}`},
		{op.CodeValidation, "name", `{"operation":"create","entityType":"molecule"}`},
		{op.CodeValidation, "name", `{"operation":"create","entityType":"molecule","name":"   "}`},
		{op.CodeValidation, "name", `{"operation":"create","entityType":"molecule","name":"` + long + `"}`},
		{op.CodeValidation, "paths", `{"operation":"create","entityType":"atom","name":"a"}`},
		{op.CodeInvariant, "paths", `{"operation":"create","entityType":"atom","name":"a","paths":[]}`},
		{op.CodeInvariant, "paths", `{"operation":"create","entityType":"atom","name":"a","paths":"[]"}`},
		{op.CodeValidation, "paths", `{"operation":"create","entityType":"atom","name":"a","paths":"src/**"}`},
		{op.CodeValidation, "paths", `{"operation":"create","entityType":"atom","name":"a","paths":["/etc/**"]}`},
		{op.CodeValidation, "paths", `{"operation":"create","entityType":"atom","name":"a","paths":["src/../x"]}`},
		{op.CodeValidation, "paths", `{"operation":"create","entityType":"atom","name":"a","paths":["../x"]}`},
		{op.CodeValidation, "paths", `{"operation":"create","entityType":"atom","name":"a","paths":["src/[a"]}`},
		{op.CodeValidation, "paths", `{"operation":"create","entityType":"atom","name":"a","paths":["src/{a,b"]}`},
		{op.CodeValidation, "paths", `{"operation":"create","entityType":"atom","name":"a","paths":[""]}`},
		{op.CodeValidation, "paths", `{"operation":"create","entityType":"atom","name":"a","paths":["` + strings.Repeat("a", 513) + `"]}`},
		{op.CodeValidation, "paths", `{"operation":"create","entityType":"atom","name":"a","paths":` + mustJSON(strings.Split(strings.Repeat("p,", 21)[:41], ",")) + `}`},
		{op.CodeValidation, "knowledge", `{"operation":"create","entityType":"molecule","name":"a","knowledge":"` + strings.Repeat("k", 32<<10+1) + `"}`},
		{op.CodeValidation, "relatedAtoms", `{"operation":"create","entityType":"atom","name":"a","paths":["x"],"relatedAtoms":"not json"}`},
		{op.CodeValidation, "relatedAtoms", `{"operation":"create","entityType":"atom","name":"a","paths":["x"],"relatedAtoms":{"atomId":"x"}}`},
		{op.CodeValidation, "relatedAtoms", `{"operation":"create","entityType":"atom","name":"a","paths":["x"],"relatedAtoms":[{"atomId":"nope","reason":"r"}]}`},
		{op.CodeValidation, "relatedAtoms", `{"operation":"create","entityType":"atom","name":"a","paths":["x"],"relatedAtoms":[{"atomId":"` + m.ID + `","why":"r"}]}`},
		{op.CodeValidation, "relatedAtoms", `{"operation":"create","entityType":"atom","name":"a","paths":["x"],"relatedAtoms":` + related("atomId", m.ID, 51) + `}`},
		{op.CodeValidation, "relatedMolecules", `{"operation":"create","entityType":"molecule","name":"a","relatedMolecules":` + related("moleculeId", m.ID, 51) + `}`},
		{op.CodeValidation, "relatedMolecules", `{"operation":"create","entityType":"atom","name":"a","paths":["x"],"relatedMolecules":[]}`},
		{op.CodeValidation, "paths", `{"operation":"create","entityType":"molecule","name":"a","paths":["x"]}`},
		{op.CodeValidation, "moleculeId", `{"operation":"create","entityType":"molecule","name":"a","moleculeId":"` + m.ID + `"}`},
		{op.CodeValidation, "version", `{"operation":"create","entityType":"molecule","name":"a","version":1}`},
		{op.CodeValidation, "knowledgeMode", `{"operation":"create","entityType":"molecule","name":"a","knowledgeMode":"append"}`},
		{op.CodeValidation, "projectId", `{"operation":"create","entityType":"molecule","name":"a","projectId":"p1"}`},
		{op.CodeNotFound, "projectId", `{"operation":"create","entityType":"molecule","name":"a","projectId":"00000000-0000-4000-8000-000000000000"}`},
		{op.CodeNotFound, "moleculeId", `{"operation":"create","entityType":"atom","name":"a","paths":["x"],"moleculeId":"00000000-0000-4000-8000-000000000000"}`},
		{op.CodeNotFound, "relatedAtoms", `{"operation":"create","entityType":"atom","name":"a","paths":["x"],"relatedAtoms":[{"atomId":"00000000-0000-4000-8000-000000000000","reason":"r"}]}`},
		{op.CodeNotFound, "relatedAtoms", `{"operation":"create","entityType":"atom","name":"a","paths":["x"],"relatedAtoms":[{"atomId":"` + m.ID + `","reason":"a molecule is no atom"}]}`},
		{op.CodeNotFound, "relatedMolecules", `{"operation":"create","entityType":"molecule","name":"a","relatedMolecules":[{"moleculeId":"` + m.ID + `","reason":"r"},{"moleculeId":"00000000-0000-4000-8000-000000000000","reason":"r"}]}`},
		{op.CodeValidation, "createdByTaskId", `{"operation":"create","entityType":"molecule","name":"a","createdByTaskId":"` + long + `"}`},
		{op.CodeValidation, "bogus", `{"operation":"create","entityType":"molecule","name":"a","bogus":1}`},
		{op.CodeValidation, "cascade", `{"operation":"create","entityType":"molecule","name":"a","cascade":true}`},
	}
	for i, c := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			e.t = t
			e.Fail(c.code, c.field, "manage_graph", c.raw)
		})
	}
}

func related(key, id string, n int) string {
	var parts []string
	for range n {
		parts = append(parts, fmt.Sprintf(`{%q:%q,"reason":"r"}`, key, id))
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func TestTaskIDs(t *testing.T) {
	e := newEnv(t)
	runs := map[string]bool{"live": true}
	e.g = openGraph(t, e.path, store.Options{Layer: op.StoreProject, RunExists: func(id string) (bool, error) { return runs[id], nil }})
	e.caller.RunID = ""
	e.Fail(op.CodeValidation, "createdByTaskId", "manage_graph", `{"operation":"create","entityType":"molecule","name":"a"}`)
	e.Fail(op.CodeNotFound, "createdByTaskId", "manage_graph", `{"operation":"create","entityType":"molecule","name":"a","createdByTaskId":"run:gone"}`)
	e.Fail(op.CodeValidation, "createdByTaskId", "manage_graph", `{"operation":"create","entityType":"molecule","name":"a","createdByTaskId":"run:"}`)
	m := e.Molecule("a", `,"createdByTaskId":"run:live"`)
	if m.CreatedByTaskID != "run:live" || m.LastTaskID != "run:live" {
		t.Fatalf("%+v", m)
	}
	m = e.Molecule("b", `,"createdByTaskId":"TASK-42"`)
	if m.CreatedByTaskID != "TASK-42" {
		t.Fatalf("%+v", m)
	}
	e.caller.RunID = "live"
	m = e.Molecule("c", "")
	if m.CreatedByTaskID != "run:live" {
		t.Fatalf("%+v", m)
	}
	e.caller.RunID = "gone"
	e.Fail(op.CodeNotFound, "createdByTaskId", "manage_graph", `{"operation":"create","entityType":"molecule","name":"a"}`)
	e.Fail(op.CodeNotFound, "lastTaskId", "manage_graph", fmt.Sprintf(`{"operation":"update","entityType":"molecule","id":%q,"version":1,"name":"x"}`, m.ID))
	e.Fail(op.CodeNotFound, "taskId", "manage_changelog", fmt.Sprintf(`{"operation":"append","parentType":"molecule","parentId":%q,"summary":"s"}`, m.ID))
}

func TestUpdate(t *testing.T) {
	e := newEnv(t)
	m1, m2 := e.Molecule("M1", ""), e.Molecule("M2", "")
	a := e.Atom("A", `"[\"src/a/**\"]"`, `,"knowledge":"  first  "`)
	if a.Knowledge != "first" || a.MoleculeID != nil || len(a.Paths) != 1 {
		t.Fatalf("create: %+v", a)
	}
	upd := func(version int, rest string) string {
		return fmt.Sprintf(`{"operation":"update","entityType":"atom","id":%q,"version":%d%s}`, a.ID, version, rest)
	}
	e.Fail(op.CodeValidation, "version", "manage_graph", fmt.Sprintf(`{"operation":"update","entityType":"atom","id":%q,"name":"x"}`, a.ID))
	e.Fail(op.CodeValidation, "version", "manage_graph", upd(0, `,"name":"x"`))
	e.Fail(op.CodeValidation, "", "manage_graph", upd(1, ``))
	e.Fail(op.CodeValidation, "projectId", "manage_graph", upd(1, `,"projectId":"`+a.ProjectID+`","name":"x"`))
	e.Fail(op.CodeValidation, "createdByTaskId", "manage_graph", upd(1, `,"createdByTaskId":"t","name":"x"`))
	e.Fail(op.CodeValidation, "knowledge", "manage_graph", upd(1, `,"knowledgeMode":"append"`))
	e.Fail(op.CodeValidation, "knowledgeMode", "manage_graph", upd(1, `,"knowledgeMode":"prepend","knowledge":"x"`))
	e.Fail(op.CodeInvariant, "paths", "manage_graph", upd(1, `,"paths":[]`))
	e.Fail(op.CodeNotFound, "id", "manage_graph", `{"operation":"update","entityType":"atom","id":"00000000-0000-4000-8000-000000000000","version":1,"name":"x"}`)
	e.Fail(op.CodeNotFound, "moleculeId", "manage_graph", upd(1, `,"moleculeId":"00000000-0000-4000-8000-000000000000"`))
	ce := e.Fail(op.CodeConflict, "version", "manage_graph", upd(7, `,"name":"x"`))
	if ce.Details["currentVersion"] != 1 || ce.Exit() != 75 {
		t.Fatalf("conflict details %+v", ce)
	}

	a = e.OK("manage_graph", upd(1, `,"name":"A2","moleculeId":"`+m1.ID+`","lastTaskId":"T-1","relatedAtoms":[]`)).(*graphop.Atom)
	if a.Version != 2 || a.Name != "A2" || *a.MoleculeID != m1.ID || a.LastTaskID != "T-1" || a.CreatedByTaskID != "run:r1" {
		t.Fatalf("update: %+v", a)
	}
	a = e.OK("manage_graph", upd(2, `,"knowledge":"second","knowledgeMode":"append","lastTaskId":"T-2"`)).(*graphop.Atom)
	sep := "\n\n---[" + a.UpdatedAt + " task:T-2]---\n"
	if a.Knowledge != "first"+sep+"second" {
		t.Fatalf("append: %q", a.Knowledge)
	}
	a = e.OK("manage_graph", upd(3, `,"knowledge":"third"`)).(*graphop.Atom)
	if a.Knowledge != "third" || a.Version != 4 {
		t.Fatalf("overwrite: %+v", a)
	}
	big := strings.Repeat("k", 20<<10)
	a = e.OK("manage_graph", upd(4, `,"knowledge":"`+big+`"`)).(*graphop.Atom)
	e.Fail(op.CodeValidation, "knowledge", "manage_graph", upd(5, `,"knowledgeMode":"append","knowledge":"`+big+`"`))
	a = e.OK("manage_graph", upd(5, `,"moleculeId":null`)).(*graphop.Atom)
	if a.MoleculeID != nil {
		t.Fatalf("unassign: %+v", a)
	}
	a = e.OK("manage_graph", upd(6, `,"moleculeId":"`+m2.ID+`"`)).(*graphop.Atom)
	a = e.OK("manage_graph", upd(7, `,"moleculeId":""`)).(*graphop.Atom)
	if a.MoleculeID != nil || a.Version != 8 {
		t.Fatalf("unassign by empty: %+v", a)
	}

	// A root that is a file is refused; a missing one (made later) is not.
	file := filepath.Join(t.TempDir(), "f.txt")
	os.WriteFile(file, nil, 0o600)
	e.Fail(op.CodeValidation, "root", "project_create", `{"name":"f","root":"`+file+`"}`)
	// Cross-project membership.
	p2 := e.OK("project_create", `{"name":"other","root":"/elsewhere"}`).(*graphop.Project)
	mo := e.Molecule("Other", `,"projectId":"`+p2.ID+`"`)
	e.Fail(op.CodeInvariant, "moleculeId", "manage_graph", upd(8, `,"moleculeId":"`+mo.ID+`"`))
	e.Fail(op.CodeInvariant, "moleculeId", "manage_graph", `{"operation":"create","entityType":"atom","name":"x","paths":["x"],"moleculeId":"`+mo.ID+`"}`)
	ao := e.Atom("Other", `"[\"o/**\"]"`, `,"projectId":"`+p2.ID+`"`)
	e.Fail(op.CodeInvariant, "relatedAtoms", "manage_graph", upd(8, `,"relatedAtoms":[{"atomId":"`+ao.ID+`","reason":"r"}]`))
	e.Fail(op.CodeInvariant, "relatedMolecules", "manage_graph", `{"operation":"create","entityType":"molecule","name":"x","relatedMolecules":[{"moleculeId":"`+mo.ID+`","reason":"r"}]}`)
	e.Fail(op.CodeValidation, "relatedAtoms", "manage_graph", upd(8, `,"relatedAtoms":[{"atomId":"`+a.ID+`","reason":"itself"}]`))
	// A related atom of the same project is taken; its delete drops it
	// from the list (a new version: TestDeleteDropsRelated).
	b := e.Atom("B", `"[\"src/b/**\"]"`, ``)
	a = e.OK("manage_graph", upd(8, `,"relatedAtoms":[{"atomId":"`+b.ID+`","reason":"calls"}]`)).(*graphop.Atom)
	e.OK("manage_graph", fmt.Sprintf(`{"operation":"delete","entityType":"atom","id":%q,"version":1}`, b.ID))
	a = e.OK("manage_graph", upd(10, `,"name":"A3"`)).(*graphop.Atom)
	if a.Version != 11 || len(a.RelatedAtoms) != 0 {
		t.Fatalf("update after a related atom's delete: %+v", a)
	}

	// Molecule update: only knowledge, name, relatedMolecules.
	mu := fmt.Sprintf(`{"operation":"update","entityType":"molecule","id":%q,"version":1`, m1.ID)
	e.Fail(op.CodeValidation, "paths", "manage_graph", mu+`,"paths":["x"]}`)
	e.Fail(op.CodeValidation, "relatedAtoms", "manage_graph", mu+`,"relatedAtoms":[]}`)
	m := e.OK("manage_graph", mu+`,"relatedMolecules":[{"moleculeId":"`+m2.ID+`","reason":"uses"}],"knowledge":"k"}`).(*graphop.Molecule)
	if m.Version != 2 || len(m.RelatedMolecules) != 1 || m.RelatedMolecules[0].Reason != "uses" || m.Knowledge != "k" {
		t.Fatalf("molecule update: %+v", m)
	}
	m = e.OK("manage_graph", fmt.Sprintf(`{"operation":"update","entityType":"molecule","id":%q,"version":2,"knowledge":"more","knowledgeMode":"append","lastTaskId":"T"}`, m1.ID)).(*graphop.Molecule)
	if !strings.HasPrefix(m.Knowledge, "k\n\n---[") || !strings.HasSuffix(m.Knowledge, " task:T]---\nmore") {
		t.Fatalf("molecule append: %q", m.Knowledge)
	}
}

func TestDelete(t *testing.T) {
	e := newEnv(t)
	keep, gone := e.Molecule("Keep", ""), e.Molecule("Gone", "")
	a1 := e.Atom("a1", `["a1/**"]`, `,"moleculeId":"`+keep.ID+`"`)
	a2 := e.Atom("a2", `["a2/**"]`, `,"moleculeId":"`+gone.ID+`"`)
	a3 := e.Atom("a3", `["a3/**"]`, `,"moleculeId":"`+gone.ID+`"`)
	for _, id := range []string{keep.ID, gone.ID} {
		e.OK("manage_changelog", `{"operation":"append","parentType":"molecule","parentId":"`+id+`","summary":"m"}`)
	}
	for _, id := range []string{a1.ID, a2.ID} {
		e.OK("manage_changelog", `{"operation":"append","parentType":"atom","parentId":"`+id+`","summary":"a"}`)
	}
	del := func(kind, id string, v int, rest string) string {
		return fmt.Sprintf(`{"operation":"delete","entityType":%q,"id":%q,"version":%d%s}`, kind, id, v, rest)
	}
	e.Fail(op.CodeValidation, "version", "manage_graph", fmt.Sprintf(`{"operation":"delete","entityType":"atom","id":%q}`, a1.ID))
	e.Fail(op.CodeConflict, "version", "manage_graph", del("atom", a1.ID, 2, ""))
	e.Fail(op.CodeValidation, "cascade", "manage_graph", del("atom", a1.ID, 1, `,"cascade":true`))
	e.Fail(op.CodeValidation, "name", "manage_graph", del("atom", a1.ID, 1, `,"name":"x"`))

	// Without cascade: the molecule's atoms become orphans with a new version.
	d := e.OK("manage_graph", del("molecule", gone.ID, 1, `,"lastTaskId":"T-del"`)).(*graphop.Deleted)
	if len(d.OrphanedAtoms) != 2 || d.DeletedChangelog != 1 || d.Version != 2 {
		t.Fatalf("delete molecule: %+v", d)
	}
	got := e.OK("query_graph", `{"operation":"get","entityType":"atom","id":"`+a2.ID+`"}`).(*graphop.Atom)
	if got.MoleculeID != nil || got.LastTaskID != "T-del" || got.Version != 2 || got.UpdatedAt < a2.UpdatedAt || len(got.Changelog) != 1 {
		t.Fatalf("orphaned atom: %+v", got)
	}
	e.Fail(op.CodeNotFound, "id", "query_graph", `{"operation":"get","entityType":"molecule","id":"`+gone.ID+`"}`)
	e.Fail(op.CodeNotFound, "parentId", "manage_changelog", `{"operation":"search","parentType":"molecule","parentId":"`+gone.ID+`"}`)
	_ = a3

	// With cascade: atoms and their changelog go too.
	d = e.OK("manage_graph", del("molecule", keep.ID, 1, `,"cascade":true`)).(*graphop.Deleted)
	if len(d.DeletedAtoms) != 1 || d.DeletedAtoms[0] != a1.ID || d.DeletedChangelog != 2 {
		t.Fatalf("cascade: %+v", d)
	}
	e.Fail(op.CodeNotFound, "id", "query_graph", `{"operation":"get","entityType":"atom","id":"`+a1.ID+`"}`)

	// Delete atom takes its changelog.
	d = e.OK("manage_graph", del("atom", a2.ID, 2, "")).(*graphop.Deleted)
	if d.DeletedChangelog != 1 {
		t.Fatalf("delete atom: %+v", d)
	}
	if c := e.counts(); c.Atoms != 1 || c.Molecules != 0 || c.Changelog != 0 {
		t.Fatalf("counts after deletes: %+v", c)
	}
	if v := e.OK("verify", `{}`).(*graphop.VerifyResult); !v.OK {
		t.Fatalf("verify after deletes: %s", mustJSON(v))
	}
}

// A deleted atom or molecule leaves no related list naming it: each
// entity that named it drops the entry (a new version), the delete says
// which, and the list read back can be sent back as it is.
func TestDeleteDropsRelated(t *testing.T) {
	e := newEnv(t)
	m1, m2 := e.Molecule("M1", ""), e.Molecule("M2", "")
	b := e.Atom("b", `["b/**"]`, "")
	c := e.Atom("c", `["c/**"]`, `,"moleculeId":"`+m2.ID+`"`)
	a := e.Atom("a", `["a/**"]`, `,"relatedAtoms":[{"atomId":"`+b.ID+`","reason":"calls"},{"atomId":"`+c.ID+`","reason":"reads"}]`)
	e.OK("manage_graph", `{"operation":"update","entityType":"molecule","id":"`+m1.ID+`","version":1,"relatedMolecules":[{"moleculeId":"`+m2.ID+`","reason":"uses"}]}`)

	d := e.OK("manage_graph", `{"operation":"delete","entityType":"atom","id":"`+b.ID+`","version":1,"lastTaskId":"T-del"}`).(*graphop.Deleted)
	if len(d.Unrelated) != 1 || d.Unrelated[0] != a.ID {
		t.Fatalf("delete b: %+v, want a unrelated", d)
	}
	got := e.OK("query_graph", `{"operation":"get","entityType":"atom","id":"`+a.ID+`"}`).(*graphop.Atom)
	if len(got.RelatedAtoms) != 1 || got.RelatedAtoms[0].AtomID != c.ID || got.Version != 2 || got.LastTaskID != "T-del" {
		t.Fatalf("a after b's delete: %+v", got)
	}
	// The list as read goes back unchanged.
	back, _ := json.Marshal(got.RelatedAtoms)
	e.OK("manage_graph", `{"operation":"update","entityType":"atom","id":"`+a.ID+`","version":2,"relatedAtoms":`+string(back)+`}`)

	// A cascade: its atoms leave the lists too; the molecule leaves M1's.
	d = e.OK("manage_graph", `{"operation":"delete","entityType":"molecule","id":"`+m2.ID+`","version":1,"cascade":true}`).(*graphop.Deleted)
	if !slices.Contains(d.Unrelated, m1.ID) || !slices.Contains(d.Unrelated, a.ID) || len(d.Unrelated) != 2 {
		t.Fatalf("cascade delete of M2: %+v, want M1 and a unrelated", d)
	}
	got = e.OK("query_graph", `{"operation":"get","entityType":"atom","id":"`+a.ID+`"}`).(*graphop.Atom)
	mol := e.OK("query_graph", `{"operation":"get","entityType":"molecule","id":"`+m1.ID+`"}`).(*graphop.Molecule)
	if len(got.RelatedAtoms) != 0 || len(mol.RelatedMolecules) != 0 || mol.Version != 3 {
		t.Fatalf("after M2's cascade: a %+v, M1 %+v", got.RelatedAtoms, mol)
	}
	if v := e.OK("verify", `{}`).(*graphop.VerifyResult); !v.OK {
		t.Fatalf("verify: %s", mustJSON(v))
	}
}

func TestChangelogAndGet(t *testing.T) {
	e := newEnv(t)
	m := e.Molecule("M", "")
	a := e.Atom("A", `["a/**"]`, `,"moleculeId":"`+m.ID+`"`)
	b := e.Atom("B", `["b/**"]`, `,"moleculeId":"`+m.ID+`"`)
	e.Fail(op.CodeValidation, "summary", "manage_changelog", `{"operation":"append","parentType":"atom","parentId":"`+a.ID+`"}`)
	e.Fail(op.CodeValidation, "summary", "manage_changelog", `{"operation":"append","parentType":"atom","parentId":"`+a.ID+`","summary":"  "}`)
	e.Fail(op.CodeValidation, "summary", "manage_changelog", `{"operation":"append","parentType":"atom","parentId":"`+a.ID+`","summary":"`+strings.Repeat("s", 4097)+`"}`)
	e.Fail(op.CodeValidation, "parentType", "manage_changelog", `{"operation":"append","parentType":"feature","parentId":"`+a.ID+`","summary":"s"}`)
	e.Fail(op.CodeValidation, "limit", "manage_changelog", `{"operation":"append","parentType":"atom","parentId":"`+a.ID+`","summary":"s","limit":3}`)
	e.Fail(op.CodeNotFound, "parentId", "manage_changelog", `{"operation":"append","parentType":"molecule","parentId":"`+a.ID+`","summary":"s"}`)
	for i := range 8 {
		e.OK("manage_changelog", fmt.Sprintf(`{"operation":"append","parentType":"atom","parentId":%q,"summary":"entry %d","taskId":"T-%d"}`, a.ID, i, i))
	}
	p := e.OK("manage_changelog", `{"operation":"search","parentType":"atom","parentId":"`+a.ID+`","limit":3,"offset":2}`).(*op.Page[graphop.ChangelogEntry])
	if p.Total != 8 || len(p.Items) != 3 || p.Items[0].Summary != "entry 5" || p.Items[2].Summary != "entry 3" || p.Items[0].Store != "project" {
		t.Fatalf("changelog page: %s", mustJSON(p))
	}
	p = e.OK("manage_changelog", `{"operation":"search","parentType":"atom","parentId":"`+a.ID+`","limit":"100","offset":"6"}`).(*op.Page[graphop.ChangelogEntry])
	if len(p.Items) != 2 || p.Items[1].Summary != "entry 0" {
		t.Fatalf("last page: %s", mustJSON(p))
	}
	got := e.OK("query_graph", `{"operation":"get","entityType":"atom","id":"`+a.ID+`"}`).(*graphop.Atom)
	if len(got.Changelog) != 5 || got.Changelog[0].Summary != "entry 7" {
		t.Fatalf("default inline changelog: %s", mustJSON(got.Changelog))
	}
	got = e.OK("query_graph", `{"operation":"get","entityType":"atom","id":"`+a.ID+`","changelogLimit":2}`).(*graphop.Atom)
	if len(got.Changelog) != 2 {
		t.Fatalf("changelogLimit: %d", len(got.Changelog))
	}
	got = e.OK("query_graph", `{"operation":"get","entityType":"atom","id":"`+a.ID+`","includeChangelog":false}`).(*graphop.Atom)
	if got.Changelog != nil || strings.Contains(mustJSON(got), "changelog") {
		t.Fatalf("includeChangelog=false: %s", mustJSON(got))
	}
	mol := e.OK("query_graph", `{"operation":"get","entityType":"molecule","id":"`+m.ID+`"}`).(*graphop.Molecule)
	if len(mol.Atoms) != 2 || mol.Atoms[0].ID != a.ID || mol.Atoms[1].ID != b.ID || mol.Changelog == nil || !strings.Contains(mustJSON(mol), `"changelog":[]`) {
		t.Fatalf("molecule get: %s", mustJSON(mol))
	}
	e.Fail(op.CodeValidation, "id", "query_graph", `{"operation":"get","entityType":"atom"}`)
	e.Fail(op.CodeValidation, "id", "query_graph", `{"operation":"get","entityType":"atom","id":"abc"}`)
	e.Fail(op.CodeValidation, "entityType", "query_graph", `{"operation":"get","id":"`+a.ID+`"}`)
	e.Fail(op.CodeNotFound, "id", "query_graph", `{"operation":"get","entityType":"molecule","id":"`+a.ID+`"}`)
	e.Fail(op.CodeValidation, "changelogLimit", "query_graph", `{"operation":"get","entityType":"atom","id":"`+a.ID+`","changelogLimit":-1}`)
}

func TestSearch(t *testing.T) {
	e := newEnv(t)
	m := e.Molecule("Payments Domain", `,"knowledge":"Stripe webhooks are idempotent"`)
	for i := range 25 {
		mol := ""
		if i%2 == 0 {
			mol = `,"moleculeId":"` + m.ID + `"`
		}
		e.Atom(fmt.Sprintf("atom %02d", i), fmt.Sprintf(`["src/%d/**"]`, i), fmt.Sprintf(`,"knowledge":"handler number%d for locales"%s`, i, mol))
	}
	e.Atom("Checkout Page", `["src/pages/checkout/**"]`, `,"knowledge":"Locales come from the registry, not local i18n files"`)
	page := func(raw string) *op.Page[graphop.Atom] {
		return e.OK("query_graph", raw).(*op.Page[graphop.Atom])
	}
	p := page(`{"operation":"search","entityType":"atom"}`)
	if p.Total != 26 || len(p.Items) != 20 || p.Limit != 20 || p.Offset != 0 || p.Items[0].Name != "Checkout Page" {
		t.Fatalf("default page: total=%d len=%d first=%s", p.Total, len(p.Items), p.Items[0].Name)
	}
	p = page(`{"operation":"search","entityType":"atom","limit":10,"offset":20}`)
	if len(p.Items) != 6 || p.Items[0].Name != "atom 19" {
		t.Fatalf("offset page: %d %s", len(p.Items), p.Items[0].Name)
	}
	p = page(`{"operation":"search","entityType":"atom","query":"registry"}`)
	if p.Total != 1 || p.Items[0].Name != "Checkout Page" {
		t.Fatalf("fts: %s", mustJSON(p))
	}
	p = page(`{"operation":"search","entityType":"atom","query":"checkout"}`)
	if p.Total != 1 {
		t.Fatalf("fts on name: %d", p.Total)
	}
	p = page(`{"operation":"search","entityType":"atom","query":"handl locales"}`)
	if p.Total != 25 {
		t.Fatalf("fts prefix + all words: %d", p.Total)
	}
	p = page(`{"operation":"search","entityType":"atom","moleculeId":"` + m.ID + `"}`)
	if p.Total != 13 {
		t.Fatalf("by molecule: %d", p.Total)
	}
	p = page(`{"operation":"search","entityType":"atom","orphansOnly":"true"}`)
	if p.Total != 13 {
		t.Fatalf("orphans: %d", p.Total)
	}
	p = page(`{"operation":"search","entityType":"atom","orphansOnly":true,"query":"number3"}`)
	if p.Total != 1 || p.Items[0].Name != "atom 03" {
		t.Fatalf("orphans + query: %s", mustJSON(p))
	}
	p = page(`{"operation":"search","entityType":"atom","query":"Number1","includeChangelog":true}`)
	if p.Total != 11 || p.Items[0].Changelog == nil || p.Items[0].Name != "atom 01" {
		t.Fatalf("changelog in search: %s", mustJSON(p))
	}
	mp := e.OK("query_graph", `{"operation":"search","entityType":"molecule","query":"idempotent"}`).(*op.Page[graphop.Molecule])
	if mp.Total != 1 || mp.Items[0].ID != m.ID || mp.Items[0].Store != "project" {
		t.Fatalf("molecule search: %s", mustJSON(mp))
	}
	e.Fail(op.CodeValidation, "orphansOnly", "query_graph", `{"operation":"search","entityType":"atom","orphansOnly":true,"moleculeId":"`+m.ID+`"}`)
	e.Fail(op.CodeValidation, "moleculeId", "query_graph", `{"operation":"search","entityType":"molecule","moleculeId":"`+m.ID+`"}`)
	e.Fail(op.CodeValidation, "limit", "query_graph", `{"operation":"search","entityType":"atom","limit":0}`)
	e.Fail(op.CodeValidation, "limit", "query_graph", `{"operation":"search","entityType":"atom","limit":101}`)
	e.Fail(op.CodeValidation, "offset", "query_graph", `{"operation":"search","entityType":"atom","offset":-1}`)
	e.Fail(op.CodeValidation, "limit", "query_graph", `{"operation":"search","entityType":"atom","limit":"ten"}`)
	e.Fail(op.CodeValidation, "query", "query_graph", `{"operation":"search","entityType":"atom","query":"*** ---"}`)
	e.Fail(op.CodeValidation, "limit", "query_graph", `{"operation":"get","entityType":"atom","id":"`+m.ID+`","limit":3}`)
	e.Fail(op.CodeValidation, "paths", "query_graph", `{"operation":"search","entityType":"atom","paths":"a"}`)
	e.Fail(op.CodeNotFound, "projectId", "query_graph", `{"operation":"search","entityType":"atom","projectId":"00000000-0000-4000-8000-000000000000"}`)
	e.caller.Cwd = "/nowhere"
	e.Fail(op.CodeValidation, "projectId", "query_graph", `{"operation":"search","entityType":"atom"}`)
}

func TestBatchIsAllOrNothing(t *testing.T) {
	e := newEnv(t)
	s := e.g
	name, bad := "ok", "bad"
	mk := func(n *string, paths graphop.Patterns) *graphop.ManageGraph {
		return &graphop.ManageGraph{Operation: "create", EntityType: "atom", Name: n, Paths: paths}
	}
	_, err := s.Batch(t.Context(), e.caller, []*graphop.ManageGraph{mk(&name, graphop.Patterns{"a/**"}), mk(&bad, graphop.Patterns{})})
	ae, ok := op.AsError(err)
	if !ok || ae.Code != op.CodeInvariant || ae.Details["index"] != 1 || ae.Details["field"] != "paths" {
		t.Fatalf("batch error %v", err)
	}
	if c := e.counts(); c.Atoms != 0 || c.Deltas != 0 {
		t.Fatalf("a failed batch left rows: %+v", c)
	}
	vs, err := s.Batch(t.Context(), e.caller, []*graphop.ManageGraph{mk(&name, graphop.Patterns{"a/**"}), mk(&bad, graphop.Patterns{"b/**"})})
	if err != nil || len(vs) != 2 || vs[1].(*graphop.Atom).Name != "bad" {
		t.Fatalf("batch %v %v", vs, err)
	}
	got, _, _ := contextOf(e, `"b/x"`)
	if len(got["bad"]) != 1 {
		t.Fatalf("context after batch %v", got)
	}
	if v := e.OK("verify", `{}`).(*graphop.VerifyResult); !v.OK {
		t.Fatal("verify after batch")
	}
}
