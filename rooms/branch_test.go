package rooms

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/mailbox"
)

func send(t *testing.T, dir, to string, body any) *Delivery {
	t.Helper()
	d, err := SendBranch(dir, mailbox.Envelope{To: to, Type: "task.assign", From: "run:r", Body: body}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestBranchClaimDone(t *testing.T) {
	dir := t.TempDir()
	if rec, err := ClaimBranch(dir, "branch:r/w", "w1", 0); rec != nil || err != nil {
		t.Fatalf("claim from nothing: %v %v", rec, err)
	}
	d1 := send(t, dir, "branch:r/w", "one")
	send(t, dir, "branch:r/w", "two")
	rec, err := ClaimBranch(dir, "branch:r/w", "w1", os.Getpid())
	if err != nil || rec.ID() != d1.InboxID || rec.Status() != "claimed" || rec["claimed_by"] != "w1" || rec["body"] != "one" {
		t.Fatalf("claim: %v %v", rec, err)
	}
	if err := DoneBranch(dir, "branch:r/w", rec.ID(), "handled", map[string]any{"note": "ok"}); err != nil {
		t.Fatal(err)
	}
	if err := DoneBranch(dir, "branch:r/w", rec.ID(), "handled", nil); !errors.Is(err, mailbox.ErrTransition) {
		t.Fatalf("done twice: %v", err)
	}
	if err := DoneBranch(dir, "branch:r/w", "nope", "handled", nil); !errors.Is(err, mailbox.ErrNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
	wakes, _ := readLines(t, filepath.Join(dir, WakeFile))
	var reasons []string
	for _, w := range wakes {
		if strings.HasPrefix(w["reason"].(string), "branch.") {
			reasons = append(reasons, w["reason"].(string))
		}
	}
	if got := strings.Join(reasons, ","); got != "branch.message,branch.message,branch.inbox.claim,branch.inbox.status" {
		t.Fatalf("wakes: %s", got)
	}
	v, err := BranchMailbox(dir, "branch:r/w", 0)
	if err != nil || len(v.Messages) != 2 || v.Messages[0].Status() != "handled" || v.Messages[0]["note"] != "ok" || v.Messages[1].Status() != "queued" {
		t.Fatalf("mailbox view: %+v %v", v, err)
	}
	for _, bad := range []string{"run:r", "branch:r/../x", "room:r"} {
		if _, err := ClaimBranch(dir, bad, "w", 0); !errors.Is(err, mailbox.ErrInvalid) {
			t.Errorf("claim %s: %v", bad, err)
		}
	}
}

func TestBranchRetainedTerminal(t *testing.T) {
	t.Setenv(EnvBranchRetained, "2")
	dir := t.TempDir()
	for i := range 6 {
		send(t, dir, "branch:r/w", i)
	}
	f, _ := os.OpenFile(BranchInboxPath(dir, "w"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("garbage\n")
	f.Close()
	for range 5 {
		rec, err := ClaimBranch(dir, "branch:r/w", "w", 0)
		if err != nil || rec == nil {
			t.Fatal(err)
		}
		if err := DoneBranch(dir, "branch:r/w", rec.ID(), "handled", nil); err != nil {
			t.Fatal(err)
		}
	}
	q, _ := BranchInbox(dir, "w")
	if err := q.Compact(); err != nil {
		t.Fatal(err)
	}
	recs, bad := readLines(t, BranchInboxPath(dir, "w"))
	var got []string
	for _, r := range recs {
		got = append(got, r["status"].(string)+":"+bodyString(r["body"]))
	}
	// The newest two handled, the queued one, the malformed line: in order.
	if strings.Join(got, ",") != "handled:3,handled:4,queued:5" || len(bad) != 1 {
		t.Fatalf("after compaction: %v malformed %q", got, bad)
	}
	t.Setenv(EnvBranchRetained, "0")
	dir = t.TempDir()
	send(t, dir, "branch:r/none", 1)
	rec, _ := ClaimBranch(dir, "branch:r/none", "w", 0)
	DoneBranch(dir, "branch:r/none", rec.ID(), "failed", map[string]any{"error": "x"})
	if recs, _ := readLines(t, BranchInboxPath(dir, "none")); len(recs) != 0 {
		t.Fatalf("retained=0 kept %v", recs)
	}
}

func TestBranchExpiryAtClaim(t *testing.T) {
	dir := t.TempDir()
	d, err := SendBranch(dir, mailbox.Envelope{To: "branch:r/w", Type: "t", TTL: time.Millisecond, ID: "short"}, nil)
	if err != nil || d.DeadLetter != "" {
		t.Fatalf("send: %+v %v", d, err)
	}
	keep := send(t, dir, "branch:r/w", "keeper")
	// Wait (by the clock, not a sleep) until the ttl has passed.
	for start := time.Now(); time.Since(start) < 3*time.Millisecond; {
	}
	rec, err := ClaimBranch(dir, "branch:r/w", "w", 0)
	if err != nil || rec.ID() != keep.InboxID {
		t.Fatalf("claim handed out %v (%v), want the unexpired message", rec, err)
	}
	v, _ := BranchMailbox(dir, "branch:r/w", 0)
	if s := v.Messages[0]; s.Status() != "failed" || s["error"] != "expired: ttl_expired" || s["dead_letter"] != "ttl_expired" {
		t.Fatalf("expired record: %v", s)
	}
	dl, _ := DeadLetters(filepath.Join(dir, DeadLettersFile), 0)
	if len(dl.DeadLetters) != 1 || dl.DeadLetters[0].ID != "short" || dl.DeadLetters[0].Reason != "ttl_expired" || dl.DeadLetters[0].StateDir != dir {
		t.Fatalf("dead letters: %+v", dl)
	}
}

func TestBranchClaimLease(t *testing.T) {
	t.Setenv(EnvBranchClaimLeaseMS, "1")
	dir := t.TempDir()
	send(t, dir, "branch:r/w", "x")
	first, _ := ClaimBranch(dir, "branch:r/w", "slow", os.Getpid())
	deadline := time.Now().Add(10 * time.Second)
	for {
		rec, err := ClaimBranch(dir, "branch:r/w", "heir", 0)
		if err != nil {
			t.Fatal(err)
		}
		if rec != nil {
			if rec.ID() != first.ID() || rec["claimed_by"] != "heir" {
				t.Fatalf("takeover: %v", rec)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the lease never ran out")
		}
		time.Sleep(time.Millisecond)
	}
}
