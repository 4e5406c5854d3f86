package runs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/mailbox"
)

// TestControlExpiryAndBranchCopies: the supervisor does not apply a
// control message that expired before it claimed it (it is marked failed
// and dead-lettered, once); a copy of a branch's message is never one of
// its control messages, whatever its type, and goes to the run's consumer.
func TestControlExpiryAndBranchCopies(t *testing.T) {
	dir := Dir(t.TempDir())
	inbox := mailbox.NewInbox(dir.Path(InboxFile))
	old := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339Nano)
	now := time.Now().UTC().Format(time.RFC3339Nano)
	err := mailbox.Append(dir.Path(InboxFile),
		map[string]any{"to": "run:r", "type": "control.cancel", "id": "late", "ttl_ms": 10, "received_at": old, "queued_at": old, "status": "queued"},
		map[string]any{"to": "branch:r/w", "type": "control.kill", "id": "copy", "received_at": now, "status": "queued"},
		map[string]any{"to": "run:r", "type": "control.restart", "id": "now", "received_at": now, "status": "queued"})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := claimControl(dir.Path(InboxFile))
	if err != nil || rec == nil || rec.ID() != "now" {
		t.Fatalf("claimControl = %v, %v; want the restart (the cancel expired, the kill is a branch copy)", rec, err)
	}
	if rec, err := claimControl(dir.Path(InboxFile)); err != nil || rec != nil {
		t.Fatalf("a second claimControl = %v, %v", rec, err)
	}
	recs, _, err := inbox.List(10)
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]string{}
	for _, r := range recs {
		status[r.ID()] = r.Status()
		if r.ID() == "late" && (r["dead_letter"] != "ttl_expired" || !strings.HasPrefix(r["error"].(string), "expired")) {
			t.Errorf("expired record: %v", r)
		}
	}
	if status["late"] != mailbox.StatusFailed || status["copy"] != mailbox.StatusQueued || status["now"] != mailbox.StatusHandled {
		t.Fatalf("statuses %v", status)
	}
	data, err := os.ReadFile(filepath.Join(string(dir), "dead_letters.jsonl"))
	if err != nil || strings.Count(string(data), "\n") != 1 || !strings.Contains(string(data), `"id":"late","reason":"ttl_expired"`) {
		t.Fatalf("dead letters: %s %v", data, err)
	}
	got, err := ClaimMessage(dir, "consumer")
	if err != nil || got == nil || got.ID() != "copy" {
		t.Fatalf("ClaimMessage = %v, %v; want the branch copy", got, err)
	}
}

// TestClaimSkipsOnlyFinished: a claim skips finished records without
// decoding them, but a record with an empty or missing status is queued
// (Record.Status) and is claimed, as is one written with spaces.
func TestClaimSkipsOnlyFinished(t *testing.T) {
	dir := Dir(t.TempDir())
	err := mailbox.Append(dir.Path(InboxFile),
		map[string]any{"to": "run:r", "type": "t", "id": "done", "status": "handled", "body": map[string]any{"status": "queued"}},
		map[string]any{"to": "run:r", "type": "t", "id": "empty", "status": ""},
		map[string]any{"to": "run:r", "type": "t", "id": "none"})
	if err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(dir.Path(InboxFile), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{ "to" : "run:r", "type" : "t", "id" : "spaced", "status" : "queued" }` + "\n")
	f.Close()
	var got []string
	for {
		rec, err := ClaimMessage(dir, "c")
		if err != nil {
			t.Fatal(err)
		}
		if rec == nil {
			break
		}
		got = append(got, rec.ID())
	}
	if strings.Join(got, ",") != "empty,none,spaced" {
		t.Fatalf("claimed %v", got)
	}
}

// ttl_ms counts from queued_at when a record has no received_at (as in a
// branch inbox): such a record expires too.
func TestExpiryFromQueuedAt(t *testing.T) {
	dir := Dir(t.TempDir())
	old := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339Nano)
	if err := mailbox.Append(dir.Path(InboxFile), map[string]any{"to": "run:r", "type": "control.cancel", "id": "q", "ttl_ms": 10, "queued_at": old, "status": "queued"}); err != nil {
		t.Fatal(err)
	}
	if got, err := claimControl(dir.Path(InboxFile)); err != nil || got != nil {
		t.Fatalf("applied %v (%v); want it expired", got, err)
	}
	if data, _ := os.ReadFile(filepath.Join(string(dir), "dead_letters.jsonl")); !strings.Contains(string(data), `"id":"q"`) {
		t.Fatalf("dead letters: %s", data)
	}
}
