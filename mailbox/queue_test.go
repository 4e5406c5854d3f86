package mailbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func newTestQueue(t *testing.T) *Queue {
	t.Helper()
	return NewQueue(filepath.Join(t.TempDir(), "branches", "b", "inbox.jsonl"))
}

func job(i int) Envelope {
	return Envelope{To: "branch:r/b", Type: "task.assign", From: "run:r", Body: map[string]any{"i": i}}
}

// statuses reads the file as an Inbox would see it after a fold.
func statuses(t *testing.T, path string) []string {
	t.Helper()
	lines, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range lines {
		if l.Err != nil {
			out = append(out, "!"+string(l.Raw))
			continue
		}
		out = append(out, Record(l.Value).Status())
	}
	return out
}

func TestQueueClaimDoneJournal(t *testing.T) {
	q := newTestQueue(t)
	if rec, err := q.Claim("w", 0); rec != nil || err != nil {
		t.Fatalf("claim on a missing file: %v %v", rec, err)
	}
	if _, err := os.Stat(filepath.Dir(q.Path)); err == nil {
		t.Fatal("a claim created the inbox directory")
	}
	var ids []string
	for i := range 3 {
		rec, dup, err := q.Append(job(i))
		if err != nil || dup {
			t.Fatal(err, dup)
		}
		ids = append(ids, rec.ID())
	}
	rec, err := q.Claim("w1", 0)
	if err != nil || rec.ID() != ids[0] || rec.Status() != StatusClaimed || rec["claimed_by"] != "w1" {
		t.Fatalf("claim: %v %v", rec, err)
	}
	if _, ok := rec["claimed_pid"]; ok {
		t.Fatal("claimed_pid without a pid")
	}
	if err := q.Done(ids[0], StatusFailed, map[string]any{"error": "boom"}); err != nil {
		t.Fatal(err)
	}
	// The claim and the done are appended, not rewritten.
	if got := strings.Join(statuses(t, q.Path), ","); got != "queued,queued,queued,update,update" {
		t.Fatalf("journal: %s", got)
	}
	// Errors as Inbox.Done's.
	if err := q.Done(ids[0], StatusHandled, nil); !errors.Is(err, ErrTransition) {
		t.Fatalf("done twice: %v", err)
	}
	if err := q.Done("nope", StatusHandled, nil); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
	if err := q.Done(ids[1], StatusHandled, nil); !errors.Is(err, ErrTransition) {
		t.Fatalf("done before claim: %v", err)
	}
	if err := q.Done(ids[1], "claimed", nil); !errors.Is(err, ErrTransition) {
		t.Fatalf("bad status: %v", err)
	}
	// List folds updates.
	recs, bad, err := q.List(10)
	if err != nil || bad != 0 || len(recs) != 3 {
		t.Fatalf("list: %d %d %v", len(recs), bad, err)
	}
	if r := recs[0]; r.Status() != StatusFailed || r["error"] != "boom" || r["claimed_by"] != "w1" || r["failed_at"] == nil {
		t.Fatalf("listed record: %v", r)
	}
	// Compact writes the same record an Inbox would have.
	if err := q.Compact(); err != nil {
		t.Fatal(err)
	}
	lines, _ := Read(q.Path)
	if len(lines) != 3 {
		t.Fatalf("%d lines after compaction", len(lines))
	}
	keys := keyOrder(t, lines[0].Raw)
	if want := "to,type,body,from,id,queued_at,received_at,status,claimed_at,claimed_by,error,failed_at"; keys != want {
		t.Fatalf("folded key order %s, want %s", keys, want)
	}
	// A second Queue value (another process) continues from the new file.
	q2 := NewQueue(q.Path)
	rec, err = q2.Claim("w2", 0)
	if err != nil || rec.ID() != ids[1] {
		t.Fatalf("second queue claim: %v %v", rec, err)
	}
	rec, err = q.Claim("w1", 0)
	if err != nil || rec.ID() != ids[2] {
		t.Fatalf("first queue claim after the other's: %v %v", rec, err)
	}
	if rec, _ := q2.Claim("w2", 0); rec != nil {
		t.Fatalf("claimed %v twice", rec.ID())
	}
}

func keyOrder(t *testing.T, raw []byte) string {
	t.Helper()
	o, err := parseObject(raw)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, m := range o {
		keys = append(keys, m.key)
	}
	return strings.Join(keys, ",")
}

func TestQueueIdempotentAppend(t *testing.T) {
	q := newTestQueue(t)
	e := job(1)
	e.ID = "task-1"
	first, dup, err := q.Append(e)
	if err != nil || dup {
		t.Fatal(err, dup)
	}
	q.Claim("w", 0)
	again, dup, err := NewQueue(q.Path).Append(e)
	if err != nil || !dup || again.ID() != "task-1" || again.Status() != StatusClaimed || again["queued_at"] != first["queued_at"] {
		t.Fatalf("retry: %v dup=%v %v", again, dup, err)
	}
	if n := len(statuses(t, q.Path)); n != 2 {
		t.Fatalf("%d lines, want the record and its claim", n)
	}
}

func TestQueueKeepsMalformedAndFixesLegacyIDs(t *testing.T) {
	q := newTestQueue(t)
	os.MkdirAll(filepath.Dir(q.Path), 0o700)
	legacy := `{"type":"old","status":"queued"}` + "\n" +
		"garbage line\n" +
		`{"type":"dup","id":"same"}` + "\n" +
		`{"type":"dup2","id":"same"}` + "\n"
	os.WriteFile(q.Path, []byte(legacy), 0o600)
	seen := map[string]bool{}
	for range 3 {
		rec, err := q.Claim("w", 0)
		if err != nil || rec == nil {
			t.Fatalf("claim: %v %v", rec, err)
		}
		if rec.ID() == "" || seen[rec.ID()] {
			t.Fatalf("claimed record %v has no unique id", rec)
		}
		seen[rec.ID()] = true
		if err := q.Done(rec.ID(), StatusHandled, nil); err != nil {
			t.Fatal(err)
		}
	}
	if rec, _ := q.Claim("w", 0); rec != nil {
		t.Fatalf("a fourth claim: %v", rec)
	}
	// A torn tail is closed off by the next append and kept too.
	f, _ := os.OpenFile(q.Path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"torn":`)
	f.Close()
	if _, _, err := q.Append(job(9)); err != nil {
		t.Fatal(err)
	}
	if err := q.Compact(); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(statuses(t, q.Path), ",")
	if got != `handled,!garbage line,handled,handled,!{"torn":,queued` {
		t.Fatalf("after compaction: %s", got)
	}
	_, bad, _ := q.List(10)
	if bad != 2 {
		t.Fatalf("list counts %d malformed lines, want 2", bad)
	}
}

func TestQueueKeepTerminal(t *testing.T) {
	for _, c := range []struct {
		keep int
		want string
	}{
		{2, "queued,handled,handled"},
		{0, "handled,handled,handled,handled,handled,queued"},
		{-1, "queued"},
	} {
		t.Run(fmt.Sprint(c.keep), func(t *testing.T) {
			q := newTestQueue(t)
			q.KeepTerminal = c.keep
			for i := range 6 {
				q.Append(job(i))
			}
			// Handle the first five; the sixth stays queued.
			for range 5 {
				rec, _ := q.Claim("w", 0)
				if err := q.Done(rec.ID(), StatusHandled, nil); err != nil {
					t.Fatal(err)
				}
			}
			// Nothing is pending after the fold, so the bound is exact.
			q.Compact()
			got := statuses(t, q.Path)
			// The queued record is the newest: order is preserved.
			if c.keep == 2 {
				got = append(got[len(got)-1:], got[:len(got)-1]...)
			}
			if strings.Join(got, ",") != c.want {
				t.Fatalf("keep %d: %v, want %s", c.keep, got, c.want)
			}
		})
	}
}

func TestQueueFoldsAutomatically(t *testing.T) {
	q := newTestQueue(t)
	q.KeepTerminal = 10
	for i := range 600 {
		q.Append(job(i))
	}
	for range 600 {
		rec, err := q.Claim("w", 0)
		if err != nil || rec == nil {
			t.Fatal(err)
		}
		if err := q.Done(rec.ID(), StatusHandled, nil); err != nil {
			t.Fatal(err)
		}
	}
	lines, _ := Read(q.Path)
	// At most KeepTerminal + its slack, plus the update lines since the
	// last fold (fewer than foldMin).
	if len(lines) > 10+foldMin {
		t.Fatalf("%d lines left; folds did not keep the file bounded", len(lines))
	}
}

func TestQueueTakeover(t *testing.T) {
	q := newTestQueue(t)
	q.Append(job(1))
	q.Append(job(2))
	// A claim for a process that has exited is taken over at once.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("no true(1): %v", err)
	}
	dead := cmd.Process.Pid
	first, err := q.Claim("gone", dead)
	if err != nil || first["claimed_pid"] == nil {
		t.Fatalf("claim: %v %v", first, err)
	}
	again, err := NewQueue(q.Path).Claim("heir", os.Getpid())
	if err != nil || again.ID() != first.ID() || again["claimed_by"] != "heir" {
		t.Fatalf("takeover from a dead pid: %v %v", again, err)
	}
	// A live claimant keeps its record until the lease runs out.
	q.Lease = 2 * time.Second
	next, _ := q.Claim("w", 0)
	if next == nil || next.ID() == first.ID() {
		t.Fatalf("claimed %v while its claimant lives", next)
	}
	if rec, _ := q.Claim("w", 0); rec != nil {
		t.Fatalf("claimed %v before the lease ran out", rec.ID())
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		rec, err := q.Claim("late", 0)
		if err != nil {
			t.Fatal(err)
		}
		if rec != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("lease never ran out")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestFollower(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.jsonl")
	f := NewFollower(path)
	if lines, reset, err := f.Next(); lines != nil || reset || err != nil {
		t.Fatalf("missing file: %v %v %v", lines, reset, err)
	}
	Append(path, map[string]any{"a": 1}, map[string]any{"a": 2})
	lines, reset, _ := f.Next()
	if len(lines) != 2 || reset || lines[1].N != 2 || lines[1].Value["a"] == nil {
		t.Fatalf("first read: %+v", lines)
	}
	// A line being written is left for later.
	fh, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	fh.WriteString(`{"a":3`)
	if lines, _, _ := f.Next(); len(lines) != 0 {
		t.Fatalf("partial line returned: %+v", lines)
	}
	fh.WriteString("}\n\n{\"a\":4}\n")
	fh.Close()
	lines, _, _ = f.Next()
	if len(lines) != 2 || lines[0].N != 3 || lines[1].N != 5 || f.Offset() == 0 {
		t.Fatalf("after completion: %+v", lines)
	}
	// A rewrite (new inode, possibly the old number) resets.
	Rewrite(path, func(ls []Line) ([]Line, error) { return ls[2:], nil })
	lines, reset, _ = f.Next()
	if !reset || len(lines) != 2 || lines[0].N != 1 || lines[0].Value["a"] == nil {
		t.Fatalf("after a rewrite: reset=%v %+v", reset, lines)
	}
	// A file replaced by one of the same size is still noticed.
	data, _ := os.ReadFile(path)
	os.WriteFile(path, []byte(strings.Replace(string(data), "4", "5", 1)), 0o600)
	if _, reset, _ := f.Next(); !reset {
		t.Fatal("same-size replacement not noticed")
	}
	os.Remove(path)
	if _, reset, _ := f.Next(); !reset {
		t.Fatal("removal not reported")
	}
}

// TestQueueClaimThatFolds: a claim whose update triggers a fold (which
// drops terminal records, so record positions move) returns the record
// it claimed.
func TestQueueClaimThatFolds(t *testing.T) {
	q := newTestQueue(t)
	q.KeepTerminal = 2
	for i := range 400 {
		q.Append(job(i))
	}
	for range 10 {
		rec, _ := q.Claim("w", 0)
		if err := q.Done(rec.ID(), StatusHandled, nil); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 300 {
		rec, err := q.Claim("w", 0)
		if err != nil || rec.Status() != StatusClaimed || fmt.Sprint(rec["body"].(map[string]any)["i"]) != fmt.Sprint(10+i) {
			t.Fatalf("claim %d returned %v (%v)", i, rec, err)
		}
	}
}

// A renewed lease keeps a claim from being taken over; only the owner
// renews; a takeover by a claim without a pid forgets the dead pid of
// the claim before it.
func TestQueueRenew(t *testing.T) {
	q := newTestQueue(t)
	q.Append(job(1))
	q.Lease = 300 * time.Millisecond
	rec, err := q.Claim("w", 0)
	if err != nil || rec == nil {
		t.Fatal(rec, err)
	}
	if err := q.Renew(rec.ID(), "other"); !errors.Is(err, ErrTransition) {
		t.Fatalf("renew by another owner: %v", err)
	}
	if err := q.Renew("nope", "w"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("renew of an unknown id: %v", err)
	}
	// Renewed every 100 ms for a second: never taken over, from this
	// process or from a fresh Queue (another process's view).
	for range 10 {
		time.Sleep(100 * time.Millisecond)
		if err := q.Renew(rec.ID(), "w"); err != nil {
			t.Fatal(err)
		}
		if got, err := NewQueue(q.Path).withLease(q.Lease).Claim("thief", 0); err != nil || got != nil {
			t.Fatalf("taken over while renewed: %v %v", got, err)
		}
	}
	// Not renewed: taken over once the lease passes, and the old owner
	// learns it on its next renewal.
	time.Sleep(350 * time.Millisecond)
	got, err := q.Claim("heir", 0)
	if err != nil || got == nil || got.ID() != rec.ID() {
		t.Fatalf("takeover after the lease: %v %v", got, err)
	}
	if err := q.Renew(rec.ID(), "w"); !errors.Is(err, ErrTransition) {
		t.Fatalf("renew after a takeover: %v", err)
	}
	// Only the new owner finishes it.
	if err := q.DoneBy(rec.ID(), "w", StatusFailed, nil); !errors.Is(err, ErrTransition) {
		t.Fatalf("done by the old owner: %v", err)
	}
	if err := q.DoneBy(rec.ID(), "heir", StatusHandled, nil); err != nil {
		t.Fatalf("done by the new owner: %v", err)
	}
	if err := q.Renew(rec.ID(), ""); !errors.Is(err, ErrTransition) {
		t.Fatalf("renew of a handled record: %v", err)
	}

	// A dead pid does not outlive the claim that recorded it.
	q2 := newTestQueue(t)
	q2.Append(job(2))
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("no true(1): %v", err)
	}
	first, _ := q2.Claim("gone", cmd.Process.Pid)
	if again, _ := q2.Claim("heir", 0); again == nil || again.ID() != first.ID() {
		t.Fatalf("no takeover from a dead pid: %v", again)
	}
	if third, _ := q2.Claim("third", 0); third != nil {
		t.Fatalf("the heir's claim was taken over at once (the dead pid stuck): %v", third)
	}
	// Nor does it come back when a fold merges the claims into the record.
	if err := q2.Compact(); err != nil {
		t.Fatal(err)
	}
	for _, fresh := range []*Queue{q2, NewQueue(q2.Path)} {
		if third, _ := fresh.Claim("third", 0); third != nil {
			t.Fatalf("after a fold the heir's claim was taken over (the dead pid came back): %v", third)
		}
	}
	if recs, _, _ := q2.List(10); len(recs) != 1 || recs[0]["claimed_by"] != "heir" || fmt.Sprint(recs[0]["claimed_pid"]) != "0" {
		t.Fatalf("folded record: %v", recs)
	}
}

func (q *Queue) withLease(d time.Duration) *Queue { q.Lease = d; return q }

// A claim's pid is trusted only with its start time: a live process with
// that pid but another start time is not the claimant.
func TestQueueClaimPidReused(t *testing.T) {
	q := newTestQueue(t)
	q.Append(job(1))
	rec, err := q.Claim("w", os.Getpid())
	if err != nil || rec == nil || fmt.Sprint(rec["claimed_pid_start"]) == "0" {
		t.Fatalf("claim: %v %v", rec, err)
	}
	if again, _ := NewQueue(q.Path).Claim("x", 0); again != nil {
		t.Fatalf("taken over from a live claimant: %v", again)
	}
	// As if our pid now belonged to another process.
	if err := Append(q.Path, map[string]any{"status": StatusUpdate, "ref": rec.ID(), "set": map[string]any{"claimed_pid_start": 1}}); err != nil {
		t.Fatal(err)
	}
	if again, _ := NewQueue(q.Path).Claim("heir", 0); again == nil || again.ID() != rec.ID() {
		t.Fatalf("not taken over from a reused pid: %v", again)
	}
}

// Requeue gives a claim back only for its owner; the record is claimed
// again first, ahead of later ones, by a fresh reader of the file too.
func TestQueueRequeue(t *testing.T) {
	q := newTestQueue(t)
	first, _, err := q.Append(job(0))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := q.Append(job(1)); err != nil {
		t.Fatal(err)
	}
	if rec, err := q.Claim("w1", 0); err != nil || rec.ID() != first.ID() {
		t.Fatalf("claim: %v %v", rec, err)
	}
	if err := q.Requeue(first.ID(), "w2"); err != nil {
		t.Fatal(err)
	}
	if rec, err := q.Lookup(first.ID()); err != nil || rec.Status() != StatusClaimed {
		t.Fatalf("another owner's requeue changed the claim: %v %v", rec, err)
	}
	if err := q.Requeue(first.ID(), "w1"); err != nil {
		t.Fatal(err)
	}
	rec, err := NewQueue(q.Path).Claim("w3", 0)
	if err != nil || rec.ID() != first.ID() || rec["claimed_by"] != "w3" {
		t.Fatalf("after the requeue the next claim got %v (%v), want %s", rec, err, first.ID())
	}
	if err := q.Requeue("nope", ""); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
}
