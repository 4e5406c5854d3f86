package vector

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pi-actors/pi-actors/knowledge/api/vectorop"
)

// A rare word in a long text leaves the node's vector far from the
// query's (cosine under minSimilarity): the node word index finds it
// anyway, first, and only while it is live; a type filter applies.
func TestSearchFindsNodeByItsWords(t *testing.T) {
	e := newEnv(t)
	for i := range 200 {
		e.Node("history", "decision", fmt.Sprintf("note %d", i), fmt.Sprintf("the deploy pipeline retries step %d with backoff and logs each attempt", i), "")
	}
	var words []string
	for i := range 150 {
		words = append(words, fmt.Sprintf("sample%d", i))
	}
	long := "we took " + strings.Join(words, " ") + " "
	old := e.Node("history", "entry", "field log", long+"then saw ECONNRESET once at noon", "")
	search := func(q, extra string) *vectorop.SearchResult {
		t.Helper()
		return e.OK("search", `{"query":"`+q+`","domain":"history","limit":5`+extra+`}`).(*vectorop.SearchResult)
	}
	r := search("ECONNRESET", "")
	if len(r.Hits) == 0 || r.Hits[0].ID != old.ID || r.Hits[0].Similarity >= minSimilarity {
		t.Fatalf("search ECONNRESET: want the field log first, found by its words (similarity under %v): %s", minSimilarity, mustJSON(r))
	}
	if r := search("econnreset noon", ""); len(r.Hits) == 0 || r.Hits[0].ID != old.ID {
		t.Errorf("both words, any case: %s", mustJSON(r))
	}
	holds := func(r *vectorop.SearchResult, id string) bool {
		for _, h := range r.Hits {
			if h.ID == id {
				return true
			}
		}
		return false
	}
	if r := search("ECONNRESET", `,"type":"decision"`); holds(r, old.ID) {
		t.Errorf("type=decision: %s", mustJSON(r))
	}
	newer := e.Node("history", "entry", "field log v2", long+"nothing unusual", `,"supersedes":"`+old.ID+`"`)
	if r := search("ECONNRESET", ""); holds(r, old.ID) {
		t.Errorf("after %s superseded it: %s", newer.ID, mustJSON(r))
	}
}

// A query typed decomposed (e + U+0301, as macOS file names are) finds
// the composed text it names (it matched nothing: other bytes, other
// topics).
func TestSearchDecomposedQuery(t *testing.T) {
	e := newEnv(t)
	n := e.Node("history", "entry", "menu", "the café on the corner serves crêpes", "")
	r := e.OK("search", `{"query":"cafe\u0301 cre\u0302pes","domain":"history"}`).(*vectorop.SearchResult)
	if len(r.Hits) == 0 || r.Hits[0].ID != n.ID {
		t.Fatalf("decomposed query: %s", mustJSON(r))
	}
}

// The word lookup takes a query of up to maxWordsQuery words (letters and
// digits), each a whole quoted term, all required; a longer one (a
// sentence) and one with no word are left to similarity.
func TestWordsMatch(t *testing.T) {
	for q, want := range map[string]string{
		"ECONNRESET":            `"ECONNRESET"`,
		"exit-code 137, again!": `"exit" "code" "137" "again"`,
		"café crêpes":           `"café" "crêpes"`,
		"--- !!!":               "",
		"a b c d e f g h":       `"a" "b" "c" "d" "e" "f" "g" "h"`,
		"a b c d e f g h i":     "",
	} {
		if got := wordsMatch(q); got != want {
			t.Errorf("wordsMatch(%q) = %q, want %q", q, got, want)
		}
	}
}
