package mailbox

import (
	"errors"
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
