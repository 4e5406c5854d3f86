package swarm

import (
	"bytes"
	"os"
	"testing"

	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/runs"
)

// The locker's inbox keeps its newest lockerKeep handled messages: every
// claim is one, and an idle worker's claims grew it for ever.
func TestLockerInboxIsBounded(t *testing.T) {
	defer func(n int) { lockerKeep = n }(lockerKeep)
	lockerKeep = 5
	dir := runs.Dir(t.TempDir())
	box := mailbox.NewInbox(dir.Path("inbox.jsonl"))
	l := &locker{actor: &actor{dir: dir}}
	for range 20 {
		if _, _, err := box.Append(mailbox.Envelope{To: "run:lk", Type: "lock.status"}); err != nil {
			t.Fatal(err)
		}
		rec, err := box.Claim("run:lk")
		if err != nil || rec == nil {
			t.Fatal(rec, err)
		}
		if err := l.done(rec, mailbox.StatusHandled, nil); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(dir.Path("inbox.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(data, []byte("\n")); n > 5 {
		t.Fatalf("inbox holds %d records after 20 handled, want at most 5", n)
	}
}
