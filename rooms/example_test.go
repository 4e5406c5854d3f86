package rooms_test

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/rooms"
)

// The kernel's part of a room post with a multicast: check the session
// (package runs), post (nil: the run is running, so each recipient's
// copy is forwarded to its inbox too) and answer with the result.
func ExamplePost() {
	dir, _ := os.MkdirTemp("", "rooms-example")
	defer os.RemoveAll(dir)
	rooms.EnsureDefaultRoom(dir, "build") // after spawn

	p, err := rooms.Post(dir, mailbox.Envelope{To: "room:build", Type: "task.assign", From: "run:build",
		Summary: "lint the parser", Metadata: map[string]any{"recipients": []any{"branch:build/lint"}}}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	r := p.Result() // counts as of the post, before the recipient joined
	fmt.Println(r.Consumer, r.Reason, r.MessageCount, r.RosterCount, r.MulticastCount, r.MulticastResults[0].Reason)

	rec, _ := rooms.ClaimBranch(dir, "branch:build/lint", "lint-worker", os.Getpid())
	fmt.Println(rec.Type(), rec.Status())
	rooms.DoneBranch(dir, "branch:build/lint", rec.ID(), mailbox.StatusHandled, nil)

	s, _ := rooms.Status(dir)
	fmt.Println(s.Text()[:strings.Index(s.Text(), " last_message_at")])

	_, err = rooms.Post(dir, mailbox.Envelope{To: "room:build", Type: "chat", From: "run:other"}, nil)
	fmt.Println(errors.Is(err, mailbox.ErrInvalid))
	// Output:
	// room-timeline room_persisted 2 1 1 branch_persisted_forwarded
	// task.assign claimed
	// room=main messages=3 roster=2
	// true
}
