package graphop

import (
	"strings"
	"testing"

	"github.com/pi-actors/pi-actors/knowledge/api/op"
)

func TestText(t *testing.T) {
	mol := "m1"
	big := strings.Repeat("knowledge ", 2000)
	a := &Atom{ID: "a1", Name: "Atom", MoleculeID: &mol, Paths: []string{"src/**"}, Knowledge: big, Version: 2, Store: "project",
		Changelog: []ChangelogEntry{{TaskID: "t", Summary: "s"}}}
	out, _ := Text(a)
	if !strings.HasPrefix(out, `atom=a1 name="Atom" version=2`) || !strings.Contains(out, "store=project") ||
		!strings.Contains(out, "--json for the whole text") || len(out) > 3000 || !strings.Contains(out, "manage_changelog operation=search") {
		t.Fatalf("atom text (%d bytes):\n%s", len(out), out)
	}
	p := &op.Page[Atom]{Total: 150, Limit: 100, Offset: 0}
	for range 100 {
		p.Items = append(p.Items, *a)
	}
	out, _ = Text(p)
	if !strings.HasPrefix(out, "total=150 limit=100 offset=0 shown=20") || !strings.Contains(out, "80 more on this page") ||
		!strings.Contains(out, "next page: offset=100") || len(out) > 8000 {
		t.Fatalf("page text (%d bytes):\n%s", len(out), out)
	}
	c := &Context{Molecules: []ContextMolecule{{ID: "m", Name: "M", Atoms: []ContextAtom{{ID: "a", Name: "A", MatchedPaths: []string{"x"}}}}},
		UnmatchedPaths: []string{"y"}}
	if out, _ = Text(c); !strings.HasPrefix(out, "molecules=1 atoms=1 orphan_atoms=0 unmatched_paths=1") || !strings.Contains(out, "unmatched: y") {
		t.Fatalf("context text:\n%s", out)
	}
	// Many unmatched paths: the line is cut and says where they all are.
	for i := range 300 {
		c.UnmatchedPaths = append(c.UnmatchedPaths, "src/some/deep/path/file"+strings.Repeat("x", i%7)+".go")
	}
	if out, _ = Text(c); !strings.Contains(out, "(301 paths in all; --json lists every one)") || len(out) > 3000 {
		t.Fatalf("context text with 301 unmatched paths (%d bytes):\n%s", len(out), out)
	}
	v := &VerifyResult{OK: false, Stores: []VerifyReport{{Store: "project", Breaks: []Break{{EntityID: "a", Version: 2, Reason: "r"}}}}}
	if out, _ = Text(v); !strings.HasPrefix(out, "ok=false") || !strings.Contains(out, "a v2: r") {
		t.Fatalf("verify text:\n%s", out)
	}
}

// A stored value printed inside a line (paths, a relation's reason, a
// project's root) cannot start a line of its own: its newline is escaped.
func TestTextEscapesNewlines(t *testing.T) {
	forged := "x\nmolecules=99"
	a := &Atom{ID: "a1", Name: "A", Paths: []string{forged}, RelatedAtoms: []RelatedAtom{{AtomID: "a2", Reason: forged}}}
	m := &Molecule{ID: "m1", Name: "M", RelatedMolecules: []RelatedMolecule{{MoleculeID: "m2", Reason: forged}}, Atoms: []Atom{*a}}
	c := &Context{OrphanAtoms: []ContextAtom{{ID: "a1", Name: "A", MatchedPaths: []string{forged}, RelatedAtoms: []RelatedAtom{{AtomID: "a2", Reason: forged}}}},
		UnmatchedPaths: []string{forged}}
	var outs []string
	for _, r := range []any{a, m, c, &Project{ID: "p", Name: "p", Root: forged}, &op.Page[Project]{Items: []Project{{ID: "p", Root: forged}}},
		&op.Page[Atom]{Items: []Atom{*a}}} {
		o, _ := Text(r)
		outs = append(outs, o)
	}
	for _, o := range outs {
		for _, l := range strings.Split(o, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "molecules=99") {
				t.Fatalf("a stored value started a line:\n%s", o)
			}
		}
		if !strings.Contains(o, `x\x0amolecules=99`) {
			t.Errorf("newline not shown escaped:\n%s", o)
		}
	}
}
