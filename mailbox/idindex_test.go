package mailbox

import (
	"bytes"
	"fmt"
	"os"
	"testing"
)

// bigInbox returns an inbox past idIndexMin holding n records with
// caller ids m0…m<n-1>.
func bigInbox(t *testing.T, n int) *Inbox {
	t.Helper()
	in := newTestInbox(t)
	var recs []any
	for i := range n {
		recs = append(recs, map[string]any{"to": "run:r", "type": "t.x", "id": fmt.Sprintf("m%d", i), "body": fmt.Sprintf("%0200d", i), "status": "queued"})
	}
	if err := Append(in.Path, recs...); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(in.Path); fi.Size() < idIndexMin {
		t.Fatalf("inbox of %d bytes is below idIndexMin", fi.Size())
	}
	return in
}

func mustDup(t *testing.T, in *Inbox, id string, want bool) Record {
	t.Helper()
	rec, dup, err := in.Append(Envelope{To: "run:r", Type: "t.x", ID: id})
	if err != nil || dup != want || rec.ID() != id {
		t.Fatalf("append %s: dup=%v (want %v) id=%q err=%v", id, dup, want, rec.ID(), err)
	}
	return rec
}

// The duplicate check of a large inbox (indexed) answers as a full scan
// would: after our appends, another writer's, a rewrite that changes
// records (a claim), a replacement of the file and a torn last line.
func TestFindIDIndexed(t *testing.T) {
	in := bigInbox(t, 400)
	mustDup(t, in, "m0", true)
	mustDup(t, in, "m399", true)
	mustDup(t, in, "new1", false)
	mustDup(t, in, "new1", true)

	// Another writer appends (the index reads what the file gained).
	if err := Append(in.Path, map[string]any{"id": "other", "to": "run:r", "type": "t.x", "status": "queued"}); err != nil {
		t.Fatal(err)
	}
	mustDup(t, in, "other", true)

	// A claim rewrites the file: records move, the index starts over.
	if rec, err := in.Claim("w"); err != nil || rec.ID() != "m0" {
		t.Fatalf("claim: %v %v", rec, err)
	}
	if rec := mustDup(t, in, "m0", true); rec.Status() != StatusClaimed {
		t.Fatalf("the stored record after the claim: %v", rec)
	}
	mustDup(t, in, "m200", true)
	mustDup(t, in, "new2", false)

	// The file replaced by one without the old ids.
	os.WriteFile(in.Path+".new", []byte(`{"id":"fresh","status":"queued"}`+"\n"), 0o600)
	if err := os.Rename(in.Path+".new", in.Path); err != nil {
		t.Fatal(err)
	}
	mustDup(t, in, "m1", false)
	mustDup(t, in, "fresh", true)

	// A whole record without its newline (a writer that died before it)
	// is found as a full scan finds it.
	in2 := bigInbox(t, 400)
	f, _ := os.OpenFile(in2.Path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"id":"torn","to":"run:r","type":"t.x","status":"queued"}`)
	f.Close()
	if rec, err := findID(in2.Path, "torn"); err != nil || rec.ID() != "torn" {
		t.Fatalf("torn record: %v %v", rec, err)
	}
}

// More inboxes than idIndexMax stay correct; the index count is bounded.
func TestFindIDIndexBounded(t *testing.T) {
	var ins []*Inbox
	for range idIndexMax + 4 {
		in := bigInbox(t, 300)
		mustDup(t, in, "m7", true)
		ins = append(ins, in)
	}
	for _, in := range ins {
		mustDup(t, in, "m299", true)
		mustDup(t, in, "x", false)
	}
	idIndexes.mu.Lock()
	n := len(idIndexes.m)
	idIndexes.mu.Unlock()
	if n > idIndexMax {
		t.Fatalf("%d indexes kept, at most %d", n, idIndexMax)
	}
}

// An index pointing at a line that is not the record (here: the file
// rewritten behind the index's back with the same size and tail) is
// caught, and a full scan answers.
func TestFindIDIndexStaleOffset(t *testing.T) {
	in := bigInbox(t, 400)
	mustDup(t, in, "m5", true) // indexed
	data, _ := os.ReadFile(in.Path)
	// Swap m5 and m6 in place: same size, same bytes at the end.
	a, b := []byte(`"id":"m5"`), []byte(`"id":"m6"`)
	x := []byte(`"id":"XX"`)
	swapped := bytes.Replace(bytes.Replace(bytes.Replace(data, a, x, 1), b, a, 1), x, b, 1)
	if err := os.WriteFile(in.Path, swapped, 0o600); err != nil {
		t.Fatal(err)
	}
	if rec, err := findID(in.Path, "m5"); err != nil || rec.ID() != "m5" {
		t.Fatalf("after the swap: %v %v", rec, err)
	}
	if rec, err := findID(in.Path, "m6"); err != nil || rec.ID() != "m6" {
		t.Fatalf("after the swap: %v %v", rec, err)
	}
}
