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
