package runs_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/runs"
)

// killedRun starts a run in cwd whose process writes out.txt there (a
// path relative to the run's working directory, not the test's), with
// the given artifacts declared, and kills it once the file is written:
// a terminal run whose artifacts are on disk.
func killedRun(t *testing.T, agent, cwd, id string, artifacts map[string]any) *runs.Info {
	t.Helper()
	sp := spec(agent, id, "{bin} touch-after 0s out.txt", nil)
	sp.Cwd, sp.Artifacts = cwd, artifacts
	r := start(t, agent, sp)
	eventually(t, 10*time.Second, "out.txt", func() bool {
		_, err := os.Stat(filepath.Join(cwd, "out.txt"))
		return err == nil
	})
	r.send("control.kill", nil)
	if res := r.wait(10 * time.Second); !runs.Terminal(res.Status) {
		t.Fatalf("status %s after control.kill", res.Status)
	}
	in, err := runs.Load(r.dir)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// Prune with preserve copies a declared artifact given by a path relative
// to the run's working directory (where the run wrote it), whatever the
// pruner's working directory; one that does not exist is left out of the
// copies; a directory is copied with what it holds; an earlier copy of
// the same name is never overwritten.
func TestPrunePreservesRelativeArtifacts(t *testing.T) {
	t.Parallel()
	agent, cwd := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(cwd, "outdir", "sub"), 0o755)
	os.WriteFile(filepath.Join(cwd, "outdir", "sub", "a.txt"), []byte("in a dir\n"), 0o644)
	os.Symlink("sub/a.txt", filepath.Join(cwd, "outdir", "link"))
	in := killedRun(t, agent, cwd, "pa", map[string]any{
		"out":     "out.txt",
		"obj":     map[string]any{"path": "./out.txt", "kind": "report"},
		"dir":     "outdir",
		"missing": "never-written.txt",
	})
	stateDir := string(in.Dir)
	kept, err := runs.Prune(in, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stateDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the state dir is still there after prune: %v", err)
	}
	dest := filepath.Join(filepath.Dir(stateDir), "preserved-artifacts", "pa")
	if len(kept) != 3 || kept["missing"] != "" {
		t.Fatalf("preserved %v, want out, obj and dir (missing does not exist)", kept)
	}
	// Two artifacts name the same file: two copies, neither over the other.
	if a, b := kept["out"], kept["obj"]; a == b || filepath.Dir(a) != dest || filepath.Dir(b) != dest ||
		!(filepath.Base(a) == "out.txt" && filepath.Base(b) == "out.txt.1" || filepath.Base(a) == "out.txt.1" && filepath.Base(b) == "out.txt") {
		t.Errorf("copies %s and %s, want out.txt and out.txt.1 in %s", a, b, dest)
	}
	for _, name := range []string{"out", "obj"} {
		if b, err := os.ReadFile(kept[name]); err != nil || string(b) != "ok\n" {
			t.Errorf("preserved %s: %q, %v", name, b, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(kept["dir"], "sub", "a.txt")); err != nil || string(b) != "in a dir\n" {
		t.Errorf("preserved dir: sub/a.txt %q, %v", b, err)
	}
	if l, err := os.Readlink(filepath.Join(kept["dir"], "link")); err != nil || l != "sub/a.txt" {
		t.Errorf("preserved dir: link %q, %v (want the link copied as a link)", l, err)
	}

	// The same run id again, pruned again: the first copies stay.
	in = killedRun(t, agent, cwd, "pa", map[string]any{"out": "out.txt"})
	kept2, err := runs.Prune(in, true)
	if err != nil {
		t.Fatal(err)
	}
	if kept2["out"] == kept["out"] || kept2["out"] == kept["obj"] || filepath.Dir(kept2["out"]) != dest {
		t.Errorf("second prune copied to %s over an earlier copy (%v)", kept2["out"], kept)
	}
	for _, p := range []string{kept["out"], kept["obj"], kept2["out"]} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("copy %s: %v", p, err)
		}
	}
}

// An artifact that holds the runs directory (the run's working directory
// is the agent root, and "." is its artifact) would be copied into
// itself: the prune is refused before anything happens.
func TestPruneRefusesArtifactHoldingTheCopies(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	link := filepath.Join(t.TempDir(), "agent-link")
	if err := os.Symlink(agent, link); err != nil {
		t.Fatal(err)
	}
	in := killedRun(t, agent, agent, "self", map[string]any{"all": ".", "via-link": link})
	arts := in.Meta.Artifacts
	for _, name := range []string{"all", "via-link"} {
		in.Meta.Artifacts = map[string]any{name: arts[name]}
		_, err := runs.Prune(in, true)
		if !errors.Is(err, runs.ErrNotPreservable) || !strings.Contains(err.Error(), "where the copies go") {
			t.Fatalf("%s: prune: %v, want ErrNotPreservable naming where the copies go", name, err)
		}
	}
	if _, err := os.Stat(string(in.Dir)); err != nil {
		t.Errorf("the run was deleted although its artifact was not preserved: %v", err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(string(in.Dir)), "preserved-artifacts")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused prune made the copies' directory: %v", err)
	}
}

// An artifact that cannot be copied (a FIFO) stops the prune before
// anything happens: the run is not deleted and no copy is left.
func TestPruneRefusesUncopyableArtifact(t *testing.T) {
	t.Parallel()
	agent, cwd := t.TempDir(), t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(cwd, "pipe"), 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	in := killedRun(t, agent, cwd, "fifo", map[string]any{"a": "out.txt", "b": "pipe"})
	_, err := runs.Prune(in, true)
	if !errors.Is(err, runs.ErrNotPreservable) {
		t.Fatalf("prune: %v, want ErrNotPreservable", err)
	}
	if _, err := os.Stat(string(in.Dir)); err != nil {
		t.Errorf("the run was deleted although its artifact was not preserved: %v", err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(string(in.Dir)), "preserved-artifacts", "fifo", "out.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a copy was left by a prune that failed: %v", err)
	}
	// Without preserve the run is deleted.
	if _, err := runs.Prune(in, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(string(in.Dir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the state dir is still there after prune: %v", err)
	}
}

func TestCleanTempAgesEntriesOneByOne(t *testing.T) {
	tmp := t.TempDir()
	old := time.Now().Add(-48 * time.Hour)
	files := []struct {
		path string
		aged bool // the file and every directory above it
		kept bool
	}{
		{"kernel.log", true, true},
		{"runs/a/run.json", true, true},
		{"trace/s1.jsonl", true, true}, // in keep
		{"stale.json", true, false},
		{"fresh.json", false, true},
		{"outputs/tool-output-1/exec-stdout.txt", true, false},
		// A new output does not keep an old one, nor an old directory
		// one still written to.
		{"outputs/tool-output-2/exec-stdout.txt", false, true},
		{"spill/pi-actors-output-1", true, false},
		{"spill/pi-actors-output-2", false, true},
	}
	for _, f := range files {
		p := filepath.Join(tmp, f.path)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range files {
		if f.aged {
			for d := f.path; d != "."; d = filepath.Dir(d) {
				os.Chtimes(filepath.Join(tmp, d), old, old)
			}
		}
	}
	// Every directory aged, as a day without a new entry leaves them.
	for _, d := range []string{"outputs", "outputs/tool-output-2", "spill"} {
		os.Chtimes(filepath.Join(tmp, d), old, old)
	}
	if n := runs.CleanTemp(tmp, 24*time.Hour, "trace"); n != 3 {
		t.Errorf("CleanTemp removed %d entries, want 3", n)
	}
	for _, f := range files {
		_, err := os.Stat(filepath.Join(tmp, f.path))
		if f.kept && err != nil {
			t.Errorf("%s removed: %v", f.path, err)
		}
		if !f.kept && err == nil {
			t.Errorf("stale %s kept", f.path)
		}
	}
}
