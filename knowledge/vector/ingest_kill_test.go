package vector

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/pi-actors/pi-actors/knowledge/knowledgetest"
)

// A process killed with SIGKILL in the middle of an ingest leaves a
// store that opens clean, holds whole batches only, and a second ingest
// completes it, skipping what was done.
func TestKillDuringIngest(t *testing.T) {
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	const files = 640
	src := map[string]string{}
	for i := range files {
		src[fmt.Sprintf("pkg%02d/f%03d.go", i%16, i)] = fmt.Sprintf("package pkg%02d\n\n// Alpha%d is the first.\nfunc Alpha%d() int { return %d }\n\n// Beta%d is the second.\nfunc Beta%d() {}\n\n// Gamma%d is a type.\ntype Gamma%d struct{ N int }\n", i%16, i, i, i, i, i, i, i)
	}
	writeFiles(t, repo, src)
	path := filepath.Join(dir, "k.db")
	openStore(t, path, Options{}).Close()
	cmd, _, out := knowledgetest.Helper(t, "ingest", path, repo)
	for {
		line := knowledgetest.ReadLine(t, out)
		var done, total int
		if _, err := fmt.Sscanf(line, "progress %d %d", &done, &total); err != nil {
			t.Fatalf("helper said %q", line)
		}
		if done >= 3*ingestBatch {
			break
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	s := openStore(t, path, Options{})
	var integrity string
	s.r.QueryRow(`PRAGMA integrity_check`).Scan(&integrity)
	if integrity != "ok" {
		t.Fatalf("integrity_check: %s", integrity)
	}
	var live, dups, decls int
	s.r.QueryRow(`SELECT count(*) FROM vg_nodes WHERE type = 'file' AND superseded_by IS NULL`).Scan(&live)
	s.r.QueryRow(`SELECT count(*) FROM (SELECT key FROM vg_nodes WHERE key IS NOT NULL AND superseded_by IS NULL GROUP BY key HAVING count(*) > 1)`).Scan(&dups)
	s.r.QueryRow(`SELECT count(*) FROM vg_edges e JOIN vg_nodes f ON f.id = e.source_id WHERE f.type = 'file' AND e.type = 'defines'`).Scan(&decls)
	if live < 3*ingestBatch || live >= files || live%ingestBatch != 0 || dups != 0 || decls != 3*live {
		t.Fatalf("after the kill: %d files, %d duplicate keys, %d declarations", live, dups, decls)
	}
	res := ingest(t, s, repo, "", nil)
	if res.Unchanged != live || res.Indexed != files-live {
		t.Fatalf("second ingest %+v (had %d)", res, live)
	}
	st, err := s.Status(t.Context())
	if err != nil || st.Pending != 0 || st.Nodes != files*4+16 {
		t.Fatalf("status %v %s", err, mustJSON(st))
	}
	if got := topName(t, s, "Gamma600 type"); !strings.HasPrefix(got, "Gamma600") {
		t.Fatalf("search after resume: %s", got)
	}
}
