package vector

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/pi-actors/pi-actors/knowledge/api"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/api/vectorop"
)

// live reports whether a current (not superseded) code hit for q has a
// name containing q.
func live(t *testing.T, e *env, q string) bool {
	t.Helper()
	for _, h := range searchCode(t, e, q, `,"limit":20`).Hits {
		if strings.Contains(h.Snippet+h.Name, q) && h.SupersededBy == "" {
			return true
		}
	}
	return false
}

// A file that became binary or grew past the size limit is retired with
// its nodes, as a deleted one is (its old text read as live code).
func TestIngestRetiresFilesNoLongerText(t *testing.T) {
	e := newEnv(t)
	writeFiles(t, e.repo, map[string]string{"sub/p.txt": "platypus notes", "sub/n.txt": "narwhal notes", "sub/k.txt": "kiwi notes"})
	sub := filepath.Join(e.repo, "sub")
	ingest(t, e.s, sub, "", nil)
	if !live(t, e, "platypus") || !live(t, e, "narwhal") {
		t.Fatal("not indexed")
	}
	os.WriteFile(filepath.Join(sub, "p.txt"), []byte("platypus\x00binary"), 0o644)
	os.WriteFile(filepath.Join(sub, "n.txt"), []byte("narwhal "+strings.Repeat("x", ingestMaxFile)), 0o644)
	res := ingest(t, e.s, sub, "", nil)
	if res.Removed != 2 || res.Unchanged != 1 {
		t.Fatalf("re-ingest %+v, want 2 removed, 1 unchanged", res)
	}
	if live(t, e, "platypus") || live(t, e, "narwhal") || !live(t, e, "kiwi") {
		t.Fatal("a file that is no longer text still has live nodes (or kiwi lost its)")
	}
	// A file ingested by itself, too.
	os.WriteFile(filepath.Join(sub, "k.txt"), []byte("kiwi\x00"), 0o644)
	if res := ingest(t, e.s, filepath.Join(sub, "k.txt"), "", nil); res.Removed != 1 || live(t, e, "kiwi") {
		t.Fatalf("single file turned binary: %+v", res)
	}
}

// Through a symlinked directory a file keeps its one name: the walk
// enters a linked root, and the real path's ingest finds it unchanged.
func TestIngestThroughSymlink(t *testing.T) {
	e := newEnv(t)
	writeFiles(t, e.repo, map[string]string{"src/w.txt": "wallaby notes"})
	link := filepath.Join(e.dir, "repolink")
	if err := os.Symlink(e.repo, link); err != nil {
		t.Fatal(err)
	}
	res, err := e.s.Ingest(t.Context(), IngestRequest{Path: link, Base: link}, nil)
	if err != nil || res.Indexed != 1 {
		t.Fatalf("ingest through the link: %+v %v", res, err)
	}
	if res, _ := e.s.Ingest(t.Context(), IngestRequest{Path: filepath.Join(e.repo, "src"), Base: e.repo}, nil); res.Unchanged != 1 || res.Indexed != 0 {
		t.Fatalf("the real path after the link: %+v (indexed twice)", res)
	}
	hits := searchCode(t, e, "wallaby", "").Hits
	if len(hits) == 0 || hits[0].Name != "src/w.txt" && !strings.HasPrefix(hits[0].Name, "src/w.txt") {
		t.Fatalf("hits %+v", hits)
	}
}

// Text is stored composed (NFC), as queries are: a decomposed file is
// found by the word as typed, and names written either way conflict.
func TestNFCOnWrite(t *testing.T) {
	e := newEnv(t)
	writeFiles(t, e.repo, map[string]string{"nfd.txt": norm.NFD.String("Gebühren für den Bürgersteig")})
	ingest(t, e.s, filepath.Join(e.repo, "nfd.txt"), "", nil)
	if !live(t, e, "Gebühren") {
		t.Error("a decomposed file is not found by the composed word")
	}
	e.Node("history", "decision", norm.NFD.String("Crème policy"), "keep it", "")
	b := e.OK("node_add", `{"domain":"history","type":"decision","name":"Crème policy","content":"drop it"}`).(*vectorop.NodeAdded)
	if len(b.Conflicts) != 1 {
		t.Errorf("NFD then NFC name: conflicts %+v, want 1", b.Conflicts)
	}
	// Case beyond ASCII: ÉTÉ and été are one subject.
	e.Node("history", "decision", "ÉTÉ plan", "aaa", "")
	c := e.OK("node_add", `{"domain":"history","type":"decision","name":"été plan","content":"bbb"}`).(*vectorop.NodeAdded)
	if len(c.Conflicts) != 1 {
		t.Errorf("ÉTÉ then été: conflicts %+v, want 1", c.Conflicts)
	}
	d := e.OK("node_add", `{"domain":"history","type":"decision","name":"ete plan","content":"ccc"}`).(*vectorop.NodeAdded)
	if len(d.Conflicts) != 0 {
		t.Errorf("ete is not été: conflicts %+v", d.Conflicts)
	}
}

// A line longer than a chunk is cut between characters, never inside
// one, and its pieces are told apart by name.
func TestChunksKeepCharacters(t *testing.T) {
	line := strings.Repeat("日本語のテキスト", 700) // ~16.8 KB, no newline
	ps := chunks("/x/one.txt", "one.txt", []byte(line+"\nnext line\n"))
	if len(ps) < 8 {
		t.Fatalf("%d chunks", len(ps))
	}
	names := map[string]bool{}
	var whole strings.Builder
	for _, p := range ps {
		if !utf8.ValidString(p.content) {
			t.Fatalf("chunk %s is cut inside a character: %q…", p.name, p.content[:12])
		}
		if names[p.name] {
			t.Fatalf("two chunks named %s", p.name)
		}
		names[p.name] = true
		whole.WriteString(p.content)
	}
	if whole.String() != line+"\nnext line\n" {
		t.Fatal("the chunks do not add up to the file")
	}
	if first := ps[0].name; first != "one.txt:1-1 part 1" {
		t.Errorf("first chunk %q", first)
	}
}

// A statement cannot supersede code (the source of truth): refused, the
// code node stays live.
func TestStatementCannotSupersedeCode(t *testing.T) {
	e := newEnv(t)
	writeFiles(t, e.repo, map[string]string{"h.go": "package h\n\n// Helper helps.\nfunc Helper() {}\n"})
	ingest(t, e.s, e.repo, "", nil)
	var id string
	for _, h := range searchCode(t, e, "Helper", "").Hits {
		if h.Name == "Helper" {
			id = h.ID
		}
	}
	if id == "" {
		t.Fatal("Helper not indexed")
	}
	e.Fail(op.CodeValidation, "supersedes", "node_add", `{"domain":"history","type":"entry","name":"helper gone","content":"removed","supersedes":"`+id+`"}`)
	if !live(t, e, "Helper") {
		t.Fatal("the code node was superseded")
	}
	// A statement superseding a statement is fine.
	a := e.Node("history", "entry", "old note", "x", "")
	e.OK("node_add", `{"domain":"history","type":"entry","name":"new note","content":"y","supersedes":"`+a.ID+`"}`)
}

// The topic filter knows whole tokens: a name's prefix and a word without
// its accents are still found through the name and word indexes.
func TestFilterMissStillAsksNamesAndWords(t *testing.T) {
	e := newEnv(t)
	e.Node("history", "decision", "RetryPolicy", "backoff doubles", "")
	e.Node("history", "entry", "menu", "Café crème naïve résumé", "")
	for _, q := range []string{"Retr", "cafe", "creme"} {
		r := e.OK("search", `{"query":"`+q+`","domain":"history"}`).(*vectorop.SearchResult)
		if len(r.Hits) == 0 {
			t.Errorf("search %q: no hits (%s)", q, r.Status)
		}
	}
	if r := e.OK("search", `{"query":"zzyzx","domain":"history"}`).(*vectorop.SearchResult); len(r.Hits) != 0 {
		t.Errorf("an unrelated query: %d hits", len(r.Hits))
	}
}

// node_get's linked lists are capped at 50 and say so (linkedCut, and the
// text points at traverse).
func TestNodeGetSaysListsAreCut(t *testing.T) {
	e := newEnv(t)
	code := e.OK("node_add", `{"domain":"code","type":"function","name":"Busy","content":"func Busy()","source":"code"}`).(*vectorop.NodeAdded)
	for i := range 60 {
		e.OK("node_add", fmt.Sprintf(`{"domain":"history","type":"entry","name":"change %d","content":"c%d","links":[{"to":%q,"type":"modified"}]}`, i, i, code.Node.ID))
	}
	d := e.OK("node_get", `{"id":"`+code.Node.ID+`"}`).(*vectorop.NodeDetail)
	if len(d.History) != 50 || !slices.Contains(d.LinkedCut, "history") {
		t.Fatalf("history %d, linkedCut %v", len(d.History), d.LinkedCut)
	}
	if txt := api.Text(d); !strings.Contains(txt, "history: the first 50 only; traverse id="+code.Node.ID) {
		t.Fatalf("text does not say where the rest is:\n%s", txt)
	}
}
