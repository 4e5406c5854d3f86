package mailbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func newTestInbox(t *testing.T) *Inbox {
	t.Helper()
	return NewInbox(filepath.Join(t.TempDir(), "inbox.jsonl"))
}

func TestInboxLifecycle(t *testing.T) {
	in := newTestInbox(t)
	env := Envelope{To: "run:r1", Type: "task.review", Body: map[string]any{"file": "a.go"}, From: "run:r0"}
	rec, dup, err := in.Append(env)
	if err != nil || dup {
		t.Fatalf("append: %v dup=%v", err, dup)
	}
	id := rec.ID()
	if len(id) != 36 || rec.Status() != StatusQueued || rec["queued_at"] != rec["received_at"] {
		t.Fatalf("record: %v", rec)
	}
	if _, err := time.Parse(time.RFC3339Nano, rec["queued_at"].(string)); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(in.Path)
	if !strings.HasPrefix(string(data), `{"to":"run:r1","type":"task.review","body":{"file":"a.go"},"from":"run:r0","id":"`) {
		t.Fatalf("key order: %s", data)
	}

	if err := in.Done(id, StatusHandled, nil); !errors.Is(err, ErrTransition) {
		t.Fatalf("done before claim: %v", err)
	}
	if err := in.Done("nope", StatusHandled, nil); !errors.Is(err, ErrNotFound) {
		t.Fatalf("done of unknown id: %v", err)
	}

	got, err := in.Claim("worker-1")
	if err != nil || got == nil {
		t.Fatalf("claim: %v %v", got, err)
	}
	if got.ID() != id || got.Status() != StatusClaimed || got["claimed_by"] != "worker-1" || got["claimed_at"] == nil {
		t.Fatalf("claimed: %v", got)
	}
	if again, err := in.Claim(""); again != nil || err != nil {
		t.Fatalf("second claim: %v %v", again, err)
	}
	if err := in.Done(id, StatusQueued, nil); !errors.Is(err, ErrTransition) {
		t.Fatalf("done with status queued: %v", err)
	}
	if err := in.Done(id, StatusFailed, map[string]any{"error": "boom", "status": "ignored", "id": "ignored"}); err != nil {
		t.Fatal(err)
	}
	if err := in.Done(id, StatusHandled, nil); !errors.Is(err, ErrTransition) {
		t.Fatalf("done twice: %v", err)
	}
	recs, bad, err := in.List(10)
	if err != nil || bad != 0 || len(recs) != 1 {
		t.Fatalf("list: %v %d %v", recs, bad, err)
	}
	r := recs[0]
	if r.ID() != id || r.Status() != StatusFailed || r["error"] != "boom" || r["failed_at"] == nil {
		t.Fatalf("final record: %v", r)
	}
	env2, err := r.Envelope()
	if err != nil || env2.To != "run:r1" || env2.Type != "task.review" {
		t.Fatalf("envelope of record: %+v %v", env2, err)
	}
}

func TestInboxIdempotentAppend(t *testing.T) {
	in := newTestInbox(t)
	env := Envelope{To: "run:r1", Type: "t", Body: "first", ID: "req-7"}
	rec1, dup, err := in.Append(env)
	if err != nil || dup || rec1.ID() != "req-7" {
		t.Fatalf("%v %v %v", rec1, dup, err)
	}
	in.Append(map[string]any{"type": "other"})
	env.Body = "retry"
	rec2, dup, err := in.Append(env)
	if err != nil || !dup || rec2["body"] != "first" || rec2["queued_at"] != rec1["queued_at"] {
		t.Fatalf("retry: %v dup=%v %v", rec2, dup, err)
	}
	// Still a duplicate after the record moved on; raw records dedupe too.
	in.Claim("w")
	if _, dup, _ := in.Append(map[string]any{"id": "req-7", "type": "t"}); !dup {
		t.Fatal("raw append with a stored id was not a duplicate")
	}
	lines, _ := Read(in.Path)
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2", len(lines))
	}
	for _, bad := range []any{map[string]any{"id": "a b"}, map[string]any{"id": 5}, Envelope{To: "run:x", Type: "t", ID: "../x"}} {
		if _, _, err := in.Append(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("Append(%v): %v", bad, err)
		}
	}
	if _, _, err := in.Append("a string"); err == nil {
		t.Error("Append of a string accepted")
	}
}

func TestInboxRawRecordManagedFields(t *testing.T) {
	in := newTestInbox(t)
	rec, _, err := in.Append(RecordFromLine("stop\n"))
	if err != nil {
		t.Fatal(err)
	}
	if rec["body"] != "stop" || rec.Type() != "run.message" {
		t.Fatalf("plain line: %v", rec)
	}
	rec, _, _ = in.Append(RecordFromLine(`{"type":"x","status":"handled","n":1}`))
	if rec.Status() != StatusQueued || rec.Type() != "x" {
		t.Fatalf("a caller status must not survive: %v", rec)
	}
	data, _ := os.ReadFile(in.Path)
	last := strings.Split(strings.TrimSpace(string(data)), "\n")[1]
	if !strings.HasPrefix(last, `{"n":1,"type":"x","id":"`) || !strings.Contains(last, `"status":"queued"}`) {
		t.Fatalf("line: %s", last)
	}
}

func TestInboxClaimAssignsLegacyIDsAndKeepsMalformed(t *testing.T) {
	in := newTestInbox(t)
	legacy := "{\"type\":\"old\",\"body\":1}\nthis is not json\n{\"type\":\"old2\",\"status\":\"queued\",\"id\":\"\"}\n{\"torn\":"
	os.WriteFile(in.Path, []byte(legacy), 0o600)
	check := func(step string) {
		t.Helper()
		lines, _ := Read(in.Path)
		var bad []string
		for _, l := range lines {
			if l.Err != nil {
				bad = append(bad, string(l.Raw))
			}
		}
		if strings.Join(bad, "|") != `this is not json|{"torn":` {
			t.Fatalf("%s: malformed lines %q", step, bad)
		}
	}
	r1, err := in.Claim("")
	if err != nil || r1 == nil || len(r1.ID()) != 36 || r1["claimed_by"] != DefaultOwner {
		t.Fatalf("claim legacy: %v %v", r1, err)
	}
	check("claim 1")
	r2, _ := in.Claim("w")
	if r2 == nil || r2.ID() == "" || r2.Type() != "old2" {
		t.Fatalf("claim 2: %v", r2)
	}
	check("claim 2")
	in.Append(Envelope{To: "run:x", Type: "new"})
	check("append")
	if err := in.Done(r1.ID(), StatusHandled, map[string]any{"note": "ok"}); err != nil {
		t.Fatal(err)
	}
	check("done")
	if err := in.Sent(r2.ID(), map[string]any{"bytes": 10}); err != nil {
		t.Fatal(err)
	}
	check("sent")
	recs, bad, _ := in.List(100)
	if bad != 2 || len(recs) != 3 {
		t.Fatalf("list: %d records %d malformed", len(recs), bad)
	}
	if recs[1].Status() != StatusClaimed || recs[1]["sent_at"] == nil {
		t.Fatalf("sent must not move a claimed record back: %v", recs[1])
	}
}

func TestInboxSentAndReclaim(t *testing.T) {
	in := newTestInbox(t)
	rec, _, _ := in.Append(Envelope{To: "run:x", Type: "t"})
	if err := in.Sent(rec.ID(), map[string]any{"bytes": 42}); err != nil {
		t.Fatal(err)
	}
	if r, _ := in.Claim("w"); r != nil {
		t.Fatalf("a sent record is not claimed by default: %v", r)
	}
	r, _ := in.Claim("w", StatusSent)
	if r == nil || r["bytes"].(fmt.Stringer).String() != "42" || r["sent_at"] == nil {
		t.Fatalf("claim sent: %v", r)
	}
	// A consumer died: take over its claim.
	r2, _ := in.Claim("w2", StatusClaimed)
	if r2 == nil || r2.ID() != rec.ID() || r2["claimed_by"] != "w2" {
		t.Fatalf("reclaim: %v", r2)
	}
	if err := in.Sent("missing", nil); !errors.Is(err, ErrNotFound) {
		t.Fatalf("sent of unknown id: %v", err)
	}
}

func TestInboxCompaction(t *testing.T) {
	in := newTestInbox(t)
	in.KeepTerminal = 2
	os.WriteFile(in.Path, []byte("garbage\n"), 0o600)
	var ids []string
	for i := range 5 {
		r, _, _ := in.Append(Envelope{To: "run:x", Type: "t", Body: i})
		ids = append(ids, r.ID())
	}
	for i := range 4 {
		r, _ := in.Claim("w")
		if r.ID() != ids[i] {
			t.Fatalf("claim %d took %s, want the oldest queued %s", i, r.ID(), ids[i])
		}
		if err := in.Done(r.ID(), StatusHandled, nil); err != nil {
			t.Fatal(err)
		}
	}
	lines, _ := Read(in.Path)
	var got []string
	for _, l := range lines {
		if l.Err != nil {
			got = append(got, "bad")
			continue
		}
		got = append(got, fmt.Sprint(l.Value["body"], Record(l.Value).Status()))
	}
	if want := "bad 2handled 3handled 4queued"; strings.Join(got, " ") != want {
		t.Fatalf("got %q, want %q", strings.Join(got, " "), want)
	}
}

func TestMailboxLoop(t *testing.T) {
	in := newTestInbox(t)
	ctx := context.Background()
	for _, typ := range []string{"a", "fail", "control.stop", "control.kill", "b"} {
		in.Append(Envelope{To: "run:x", Type: typ})
	}
	var seen []string
	h := func(_ context.Context, r Record) error {
		seen = append(seen, r.Type())
		if r.Type() == "fail" {
			return errors.New("bad input")
		}
		return nil
	}
	n, stopped, err := in.Drain(ctx, "", 0, true, h)
	if n != 2 || stopped || err == nil || err.Error() != "bad input" {
		t.Fatalf("first drain: %d %v %v", n, stopped, err)
	}
	n, stopped, err = in.Drain(ctx, "", 0, true, h)
	if n != 2 || !stopped || err != nil {
		t.Fatalf("second drain: %d %v %v", n, stopped, err)
	}
	n, stopped, err = in.Drain(ctx, "", 0, true, h)
	if n != 1 || stopped || err != nil {
		t.Fatalf("third drain: %d %v %v", n, stopped, err)
	}
	if rec, err := in.HandleOnce(ctx, "", h); rec != nil || err != nil {
		t.Fatalf("empty inbox: %v %v", rec, err)
	}
	if strings.Join(seen, ",") != "a,fail,control.stop,control.kill,b" {
		t.Fatalf("seen %v", seen)
	}
	recs, _, _ := in.List(10)
	var st []string
	for _, r := range recs {
		st = append(st, r.Status()+":"+fmt.Sprint(r["claimed_by"]))
	}
	if strings.Join(st, " ") != "handled:mailbox-loop failed:mailbox-loop handled:mailbox-loop handled:mailbox-loop handled:mailbox-loop" {
		t.Fatalf("statuses %v", st)
	}
	if recs[1]["error"] != "bad input" {
		t.Fatalf("failed record: %v", recs[1])
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := in.HandleOnce(cctx, "", h); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

func TestInboxMissingCreatesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "branches", "b1")
	in := NewInbox(filepath.Join(dir, "inbox.jsonl"))
	if r, err := in.Claim(""); r != nil || err != nil {
		t.Fatalf("claim: %v %v", r, err)
	}
	if err := in.Done("x", StatusHandled, nil); !errors.Is(err, ErrNotFound) {
		t.Fatalf("done: %v", err)
	}
	if recs, bad, err := in.List(5); recs != nil || bad != 0 || err != nil {
		t.Fatalf("list: %v %d %v", recs, bad, err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("reads created %s: %v", dir, err)
	}
	if _, _, err := in.Append(Envelope{To: "branch:r/b1", Type: "t"}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("append did not create the directory: %v", err)
	}
}
