package mailbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAppendWake(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "wake.jsonl")
	w, err := AppendWake(path, Wake{Actor: "room:r1/main", Reason: WakeRoomMessage, Metadata: map[string]any{"type": "t"}})
	if err != nil {
		t.Fatal(err)
	}
	if w.Actor != "room:r1" || len(w.ID) != 36 || w.StateDir != dir || w.TS == "" {
		t.Fatalf("wake: %+v", w)
	}
	AppendWake(path, Wake{Actor: "run:r1", Reason: WakeRunMessage, ID: "fixed", StateDir: "/elsewhere", TS: "2024-01-01T00:00:00Z"})
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 || lines[1] != `{"actor":"run:r1","id":"fixed","reason":"run.message","state_dir":"/elsewhere","ts":"2024-01-01T00:00:00Z"}` {
		t.Fatalf("file:\n%s", data)
	}
	got, err := ParseWake([]byte(lines[0]))
	if err != nil || got.Actor != "room:r1" || got.Metadata["type"] != "t" {
		t.Fatalf("parse: %+v %v", got, err)
	}
	for _, bad := range []Wake{{Reason: "r"}, {Actor: "run:x"}, {Actor: " ", Reason: "r"}, {Actor: "nope", Reason: "r"}} {
		if _, err := AppendWake(path, bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("AppendWake(%+v): %v", bad, err)
		}
	}
	for _, bad := range []string{`{"actor":"run:x"}`, `{"reason":"r"}`, `nope`, `{"actor":1,"reason":"r"}`} {
		if _, err := ParseWake([]byte(bad)); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseWake(%s): %v", bad, err)
		}
	}
}

// TestWakeLimit: a wake.jsonl that grows past WakeLimit keeps only its
// newest records, whole lines, the latest included; the file never stays
// above the limit.
func TestWakeLimit(t *testing.T) {
	old := WakeLimit
	WakeLimit = 4096
	t.Cleanup(func() { WakeLimit = old })
	path := filepath.Join(t.TempDir(), "wake.jsonl")
	for i := range 500 {
		if _, err := AppendWake(path, Wake{Actor: "branch:r1/w", Reason: WakeBranchMessage, ID: fmt.Sprintf("w%03d", i)}); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(path); err != nil || fi.Size() > WakeLimit {
			t.Fatalf("after %d wakes: %v, size %d > %d", i+1, err, fi.Size(), WakeLimit)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	for _, l := range lines {
		if _, err := ParseWake([]byte(l)); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
	}
	if len(lines) >= 500 || !strings.Contains(lines[len(lines)-1], `"id":"w499"`) {
		t.Fatalf("%d lines, last %q: want the newest kept and the oldest dropped", len(lines), lines[len(lines)-1])
	}
}
