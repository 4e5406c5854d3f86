package runs

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// A process that keeps its indexes (KeepIndexes, the MCP server) lists
// what a fresh read lists, through appends, removals, a torn line still
// being written, a compaction and a deleted index file.
func TestKeptIndexListsWhatTheFileHolds(t *testing.T) {
	keepIndexes.Store(true)
	t.Cleanup(func() { keepIndexes.Store(false) })
	x := NewIndex(t.TempDir())
	at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	entry := func(run, status string) Entry {
		at = at.Add(time.Second)
		return Entry{Run: run, StateDir: filepath.Join(x.Root, run), Status: status, UpdatedAt: at}
	}
	check := func(step string, want ...string) {
		t.Helper()
		kept, err := x.Entries()
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		var runs []string
		for _, e := range kept {
			runs = append(runs, e.Run)
		}
		if !reflect.DeepEqual(runs, want) {
			t.Fatalf("%s: kept index lists %v, want %v", step, runs, want)
		}
		m, err := x.read()
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if fresh := sorted(m); !reflect.DeepEqual(kept, fresh) {
			t.Fatalf("%s: kept index %+v, a fresh read %+v", step, kept, fresh)
		}
	}
	if err := x.Record(entry("a", StatusRunning)); err != nil {
		t.Fatal(err)
	}
	check("first record", "a")
	x.Record(entry("b", StatusDone), entry("a", StatusDone))
	check("appended", "a", "b")
	x.Record(Entry{Run: "b", StateDir: filepath.Join(x.Root, "b"), Removed: true})
	check("removed", "a")

	f, err := os.OpenFile(x.path(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"run":"c","state_dir":"` + filepath.Join(x.Root, "c") + `","status":"done",`)
	// A torn line: a fresh read skips it too.
	check("a line being written", "a")
	f.WriteString(`"updated_at":"2026-11-27T13:00:00Z"}` + "\n")
	f.Close()
	check("the line finished", "c", "a")

	x.Record(entry("d", StatusFailed))
	if err := x.Compact(); err != nil {
		t.Fatal(err)
	}
	check("compacted", "c", "d", "a")
	x.Record(entry("e", StatusDone))
	check("appended after the compaction", "c", "e", "d", "a")

	// Gone: rebuilt from the state dirs, of which there are none here.
	if err := os.Remove(x.path()); err != nil {
		t.Fatal(err)
	}
	if list, err := x.Entries(); err != nil || len(list) != 0 {
		t.Fatalf("after the index was removed: %v %v", list, err)
	}
}

// A process that keeps its indexes keeps what it decoded of each live
// run's run.json and progress.json while their files are unchanged,
// lists what a fresh load lists after they change, gives each caller its
// own copy, and forgets a run once it is no longer listed live.
func TestKeptListingsReadOnlyChangedRunFiles(t *testing.T) {
	keepIndexes.Store(true)
	t.Cleanup(func() { keepIndexes.Store(false) })
	x := NewIndex(t.TempDir())
	pid := os.Getpid() // a live "supervisor": this test
	dirs := map[string]Dir{}
	for _, run := range []string{"a", "b"} {
		d := Dir(filepath.Join(x.Root, run))
		dirs[run] = d
		if err := os.MkdirAll(string(d), 0o700); err != nil {
			t.Fatal(err)
		}
		m := &Meta{Run: run, Address: "run:" + run, StateDir: string(d), Pid: pid, PidStart: StartTime(pid), Recipe: "r1", CreatedAt: time.Now().UTC()}
		if err := d.WriteJSON(RunFile, m); err != nil {
			t.Fatal(err)
		}
		if err := d.WriteJSON(ProgressFile, &Progress{Phase: "running"}); err != nil {
			t.Fatal(err)
		}
		if err := x.Record(Entry{Run: run, StateDir: string(d), Status: StatusRunning, UpdatedAt: time.Now().UTC()}); err != nil {
			t.Fatal(err)
		}
		settle(d)
	}
	kept := func() map[string]*Info {
		t.Helper()
		list, err := x.List("all")
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]*Info{}
		for _, in := range list {
			out[in.Meta.Run] = in
		}
		return out
	}
	same := func(step string) map[string]*Info {
		t.Helper()
		got := kept()
		for run, in := range got {
			fresh, err := Load(in.Dir)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(in, fresh) {
				t.Fatalf("%s: run %s listed %+v %+v, a fresh load %+v %+v", step, run, in.Meta, in.Progress, fresh.Meta, fresh.Progress)
			}
		}
		return got
	}
	got := same("first listing")
	if len(got) != 2 || got["a"].Status != StatusRunning {
		t.Fatalf("first listing: %+v", got)
	}
	// A caller's changes stay its own.
	got["a"].Meta.Recipe, got["a"].Progress.Phase = "changed", "changed"
	same("after a caller changed its copy")

	// Changed files are read again: run.json rewritten, the session
	// suspended the run (progress.json).
	m, _ := dirs["a"].Meta()
	m.Recipe = "r2"
	dirs["a"].WriteJSON(RunFile, m)
	dirs["a"].WriteJSON(ProgressFile, &Progress{Phase: "running", SuspendedAt: time.Now().UTC()})
	got = same("files rewritten")
	if got["a"].Meta.Recipe != "r2" || got["a"].Status != StatusSuspended {
		t.Fatalf("files rewritten: %+v, status %s", got["a"].Meta, got["a"].Status)
	}
	dirs["a"].WriteJSON(ProgressFile, &Progress{Phase: "running"})
	same("resumed")

	// A file written within racyStamp is read again even behind an
	// identical stamp (same inode, size and mtime): a coarse clock.
	path := dirs["a"].Path(RunFile)
	body, _ := os.ReadFile(path)
	st, _ := os.Stat(path)
	os.WriteFile(path, []byte(strings.Replace(string(body), `"r2"`, `"r3"`, 1)), 0o600)
	os.Chtimes(path, st.ModTime(), st.ModTime())
	if r := kept()["a"].Meta.Recipe; r != "r3" {
		t.Fatalf("a recent stamp trusted: recipe %q, want r3", r)
	}

	// A settled file is not read again while its stamp holds: content
	// changed behind an identical stamp still lists as kept.
	path = dirs["b"].Path(RunFile)
	st, _ = os.Stat(path)
	body, _ = os.ReadFile(path)
	if err := os.WriteFile(path, []byte(strings.Replace(string(body), `"r1"`, `"r9"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(path, st.ModTime(), st.ModTime())
	if r := kept()["b"].Meta.Recipe; r != "r1" {
		t.Fatalf("an unchanged stamp: run.json read again (recipe %q)", r)
	}

	// A run no longer live (its supervisor gone) is forgotten.
	m, _ = dirs["b"].Meta()
	m.Pid, m.PidStart = 1<<22+1, 1
	dirs["b"].WriteJSON(RunFile, m)
	x.Record(Entry{Run: "b", StateDir: string(dirs["b"]), Status: StatusExited, UpdatedAt: time.Now().UTC()})
	kept()
	lf := &memoFor(x.path()).live
	lf.mu.Lock()
	_, haveB := lf.dirs[dirs["b"]]
	n := len(lf.dirs)
	lf.mu.Unlock()
	if haveB || n != 1 {
		t.Fatalf("kept %d runs' files (b among them: %v), want only a's", n, haveB)
	}
}

// settle dates a run's run.json and progress.json a minute back, as files
// written long before a listing are (racyStamp).
func settle(d Dir) {
	old := time.Now().Add(-time.Minute)
	for _, f := range []string{RunFile, ProgressFile} {
		os.Chtimes(d.Path(f), old, old)
	}
}
