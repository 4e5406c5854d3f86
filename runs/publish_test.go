package runs_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/internal/fsutil"
	"github.com/pi-actors/pi-actors/runs"
)

// A new state directory appears with its run.json, written with the
// supervisor's pid; in a batch (spec.Dirs) the parent is left for the
// caller to sync once; no staging directory stays behind.
func TestStartPublishesStateDir(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	dirs := &fsutil.DirSyncs{}
	sp := spec(agent, "pub", "{bin} exit 0", nil)
	sp.Dirs = dirs
	r := start(t, agent, sp)
	m, err := r.dir.Meta()
	if err != nil {
		t.Fatal(err)
	}
	if m.Pid != r.meta.Pid || m.PidStart == 0 || m.Pid != r.proc.Pid {
		t.Fatalf("run.json pid %d (start %d), supervisor %d", m.Pid, m.PidStart, r.proc.Pid)
	}
	if res := r.wait(10 * time.Second); res == nil || res.Status != runs.StatusDone {
		t.Fatalf("result %+v", res)
	}
	ents, _ := os.ReadDir(runs.Root(agent))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
	if err := dirs.Sync(); err != nil {
		t.Fatalf("sync the batch's parent: %v", err)
	}
}

// Seed writes into the staging directory, before the supervisor starts:
// its files appear with run.json. A seed that fails fails the start with
// nothing published and nothing started; a reused state directory is not
// seeded.
func TestStartSeed(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	final := runs.StateDirFor(agent, "seeded")
	sp := spec(agent, "seeded", "{bin} exit 0", nil)
	var seededIn string
	sp.Seed = func(stage string) error {
		seededIn = stage
		if _, err := os.Stat(string(final)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("seeded after the state dir was published: %v", err)
		}
		return os.WriteFile(filepath.Join(stage, "seed.txt"), []byte("x"), 0o600)
	}
	r := start(t, agent, sp)
	if seededIn == "" || seededIn == string(final) || filepath.Dir(seededIn) != filepath.Dir(string(final)) {
		t.Fatalf("seeded in %q, want a staging dir beside %s", seededIn, final)
	}
	if b, err := os.ReadFile(final.Path("seed.txt")); err != nil || string(b) != "x" {
		t.Fatalf("seeded file: %q %v", b, err)
	}
	if res := r.wait(10 * time.Second); res == nil || res.Status != runs.StatusDone {
		t.Fatalf("result %+v", res)
	}
	// The same id again reuses the directory: no seed.
	sp.Seed = func(string) error { t.Error("a reused state dir was seeded"); return nil }
	r = start(t, agent, sp)
	r.wait(10 * time.Second)

	sp = spec(agent, "badseed", "{bin} exit 0", nil)
	sp.Seed = func(string) error { return errors.New("disk on fire") }
	if _, _, err := runs.Start(agent, sp); err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("Start with a failing seed: %v", err)
	}
	m, err := runs.StateDirFor(agent, "badseed").Meta()
	if err != nil || m.Pid != 0 {
		t.Fatalf("the failed start's record: %+v %v (want pid 0: no supervisor started)", m, err)
	}
	ents, _ := os.ReadDir(runs.Root(agent))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// A start that fails leaves a whole record: run.json (pid 0), a run.failed
// event and a failed result, in a directory that appeared whole.
func TestStartFailureLeavesRecord(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	sp := spec(agent, "nosup", "{bin} exit 0", nil)
	sp.Supervisor = []string{filepath.Join(agent, "no-such-supervisor")}
	sp.DraftRecipe = filepath.Join(agent, "recipes", "drafts", "nosup.json") // the kernel deletes it
	if _, _, err := runs.Start(agent, sp); err == nil {
		t.Fatal("Start with a missing supervisor succeeded")
	}
	dir := runs.StateDirFor(agent, "nosup")
	m, err := dir.Meta()
	if err != nil || m.Pid != 0 || m.Run != "nosup" {
		t.Fatalf("run.json %+v, %v", m, err)
	}
	if full, _ := runs.Load(dir); full == nil || full.Meta.DraftRecipe != "" {
		t.Errorf("the record names the draft of a run that never ran: %+v", full)
	}
	if res := dir.Result(); res == nil || res.Status != runs.StatusFailed || res.Reason != "start_failed" {
		t.Fatalf("result %+v", res)
	}
}

// CleanStaging removes staging directories (a killed kernel's) and nothing
// else.
func TestCleanStaging(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	root := runs.Root(agent)
	for _, d := range []string{".r1.new-123", ".r2.new-9", "r3", ".hidden-run"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if n := runs.CleanStaging(agent, 0); n != 2 {
		t.Fatalf("removed %d, want 2", n)
	}
	for _, d := range []string{"r3", ".hidden-run"} {
		if _, err := os.Stat(filepath.Join(root, d)); err != nil {
			t.Errorf("%s: %v", d, err)
		}
	}
	if _, err := os.Stat(filepath.Join(root, ".r1.new-123")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("staging dir kept: %v", err)
	}
}

// An archive a crash cut between its two renames (the state dir moved
// to the archive, the staged tombstone not yet in its place) is finished
// by the next kernel's CleanStaging: the tombstone takes the state dir's
// place. A staged tombstone whose archive never happened is removed.
func TestCleanStagingFinishesArchive(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	root := runs.Root(agent)
	archive := filepath.Join(root, "archived", "gone-2026-11-29T20-00-00Z")
	if err := os.MkdirAll(archive, 0o700); err != nil {
		t.Fatal(err)
	}
	stage := func(name, run string) {
		d := filepath.Join(root, name)
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		tomb := runs.Tombstone{Archived: true, ArchiveDir: archive, OriginalStateDir: filepath.Join(root, run), Run: run, Status: runs.StatusDone}
		if err := runs.Dir(d).WriteJSON(runs.TombstoneFile, tomb); err != nil {
			t.Fatal(err)
		}
	}
	stage(".gone.archiving-1", "gone")
	stage(".kept.archiving-2", "kept")
	if err := os.MkdirAll(filepath.Join(root, "kept"), 0o700); err != nil { // its archive never happened
		t.Fatal(err)
	}
	if n := runs.CleanStaging(agent, 0); n != 2 {
		t.Fatalf("CleanStaging handled %d, want 2", n)
	}
	in, err := runs.Load(runs.Dir(filepath.Join(root, "gone")))
	if err != nil || in.Status != runs.StatusArchived {
		t.Fatalf("gone after the repair: %+v %v", in, err)
	}
	for _, d := range []string{".gone.archiving-1", ".kept.archiving-2"} {
		if _, err := os.Stat(filepath.Join(root, d)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left: %v", d, err)
		}
	}
}
