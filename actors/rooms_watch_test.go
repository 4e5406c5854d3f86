package actors_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/rooms"
)

// TestRoomWatchSeesEveryWriter: a room's watchers get the entries the
// kernel appends and those another process appends to the timeline
// directly (the room actor sees them through inotify), each once and in
// order, and a second watcher subscribed later starts at its own time.
func TestRoomWatchSeesEveryWriter(t *testing.T) {
	k := startTB(t)
	k.spawn("s1", "wr", "sleep-forever", nil)
	dir := filepath.Join(k.agent, "tmp", "pi-actors", "runs", "wr")
	first := watchRoom(t, k.agent, "room:wr")
	var lat []time.Duration
	for i := range 10 {
		var sent time.Time
		if i%2 == 0 {
			sent = time.Now()
			if r := k.call("message", "s1", map[string]any{"to": "room:wr", "type": "chat.message", "from": "run:wr", "body": i}); r.Error != nil {
				t.Fatal(r.Error)
			}
		} else {
			sent = time.Now()
			if _, err := rooms.Post(dir, mailbox.Envelope{To: "room:wr", Type: "chat.message", From: "branch:wr/x", Body: i}, nil); err != nil {
				t.Fatal(err)
			}
		}
		got := first(1)
		lat = append(lat, time.Since(sent))
		if len(got) != 1 || fmt.Sprint(got[0].Body) != fmt.Sprint(i) {
			t.Fatalf("entry %d: got %+v", i, got)
		}
	}
	t.Logf("append → watcher latency (kernel, direct, …): %v", lat)
	second := watchRoom(t, k.agent, "room:wr")
	k.call("message", "s1", map[string]any{"to": "room:wr", "type": "chat.message", "from": "run:wr", "body": "late"})
	for _, follow := range []func(int) []rooms.Entry{first, second} {
		if got := follow(1); len(got) != 1 || got[0].Body != "late" {
			t.Fatalf("got %+v, want the late entry only", got)
		}
	}
}
