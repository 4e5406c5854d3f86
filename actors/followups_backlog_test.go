package actors_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// A watcher that connects to a backlog larger than its channel gets all
// of it, acknowledging as it goes, even when it reads slowly at first: the
// session handed over only what fitted and then waited for a follow-up
// queued later (400 queued, 2 KiB each: the kernel's writes block while
// the client does not read, the channel fills, and the rest stayed
// queued until the next run ended).
func TestWatchTakesTheWholeBacklog(t *testing.T) {
	agent := t.TempDir()
	startKernel(t, agent, settings(nil))
	const n = 400
	q := mailbox.NewInbox(filepath.Join(agent, "tmp", "pi-actors", "sessions", "s.jsonl"))
	for i := range n {
		id := fmt.Sprintf("f-%04d", i)
		body := map[string]any{"kind": "transition", "run": fmt.Sprintf("r%d", i), "status": "done", "text": strings.Repeat("x", 2048)}
		if _, _, err := q.Append(map[string]any{"id": id, "type": "run.followup", "body": body}); err != nil {
			t.Fatal(err)
		}
	}
	c, err := wire.Dial(agent, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Send(wire.Request{Op: "watch", Session: "s", Ack: true}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // not reading: the kernel's writes block
	seen := map[string]bool{}
	done := make(chan error, 1)
	go func() {
		for len(seen) < n {
			resp, err := c.Read()
			if err != nil {
				done <- err
				return
			}
			var f struct {
				ID string `json:"id"`
			}
			if resp.Decode(&f) != nil || f.ID == "" {
				continue // the opening line, keepalives
			}
			seen[f.ID] = true
			if err := c.Ack(f.ID); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		c.Close()
		<-done
		t.Fatalf("the watcher got %d of the %d queued follow-ups", len(seen), n)
	}
}
