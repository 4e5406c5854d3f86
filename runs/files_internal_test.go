package runs

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/internal/fsutil"
)

// metaHeadOf reads the identity fields of run.json as a full decode would,
// whether the line scanner takes the head or encoding/json does (a string
// with an escape, a file of another shape).
func TestMetaHeadOf(t *testing.T) {
	created := time.Date(2026, 11, 26, 8, 16, 49, 846293907, time.UTC)
	for name, m := range map[string]Meta{
		"plain":   {Run: "r1", Address: "run:r1", StateDir: "/a/b/r1", Cwd: "/w", CreatedAt: created, OwnerID: "s1", Pid: 42, PidStart: 7, Recipe: "rec", Tool: "tool", Template: map[string]any{"template": "true"}},
		"escaped": {Run: "r2", Address: "run:r2", StateDir: `/a/"q"/r2`, Cwd: "/w\\x", CreatedAt: created, OwnerID: "s\t2", Pid: 1, Template: "x"},
		"sparse":  {Run: "r3", Address: "run:r3", StateDir: "/r3", CreatedAt: created, Template: []any{"a", "b"}},
		"unicode": {Run: "r4", Address: "run:r4", StateDir: "/ü/r4", CreatedAt: created, OwnerID: "sé", Pid: 9, PidStart: 99, Template: "y"},
	} {
		data, err := fsutil.MarshalIndent(&m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := metaHeadOf(data, "run.json")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := Meta{Run: m.Run, Address: m.Address, StateDir: m.StateDir, CreatedAt: m.CreatedAt, OwnerID: m.OwnerID, Pid: m.Pid, PidStart: m.PidStart, Recipe: m.Recipe, Tool: m.Tool}
		if got.Run != want.Run || got.Address != want.Address || got.StateDir != want.StateDir || !got.CreatedAt.Equal(want.CreatedAt) ||
			got.OwnerID != want.OwnerID || got.Pid != want.Pid || got.PidStart != want.PidStart || got.Recipe != want.Recipe || got.Tool != want.Tool {
			t.Errorf("%s: got %+v, want %+v", name, *got, want)
		}
	}
	if _, ok := scanMetaHead([]byte("{\n  \"run\": \"a\\\"b\",")); ok {
		t.Error("the scanner took a string with an escape")
	}
	if _, err := metaHeadOf([]byte(`{"run":"compact","pid":3,"template":"t"}`), "run.json"); err != nil {
		t.Errorf("compact run.json: %v", err)
	}
}

// scanResultStatus reads status, code, reason and completedAt as a decode
// would, past fields it does not read (escaped or not).
func TestScanResultStatus(t *testing.T) {
	done := time.Date(2026, 11, 26, 8, 16, 50, 5, time.UTC)
	for _, r := range []Result{
		{Status: StatusDone, Code: 0, Command: "echo run 1 && sleep 0.1", CompletedAt: done},
		{Status: StatusFailed, Code: 3, Command: `sh -c "exit 3"`, Error: "exit 3 from \"sh\"\nline", Reason: "start_limit", Restarts: 2, CompletedAt: done},
		{Status: StatusKilled, Code: 137, Killed: true, Reason: "control.kill", CompletedAt: done},
	} {
		data, err := fsutil.MarshalIndent(&r)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := scanResultStatus(data)
		if !ok || got.Status != r.Status || got.Code != r.Code || got.Reason != r.Reason || !got.CompletedAt.Equal(r.CompletedAt) {
			t.Errorf("scan %s: %+v, %v", data, got, ok)
		}
	}
	if _, ok := scanResultStatus([]byte(`{"status":"done","code":0,"completedAt":"2026-11-26T08:16:50Z"}`)); ok {
		t.Error("the scanner took a compact document")
	}
	if _, ok := scanResultStatus([]byte("{\n  \"status\": \"d\\u006fne\",\n  \"completedAt\": \"2026-11-26T08:16:50Z\"\n}\n")); ok {
		t.Error("the scanner took an escaped status")
	}
}

// The rebuild's reader gives an ended run's index entry as load does, and
// leaves a live run to load.
func TestRebuildReaderQuick(t *testing.T) {
	agent := t.TempDir()
	root := Root(agent)
	ended, live := StateDirFor(agent, "ended"), StateDirFor(agent, "live")
	for _, d := range []Dir{ended, live} {
		if err := os.MkdirAll(string(d), 0o700); err != nil {
			t.Fatal(err)
		}
		m := &Meta{Run: filepath.Base(string(d)), Address: "run:" + filepath.Base(string(d)), StateDir: string(d), CreatedAt: time.Now().UTC(), OwnerID: "s1", Template: "true"}
		if err := d.WriteJSON(RunFile, m); err != nil {
			t.Fatal(err)
		}
	}
	if err := ended.WriteJSON(ResultFile, &Result{Status: StatusFailed, Code: 2, Error: "boom \"x\"", CompletedAt: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	r := newRebuildReader(root)
	defer r.close()
	in := r.quick("ended", ended)
	want, err := loadHead(ended)
	if in == nil || err != nil {
		t.Fatalf("quick %v, load %v", in, err)
	}
	if EntryOf(in) != EntryOf(want) {
		t.Fatalf("entry %+v, want %+v", EntryOf(in), EntryOf(want))
	}
	if r.quick("live", live) != nil {
		t.Fatal("quick took a run without result.json")
	}
	// A result that names its run gives the same entry from that one
	// file: with run.json gone, quick still reads it.
	m, _ := ended.Meta()
	m.Recipe, m.Tool = "r1", "t1"
	if err := ended.WriteJSON(RunFile, m); err != nil {
		t.Fatal(err)
	}
	if err := ended.WriteJSON(ResultFile, want.Result.Identify(m)); err != nil {
		t.Fatal(err)
	}
	if want, err = loadHead(ended); err != nil {
		t.Fatal(err)
	}
	os.Remove(ended.Path(RunFile))
	if in = r.quick("ended", ended); in == nil || EntryOf(in) != EntryOf(want) {
		t.Fatalf("quick of a result that names its run: %+v, want %+v", in, EntryOf(want))
	}
}
