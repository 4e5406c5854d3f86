package rooms

import (
	"errors"
	"fmt"
	"testing"

	"github.com/pi-actors/pi-actors/mailbox"
)

func TestSince(t *testing.T) {
	dir := t.TempDir()
	if r, err := Since(dir, "", 0); err != nil || len(r.Entries) != 0 {
		t.Fatalf("empty room: %+v %v", r, err)
	}
	var all []Entry
	for i := range 300 {
		all = append(all, post(t, dir, mailbox.Envelope{To: "room:r", Type: "chat", From: "run:r", Body: i}).Entry)
	}
	r, err := Since(dir, all[249].ReceivedAt, 0)
	if err != nil || len(r.Entries) != 50 || r.Entries[0].ID != all[250].ID || r.More || r.Missed {
		t.Fatalf("since the 250th: %d entries %+v %v", len(r.Entries), r.More, err)
	}
	// Paging with max: ask again from the last one seen.
	var got []string
	since := ""
	for {
		r, err := Since(dir, since, 70)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range r.Entries {
			got = append(got, e.ID)
		}
		if !r.More {
			break
		}
		since = r.Entries[len(r.Entries)-1].ReceivedAt
	}
	if len(got) != 300 || got[0] != all[0].ID || got[299] != all[299].ID {
		t.Fatalf("paged %d entries", len(got))
	}
	if _, err := Since(dir, "yesterday", 0); !errors.Is(err, mailbox.ErrInvalid) {
		t.Fatalf("bad since: %v", err)
	}
	// After a compaction a time before the first kept entry may have
	// missed some.
	t.Setenv(EnvRoomMaxMessages, "100")
	post(t, dir, mailbox.Envelope{To: "room:r", Type: "chat", From: "run:r"})
	if r, _ := Since(dir, all[10].ReceivedAt, 0); !r.Missed || len(r.Entries) != 100 {
		t.Fatalf("since a dropped entry: missed=%v %d entries", r.Missed, len(r.Entries))
	}
	if r, _ := Since(dir, all[290].ReceivedAt, 0); r.Missed || len(r.Entries) != 10 {
		t.Fatalf("since a kept entry: missed=%v %d entries", r.Missed, len(r.Entries))
	}
}

func TestCursorAcrossCompaction(t *testing.T) {
	t.Setenv(EnvRoomMaxMessages, "20") // compacts at 21 lines, to 20
	dir := t.TempDir()
	first := post(t, dir, mailbox.Envelope{To: "room:r", Type: "chat", From: "run:r", Body: -1}).Entry
	fromStart, err := NewCursor(dir, first.ReceivedAt)
	if err != nil {
		t.Fatal(err)
	}
	live, err := NewCursor(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	var a, b []string
	for i := range 100 {
		post(t, dir, mailbox.Envelope{To: "room:r", Type: "chat", From: "run:r", Body: i})
		if i%7 == 0 { // a watcher that reads between appends
			es, err := live.Next()
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range es {
				a = append(a, bodyString(e.Body))
			}
		}
		if i%3 == 0 {
			es, _ := fromStart.Next()
			for _, e := range es {
				b = append(b, bodyString(e.Body))
			}
		}
	}
	for _, c := range []struct {
		cur *Cursor
		got *[]string
	}{{live, &a}, {fromStart, &b}} {
		es, _ := c.cur.Next()
		for _, e := range es {
			*c.got = append(*c.got, bodyString(e.Body))
		}
	}
	for name, got := range map[string][]string{"live": a, "from the start": b} {
		if len(got) != 100 {
			t.Fatalf("%s cursor got %d entries", name, len(got))
		}
		for i, s := range got {
			if s != fmt.Sprint(i) {
				t.Fatalf("%s cursor: entry %d is %s", name, i, s)
			}
		}
	}
}
