package main

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite generated documentation")

const (
	tableBegin = "<!-- verbs:begin (generated from the verb layer: go test ./cmd/pi-actors -run TestCLIDocVerbTable -args -update) -->\n"
	tableEnd   = "<!-- verbs:end -->\n"
)

// TestCLIDocVerbTable fails when docs/cli.md's verb table differs from the
// one generated from the verbs; -update rewrites it.
func TestCLIDocVerbTable(t *testing.T) {
	path := "../../docs/cli.md"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	i, j := strings.Index(doc, tableBegin), strings.Index(doc, tableEnd)
	if i < 0 || j < i {
		t.Fatalf("docs/cli.md has no generated verb table between %q and %q", tableBegin, tableEnd)
	}
	want := doc[:i+len(tableBegin)] + verbTable() + doc[j:]
	if want == doc {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/cli.md's verb table is out of date; run: go test ./cmd/pi-actors -run TestCLIDocVerbTable -args -update\nwant:\n%s", verbTable())
}

// TestVerbHelpListsParameters: every verb's --help ends with its
// parameters, generated from the request type.
func TestVerbHelpListsParameters(t *testing.T) {
	for _, v := range listed() {
		if s := findSpec(v[0]); s != nil {
			h := specHelp(s)
			for _, p := range s.Params() {
				if n := strings.Count(h, "\n  "+p+" "); n != 1 {
					t.Errorf("%s --help lists %s %d times, want once:\n%s", s.Name, p, n, h)
				}
			}
		}
	}
}
