package mailbox

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/internal/fsutil"
)

func TestUpdateHoldsTheLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "room", "messages.jsonl")
	var saved *Tx
	err := Update(path, func(tx *Tx) error {
		saved = tx
		if err := tx.Append(map[string]any{"id": "a", "n": 1}, map[string]any{"id": "b"}); err != nil {
			return err
		}
		if rec, err := tx.Find("b"); err != nil || rec.ID() != "b" {
			t.Fatalf("find: %v %v", rec, err)
		}
		if rec, _ := tx.Find("zz"); rec != nil {
			t.Fatalf("found %v", rec)
		}
		// Another writer waits for the transaction.
		if _, err := fsutil.LockDir(LockPath(path), 20*time.Millisecond); !errors.Is(err, fsutil.ErrLockTimeout) {
			t.Fatalf("the lock is not held: %v", err)
		}
		return tx.Rewrite(func(lines []Line) ([]Line, error) { return lines[1:], nil })
	})
	if err != nil {
		t.Fatal(err)
	}
	lines, _ := Read(path)
	if len(lines) != 1 || Record(lines[0].Value).ID() != "b" {
		t.Fatalf("lines: %+v", lines)
	}
	if err := saved.Append(map[string]any{}); !errors.Is(err, errTxDone) {
		t.Fatalf("use after Update: %v", err)
	}
	// A lazy follower counts lines without decoding them.
	f := &Follower{Path: path, Lazy: true}
	Append(path, map[string]any{"id": "c"})
	got, _, _ := f.Next()
	if len(got) != 2 || got[1].Value != nil || f.Lines() != 2 {
		t.Fatalf("lazy: %+v lines=%d", got, f.Lines())
	}
	got[1].Decode()
	if Record(got[1].Value).ID() != "c" {
		t.Fatalf("decoded: %+v", got[1])
	}
}

// One step under a state directory's lock: an inbox record, its wakes and
// an event in another file; a file of another directory is refused.
func TestTxSeveralFiles(t *testing.T) {
	dir := t.TempDir()
	in := NewInbox(filepath.Join(dir, "inbox.jsonl"))
	err := Update(in.Path, func(tx *Tx) error {
		rec, dup, err := in.AppendIn(tx, Envelope{To: "run:x", Type: "t", ID: "m1"})
		if err != nil || dup || rec.ID() != "m1" {
			t.Fatalf("append: %v %v %v", rec, dup, err)
		}
		if _, dup, _ := in.AppendIn(tx, Envelope{To: "run:x", Type: "t", ID: "m1"}); !dup {
			t.Fatal("a caller id already there was appended again")
		}
		ws, err := AppendWakes(tx, filepath.Join(dir, "wake.jsonl"), Wake{Actor: "run:x", Reason: WakeRunMessage}, Wake{Actor: "branch:x/b", Reason: WakeBranchMessage})
		if err != nil || len(ws) != 2 || ws[0].ID == "" || ws[1].StateDir != dir {
			t.Fatalf("wakes: %+v %v", ws, err)
		}
		if err := tx.AppendFile(filepath.Join(dir, "events.jsonl"), map[string]any{"event": "e"}); err != nil {
			t.Fatal(err)
		}
		if err := tx.AppendFile(filepath.Join(t.TempDir(), "x.jsonl"), map[string]any{}); err == nil {
			t.Fatal("a file of another directory was appended under this lock")
		}
		if _, _, err := NewInbox(filepath.Join(t.TempDir(), "inbox.jsonl")).AppendIn(tx, Envelope{To: "run:y", Type: "t"}); err == nil {
			t.Fatal("an inbox of another directory was appended under this lock")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int{"inbox.jsonl": 1, "wake.jsonl": 2, "events.jsonl": 1} {
		if lines, _ := Read(filepath.Join(dir, name)); len(lines) != want {
			t.Fatalf("%s: %d lines, want %d", name, len(lines), want)
		}
	}
	// AppendNewIn trusts the caller: it does not search the inbox.
	Update(in.Path, func(tx *Tx) error {
		_, err := in.AppendNewIn(tx, Envelope{To: "run:x", Type: "t", ID: "m2"})
		return err
	})
	if lines, _ := Read(in.Path); len(lines) != 2 || Record(lines[1].Value).ID() != "m2" {
		t.Fatalf("inbox: %+v", lines)
	}
}

// RewriteLazy hands lines over undecoded, Set decodes what it edits, and a
// malformed line still cannot be dropped.
func TestRewriteLazy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "inbox.jsonl")
	if err := Append(path, map[string]any{"id": "a", "status": "handled"}, map[string]any{"id": "b", "status": "queued", "n": 1}); err != nil {
		t.Fatal(err)
	}
	appendRaw(t, path, "not json\n")
	err := RewriteLazy(path, func(lines []Line) ([]Line, error) {
		for _, l := range lines {
			if l.Value != nil || l.Err != nil {
				t.Fatalf("line %d came decoded", l.N)
			}
		}
		if s, ok := lines[0].Peek("status"); !ok || s != "handled" {
			t.Fatalf("peek: %q %v", s, ok)
		}
		if err := lines[1].Set("status", StatusClaimed); err != nil {
			return nil, err
		}
		if lines[1].Value["n"] == nil || lines[1].Value["id"] != "b" {
			t.Fatalf("Set on a lazy line lost its fields: %v", lines[1].Value)
		}
		return lines, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	lines, _ := Read(path)
	if len(lines) != 3 || Record(lines[1].Value).Status() != StatusClaimed || lines[2].Err == nil {
		t.Fatalf("after: %+v", lines)
	}
	err = RewriteLazy(path, func(lines []Line) ([]Line, error) { return lines[:2], nil })
	if err == nil {
		t.Fatal("a lazy rewrite dropped a malformed line")
	}
	if err := RewriteLazy(path, func(lines []Line) ([]Line, error) { return lines[1:], nil }); err != nil {
		t.Fatalf("dropping a record: %v", err)
	}
}

// appendRaw appends bytes to a file as they are.
func appendRaw(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}
