package vector

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-actors/pi-actors/knowledge/api"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/api/vectorop"
)

const policyGo = `package retry

import "time"

// Policy decides how often a failed call is retried, with exponential
// backoff between attempts.
type Policy struct {
	Base     time.Duration
	Attempts int
}

// NewPolicy returns a policy with the given base delay.
func NewPolicy(base time.Duration) *Policy { return &Policy{Base: base, Attempts: 5} }

// Next is the backoff delay before attempt n: base doubled per attempt.
func (p *Policy) Next(attempt int) time.Duration {
	return p.Base << attempt
}

// Jitter spreads retries apart.
func Jitter(d time.Duration) time.Duration { return d + d/10 }
`

const invoiceGo = `package ledger

// Line is one invoice line.
type Line struct{ Cents int64 }

// TotalInvoice sums the invoice lines into the amount due in cents.
func TotalInvoice(lines []Line) int64 {
	var sum int64
	for _, l := range lines {
		sum += l.Cents
	}
	return sum
}
`

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func guideMD() string {
	var b strings.Builder
	b.WriteString("# Operations guide\n\n")
	for i := range 40 {
		fmt.Fprintf(&b, "## Deployment step %d\n\nRoll out the service to region %d, watch the dashboards, keep the previous release warm.\n\n", i, i)
	}
	b.WriteString("## Webhooks\n\nEvery incoming webhook carries an HMAC signature header; verify the signature with the shared secret before parsing the payload.\n")
	return b.String()
}

func ingest(t *testing.T, s *Store, path, glob string, atoms AtomMatcher) *vectorop.IngestResult {
	t.Helper()
	var calls, last, total int
	res, err := s.Ingest(t.Context(), IngestRequest{Path: path, Glob: glob, Atoms: atoms}, func(done, tot int) { calls, last, total = calls+1, done, tot })
	if err != nil {
		t.Fatalf("ingest: %v", err)
	}
	if calls == 0 || last != total {
		t.Fatalf("progress: %d calls, last %d of %d", calls, last, total)
	}
	return res
}

func searchCode(t *testing.T, e *env, query, extra string) *vectorop.SearchResult {
	t.Helper()
	return e.OK("search", fmt.Sprintf(`{"query":%q,"domain":"code"%s}`, query, extra)).(*vectorop.SearchResult)
}

// Ingest a temp repository, then search finds the right declaration in
// the right file; unchanged files are skipped; a changed file supersedes
// the changed declarations only; code nodes link to matching atoms.
func TestIngestSearchSupersede(t *testing.T) {
	e := newEnv(t)
	s := e.s
	e.Atom("Retry policy", `["retry/**"]`, "")
	writeFiles(t, e.repo, map[string]string{
		"retry/policy.go":       policyGo,
		"ledger/invoice.go":     invoiceGo,
		"docs/guide.md":         guideMD(),
		"bin.dat":               "\x00\x01\x02binary",
		"node_modules/x/y.js":   "module.exports = 1",
		".hidden/notes.txt":     "secret",
		"notes/short.txt":       "remember the zookeeper quorum size",
		"broken/broken.go":      "package broken\nfunc {",
		"retry/policy_test.txt": "see policy.go",
	})
	res := ingest(t, s, e.repo, "", e.g.AtomMatcher())
	if res.Indexed != 6 || res.Skipped != 1 || res.Changed != 0 || res.AtomLinks == 0 {
		t.Fatalf("first ingest %+v", res)
	}
	r := searchCode(t, e, "exponential backoff delay before the next retry attempt", "")
	if len(r.Hits) == 0 || !strings.HasSuffix(r.Hits[0].Path, "retry/policy.go") {
		t.Fatalf("backoff search: %s", api.Text(r))
	}
	next := findHit(r.Hits, "Policy.Next")
	if next == nil || next.Type != "method" || next.LineStart != 15 || len(next.Atoms) != 1 || next.Atoms[0].Name != "Retry policy" {
		t.Fatalf("Policy.Next hit: %s", mustJSON(r))
	}
	inv := searchCode(t, e, "sum invoice lines amount due", `,"type":"function"`)
	if len(inv.Hits) == 0 || inv.Hits[0].Name != "TotalInvoice" || len(inv.Hits[0].Atoms) != 0 {
		t.Fatalf("invoice search: %s", api.Text(inv))
	}
	wh := searchCode(t, e, "verify webhook HMAC signature", "")
	if len(wh.Hits) == 0 || wh.Hits[0].Type != "chunk" || !strings.Contains(wh.Hits[0].Snippet, "HMAC") {
		t.Fatalf("webhook search: %s", api.Text(wh))
	}
	policy := searchCode(t, e, "Policy struct", `,"type":"struct"`).Hits[0]
	d := e.OK("node_get", `{"id":"`+policy.ID+`"}`).(*vectorop.NodeDetail)
	if got := strings.Join(edgeTypes(d, "out"), " "); got != "has_method:method" {
		t.Fatalf("struct edges out %q", got)
	}
	// A history node about Next, made before the change.
	fix := e.OK("node_add", `{"domain":"history","type":"entry","name":"fixed overflow in backoff","content":"Next overflowed for attempt 64",
		"source":"history","verified":true,"links":[{"to":"`+next.ID+`","type":"modified"}]}`).(*vectorop.NodeAdded)

	again := ingest(t, s, e.repo, "", e.g.AtomMatcher())
	if again.Unchanged != 6 || again.Nodes != 0 {
		t.Fatalf("unchanged ingest %+v", again)
	}
	changed := strings.Replace(policyGo, "return p.Base << attempt", "return p.Base << min(attempt, 16)", 1)
	changed = strings.Replace(changed, "// Jitter spreads retries apart.\nfunc Jitter(d time.Duration) time.Duration { return d + d/10 }\n", "", 1)
	writeFiles(t, e.repo, map[string]string{"retry/policy.go": changed})
	third := ingest(t, s, e.repo, "", e.g.AtomMatcher())
	// file, Next (changed) and Jitter (gone) are superseded; Policy and NewPolicy stay.
	if third.Changed != 1 || third.Unchanged != 5 || third.Superseded != 3 || third.Nodes != 2 {
		t.Fatalf("changed ingest %+v", third)
	}
	r = searchCode(t, e, "backoff delay before attempt n base doubled", `,"limit":20`)
	newNext, oldNext := -1, -1
	for i, h := range r.Hits {
		if h.Name == "Policy.Next" && h.SupersededBy == "" {
			newNext = i
		}
		if h.ID == next.ID {
			oldNext = i
			if h.SupersededBy == "" || h.Freshness != supersededFresh || !strings.Contains(h.Warning, "superseded") {
				t.Fatalf("old Next not marked superseded: %+v", h)
			}
		}
	}
	if newNext < 0 || oldNext < 0 || newNext > oldNext {
		t.Fatalf("new Next at %d, old at %d:\n%s", newNext, oldNext, api.Text(r))
	}
	nd := e.OK("node_get", `{"id":"`+r.Hits[newNext].ID+`"}`).(*vectorop.NodeDetail)
	if len(nd.History) != 1 || nd.History[0].ID != fix.Node.ID {
		t.Fatalf("history of the new Next (through its old version): %s", mustJSON(nd))
	}
	if cd := e.OK("node_get", `{"id":"`+fix.Node.ID+`"}`).(*vectorop.NodeDetail); len(cd.Code) != 1 || cd.Code[0].ID != r.Hits[newNext].ID {
		t.Fatalf("code of the history node resolves to the current Next: %s", mustJSON(cd))
	}
	if p := e.OK("node_get", `{"id":"`+policy.ID+`"}`).(*vectorop.NodeDetail); p.Node.SupersededBy != "" {
		t.Fatalf("unchanged struct superseded: %s", mustJSON(p))
	}
	// A glob narrows the files.
	md := ingest(t, s, e.repo, "**/*.md", e.g.AtomMatcher())
	if md.Files != 1 || md.Unchanged != 1 {
		t.Fatalf("glob ingest %+v", md)
	}
	if _, err := s.Ingest(t.Context(), IngestRequest{Path: filepath.Join(e.repo, "nope")}, nil); !isCode(err, op.CodeNotFound) {
		t.Fatalf("missing path: %v", err)
	}
}

func isCode(err error, c op.Code) bool {
	e, ok := op.AsError(err)
	return ok && e.Code == c
}

// A file deleted since it was ingested is retired by the next ingest of
// a directory that holds it (its nodes supersede themselves: no longer
// current code); files outside the ingested directory or its glob stay
// current even when deleted.
func TestIngestRetiresDeletedFiles(t *testing.T) {
	e := newEnv(t)
	s := e.s
	legacy := "package legacy\n\n// LegacyKangaroo hops the old way.\nfunc LegacyKangaroo() int { return 1 }\n"
	writeFiles(t, e.repo, map[string]string{
		"src/legacy.go":      legacy,
		"src/keep.go":        invoiceGo,
		"src/notes.md":       "the wombat burrow notes",
		"other/outside.go":   "package other\n\n// OutsideWombat stays.\nfunc OutsideWombat() {}\n",
		"src/sub/deep.go":    "package sub\n\n// DeepPlatypus is deep.\nfunc DeepPlatypus() {}\n",
		"src/sub/unglob.txt": "platypus notes",
	})
	src := filepath.Join(e.repo, "src")
	if res := ingest(t, s, e.repo, "", nil); res.Indexed != 6 {
		t.Fatalf("first ingest %+v", res)
	}
	current := func(q string) *vectorop.Hit {
		t.Helper()
		for _, h := range searchCode(t, e, q, `,"limit":20`).Hits {
			if strings.Contains(h.Name, q) && h.SupersededBy == "" {
				return &h
			}
		}
		return nil
	}
	if current("LegacyKangaroo") == nil {
		t.Fatal("LegacyKangaroo not current after the first ingest")
	}
	for _, f := range []string{"src/legacy.go", "other/outside.go", "src/sub/unglob.txt"} {
		if err := os.Remove(filepath.Join(e.repo, f)); err != nil {
			t.Fatal(err)
		}
	}
	// src only, Go files only: legacy.go is retired; outside.go (outside
	// src) and unglob.txt (not matching the glob) are not.
	res := ingest(t, s, src, "**/*.go", nil)
	if res.Removed != 1 || res.Unchanged != 2 || res.Superseded != 2 {
		t.Fatalf("ingest after the delete %+v", res)
	}
	if !strings.Contains(api.Text(res), " removed=1 ") {
		t.Fatalf("text: %s", api.Text(res))
	}
	if h := current("LegacyKangaroo"); h != nil {
		t.Fatalf("deleted LegacyKangaroo still current: %+v", h)
	}
	r := searchCode(t, e, "LegacyKangaroo", `,"limit":20`)
	h := findHit(r.Hits, "LegacyKangaroo")
	if h == nil || h.SupersededBy != h.ID || h.Warning != "deleted: the file no longer exists" || h.Freshness != supersededFresh {
		t.Fatalf("retired LegacyKangaroo hit: %s", mustJSON(r))
	}
	if current("OutsideWombat") == nil || current("DeepPlatypus") == nil || current("TotalInvoice") == nil {
		t.Fatalf("a file outside the root or still there was retired:\n%s", api.Text(searchCode(t, e, "OutsideWombat DeepPlatypus TotalInvoice", `,"limit":20`)))
	}
	var live int
	s.r.QueryRow(`SELECT count(*) FROM vg_nodes WHERE key = ? AND superseded_by IS NULL`, "file:"+filepath.Join(src, "sub/unglob.txt")).Scan(&live)
	if live != 1 {
		t.Fatalf("unglob.txt retired though outside the glob: %d live", live)
	}
	// Nothing more to retire; the file back is new.
	if again := ingest(t, s, src, "**/*.go", nil); again.Removed != 0 || again.Superseded != 0 {
		t.Fatalf("second ingest %+v", again)
	}
	writeFiles(t, e.repo, map[string]string{"src/legacy.go": legacy})
	if back := ingest(t, s, src, "", nil); back.Indexed != 1 || back.Removed != 1 {
		t.Fatalf("ingest with the file back %+v", back) // unglob.txt is retired now (no glob)
	}
	if current("LegacyKangaroo") == nil {
		t.Fatal("LegacyKangaroo back but not current")
	}
}

// Two processes (here two handles of one store file, each with its own
// connections and ingest lock) ingesting at once: a file the other wrote
// since this ingest read the store is skipped when it wrote the same
// content (no UNIQUE constraint failure on vg_nodes.key), and refused
// with a busy CONFLICT (exit 75, a hint to run it again) when it wrote
// other content; concurrent ingests of a whole tree both succeed.
func TestIngestRacesAnotherProcess(t *testing.T) {
	e := newEnv(t)
	other := New(openDB(t, e.path, op.StoreProject), Options{})
	t.Cleanup(func() { other.Close() })
	abs := filepath.Join(e.repo, "ledger/invoice.go")
	writeFiles(t, e.repo, map[string]string{"ledger/invoice.go": invoiceGo})

	// other reads the store (prepare), then e.s ingests the same file.
	slow := &ingester{s: other, base: e.repo, res: &vectorop.IngestResult{}}
	w, err := slow.prepare(t.Context(), abs)
	if err != nil || w == nil {
		t.Fatalf("prepare: %v %v", w, err)
	}
	if res := ingest(t, e.s, e.repo, "", nil); res.Indexed != 1 {
		t.Fatalf("first ingest %+v", res)
	}
	write := func(w *fileWork) error {
		_, err := other.writeGraph(t.Context(), func(tx *vtx) (any, error) { return nil, slow.write(t.Context(), tx, w) })
		return err
	}
	if err := write(w); err != nil || slow.res.Unchanged != 1 || slow.res.Indexed != 0 {
		t.Fatalf("same content written by the other: %v %+v", err, slow.res)
	}
	var live int
	e.s.r.QueryRow(`SELECT count(*) FROM vg_nodes WHERE key = ? AND superseded_by IS NULL`, "file:"+abs).Scan(&live)
	if live != 1 {
		t.Fatalf("%d live file nodes", live)
	}

	// other content: a busy CONFLICT, nothing written.
	changed := strings.Replace(invoiceGo, "sum += l.Cents", "sum += 2 * l.Cents", 1)
	writeFiles(t, e.repo, map[string]string{"ledger/invoice.go": changed})
	if w, err = slow.prepare(t.Context(), abs); err != nil || w == nil {
		t.Fatalf("prepare: %v %v", w, err)
	}
	writeFiles(t, e.repo, map[string]string{"ledger/invoice.go": strings.Replace(changed, "2 *", "3 *", 1)})
	if res := ingest(t, e.s, e.repo, "", nil); res.Changed != 1 {
		t.Fatalf("second ingest %+v", res)
	}
	err = write(w)
	if ke, ok := op.AsError(err); !ok || ke.Code != op.CodeConflict || ke.Exit() != 75 || ke.Details["reason"] != op.ReasonBusy ||
		strings.Contains(ke.Message, "UNIQUE") || !strings.Contains(ke.Message, "run it again") {
		t.Fatalf("other content written by the other: %v", err)
	}

	// Both ingest a tree of 100 files at once.
	files := map[string]string{}
	for i := range 100 {
		files[fmt.Sprintf("gen/f%03d.go", i)] = fmt.Sprintf("package gen\n\n// Func%d does %d.\nfunc Func%d() int { return %d }\n", i, i, i, i)
	}
	writeFiles(t, e.repo, files)
	errs := make(chan error, 2)
	results := make(chan *vectorop.IngestResult, 2)
	for _, s := range []*Store{e.s, other} {
		go func() {
			r, err := s.Ingest(t.Context(), IngestRequest{Path: filepath.Join(e.repo, "gen")}, nil)
			results <- r
			errs <- err
		}()
	}
	total := 0
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("concurrent ingest: %v", err)
		}
		r := <-results
		total += r.Indexed
	}
	var n int
	e.s.r.QueryRow(`SELECT count(*) FROM vg_nodes WHERE key LIKE 'file:%/gen/%' AND superseded_by IS NULL`).Scan(&n)
	if n != 100 || total != 100 {
		t.Fatalf("%d live gen files, %d indexed in all", n, total)
	}
}
