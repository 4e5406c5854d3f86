package runs

import (
	"os"
	"path/filepath"
	"reflect"
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
