package runs

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Rebuild finds every run directly under the runs root — ended, live,
// archived — skips what is not a run, and agrees with Load on each
// entry.
func TestRebuildFindsEveryRun(t *testing.T) {
	agent := t.TempDir()
	x := NewIndex(agent)
	mk := func(path string, m *Meta, res *Result) Dir {
		d := Dir(filepath.Join(x.Root, path))
		id := filepath.Base(path)
		if err := os.MkdirAll(string(d), 0o700); err != nil {
			t.Fatal(err)
		}
		if m != nil {
			m.Run, m.Address, m.StateDir = id, "run:"+id, string(d)
			m.Template, m.Values = map[string]any{"template": "sleep 1"}, map[string]any{"run_id": id}
			if err := d.WriteJSON(RunFile, m); err != nil {
				t.Fatal(err)
			}
		}
		if res != nil {
			if err := d.WriteJSON(ResultFile, res); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	created := time.Now().Add(-time.Hour).UTC()
	mk("done", &Meta{CreatedAt: created, OwnerID: "s1", Recipe: "r1", Tool: "t1", Pid: 1 << 22}, &Result{Status: StatusDone, CompletedAt: created.Add(time.Minute)})
	mk("failed", &Meta{CreatedAt: created, OwnerID: "s2", Pid: 1 << 22}, &Result{Code: 3})
	// A result that names its run (as supervisors write it now) is read
	// alone; the others (older) with run.json's head.
	ident := &Meta{Run: "ident", CreatedAt: created, OwnerID: "s3", Recipe: "r3", Tool: "t3", Pid: 1 << 22}
	mk("ident", ident, (&Result{Status: StatusKilled, Code: 137, Reason: "control.kill", CompletedAt: created.Add(2 * time.Minute)}).Identify(ident))
	mk("live", &Meta{CreatedAt: created, OwnerID: "s1", Pid: os.Getpid(), PidStart: StartTime(os.Getpid())}, nil)
	mk("lost", &Meta{CreatedAt: created, Pid: 0}, nil)
	arch := mk("arch", nil, nil)
	adir := mk("archived/arch", &Meta{CreatedAt: created, OwnerID: "s1"}, &Result{Status: StatusDone})
	if err := arch.WriteJSON(TombstoneFile, &Tombstone{Archived: true, ArchiveDir: string(adir), Run: "arch", Status: StatusDone}); err != nil {
		t.Fatal(err)
	}
	mk("not-a-run", nil, nil)
	mk("tmp/x", &Meta{CreatedAt: created}, nil)
	mk(".hidden", &Meta{CreatedAt: created}, nil)
	os.WriteFile(filepath.Join(x.Root, "stray.json"), []byte("{}"), 0o600)

	got, err := x.Rebuild()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"done": StatusDone, "failed": StatusFailed, "ident": StatusKilled, "live": StatusRunning, "lost": StatusExited, "arch": StatusArchived}
	if len(got) != len(want) {
		t.Fatalf("entries %+v, want runs %v", got, want)
	}
	for _, e := range got {
		if want[e.Run] != e.Status {
			t.Errorf("%s: status %q, want %q", e.Run, e.Status, want[e.Run])
		}
		in, err := Load(Dir(e.StateDir))
		if err != nil {
			t.Fatal(err)
		}
		full := EntryOf(in)
		if full.Status != e.Status || full.OwnerID != e.OwnerID || full.Recipe != e.Recipe || full.Tool != e.Tool || !full.UpdatedAt.Equal(e.UpdatedAt) {
			t.Errorf("%s: rebuilt %+v, Load gives %+v", e.Run, e, full)
		}
	}
	// The journal was written: a plain read gives the same runs.
	again, err := x.Entries()
	if err != nil || len(again) != len(want) {
		t.Errorf("journal after rebuild: %d entries, %v", len(again), err)
	}
}

// metaHead agrees with a full read of run.json: for the supervisor's own
// layout (decoded up to "template") and for any other key order or
// formatting (decoded whole).
func TestMetaHeadAgreesWithMeta(t *testing.T) {
	created := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	full := &Meta{Run: "r1", Address: "run:r1", StateDir: "/x/r1", Cwd: "/w", CreatedAt: created, OwnerID: "s1", Pid: 42, PidStart: 7,
		Recipe: "rec", RecipeFile: "/r/rec.json", Tool: "tool-a", Template: map[string]any{"template": "echo \n  \"template\": {x}"}, Values: map[string]any{"a": 1}}
	want := Meta{Run: full.Run, Address: full.Address, StateDir: full.StateDir, CreatedAt: full.CreatedAt, OwnerID: full.OwnerID,
		Pid: full.Pid, PidStart: full.PidStart, Recipe: full.Recipe, Tool: full.Tool}
	check := func(name string, write func(Dir)) {
		t.Helper()
		d := Dir(t.TempDir())
		write(d)
		got, err := d.metaHead()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got.Run != want.Run || got.Address != want.Address || got.StateDir != want.StateDir || !got.CreatedAt.Equal(want.CreatedAt) ||
			got.OwnerID != want.OwnerID || got.Pid != want.Pid || got.PidStart != want.PidStart || got.Recipe != want.Recipe || got.Tool != want.Tool {
			t.Errorf("%s: metaHead %+v, want %+v", name, *got, want)
		}
	}
	check("supervisor layout", func(d Dir) {
		if err := d.WriteJSON(RunFile, full); err != nil {
			t.Fatal(err)
		}
	})
	// Sorted keys put "tool" after "template": the head alone would miss it.
	check("sorted keys", func(d Dir) {
		b, _ := json.Marshal(full)
		var m map[string]any
		json.Unmarshal(b, &m)
		b, _ = json.MarshalIndent(m, "", "  ")
		os.WriteFile(d.Path(RunFile), b, 0o600)
	})
	check("compact", func(d Dir) {
		b, _ := json.Marshal(full)
		os.WriteFile(d.Path(RunFile), b, 0o600)
	})
	d := Dir(t.TempDir())
	if _, err := d.metaHead(); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing run.json: %v", err)
	}
}

// A rebuild reports its progress: (0, total) first, then every run dir
// once, ending at (total, total).
func TestRebuildProgress(t *testing.T) {
	agent := t.TempDir()
	x := NewIndex(agent)
	for i := 0; i < 25; i++ {
		id := "r" + string(rune('a'+i))
		d := Dir(filepath.Join(x.Root, id))
		os.MkdirAll(string(d), 0o700)
		m := &Meta{Run: id, Address: "run:" + id, StateDir: string(d), CreatedAt: time.Now().UTC()}
		if err := d.WriteJSON(RunFile, m); err != nil {
			t.Fatal(err)
		}
	}
	var calls [][2]int
	var mu = make(chan struct{}, 1)
	x.Progress = func(done, total int) {
		mu <- struct{}{}
		calls = append(calls, [2]int{done, total})
		<-mu
	}
	if _, err := x.Rebuild(); err != nil {
		t.Fatal(err)
	}
	if len(calls) != 26 || calls[0] != [2]int{0, 25} {
		t.Fatalf("progress calls: %v", calls)
	}
	maxDone := 0
	for _, c := range calls[1:] {
		maxDone = max(maxDone, c[0])
		if c[1] != 25 {
			t.Fatalf("total changed: %v", calls)
		}
	}
	if maxDone != 25 {
		t.Errorf("progress ended at %d of 25", maxDone)
	}
}

// The index's own encoder writes each entry byte for byte as
// encoding/json does: plain strings, escapes, HTML characters, invalid
// UTF-8, U+2028, optional fields left out, times of any zone and
// precision, and years encoding/json refuses.
func FuzzAppendEntry(f *testing.F) {
	f.Add("r1", "/a/runs/r1", StatusDone, "", "", "", int64(1795774579411000000), int64(0), false)
	f.Add("r\"1\\", "/a/<b>&c", "x\ny\x00\x7f", "s\u2028", "\xff\xfe", "ünï", int64(-1), int64(3600), true)
	f.Add("r", "d", "s", "o", "re", "t", int64(1)<<62, int64(-7200), false)
	f.Add("<", ">", "&", "\u2029", "\t", "\"", int64(7), int64(1), false)
	f.Fuzz(func(t *testing.T, run, dir, status, owner, recipe, tool string, nanos, offset int64, removed bool) {
		at := time.Unix(0, nanos).In(time.FixedZone("z", int(offset%(26*3600))))
		e := Entry{Run: run, StateDir: dir, Status: status, OwnerID: owner, Recipe: recipe, Tool: tool, UpdatedAt: at, Removed: removed}
		want, err := json.Marshal(e)
		got := appendEntry(nil, &e)
		if err != nil {
			return // a year encoding/json refuses: the entry is not written either way
		}
		if string(got) != string(want) {
			t.Fatalf("appendEntry\n%s\nencoding/json\n%s", got, want)
		}
	})
}

// An entry recorded while a rebuild scans the run dirs is in the index
// after the rebuild: the rebuild holds the writers' lock from its scan to
// its rewrite. (A snapshot taken before the record dropped it: a spawn
// just after the kernel started, while its retention pass rebuilt an
// empty index, was missing from every listing.)
func TestRecordDuringRebuildIsKept(t *testing.T) {
	agent := t.TempDir()
	x := NewIndex(agent)
	for _, id := range []string{"r1", "r2", "r3"} {
		d := Dir(filepath.Join(x.Root, id))
		os.MkdirAll(string(d), 0o700)
		if err := d.WriteJSON(ResultFile, &Result{Run: id, Status: StatusDone, CompletedAt: time.Now().UTC()}); err != nil {
			t.Fatal(err)
		}
	}
	recorded := make(chan error, 1)
	x.Progress = func(done, total int) {
		if done != 0 {
			return
		}
		go func() {
			recorded <- NewIndex(agent).Record(Entry{Run: "late", StateDir: filepath.Join(x.Root, "late"), Status: StatusRunning})
		}()
		// The record goes first if nothing holds it back.
		select {
		case err := <-recorded:
			recorded <- err
		case <-time.After(300 * time.Millisecond):
		}
	}
	if _, err := x.Rebuild(); err != nil {
		t.Fatal(err)
	}
	if err := <-recorded; err != nil {
		t.Fatal(err)
	}
	es, err := NewIndex(agent).Entries()
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]bool{}
	for _, e := range es {
		runs[e.Run] = true
	}
	if !runs["late"] || !runs["r1"] || len(es) != 4 {
		t.Fatalf("index after a rebuild with a record during its scan: %+v", es)
	}
}
