package actors_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/actors"
	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/rooms"
	"github.com/pi-actors/pi-actors/verbs/wire"
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

// TestRoomActorRetires: a room actor without subscribers or posts stops
// after Config.RoomIdle (kernel status counts room_actors), and the next
// watch starts another that sees new entries.
func TestRoomActorRetires(t *testing.T) {
	k := startTB(t, func(c *actors.Config) { c.RoomIdle = 300 * time.Millisecond })
	k.spawn("s1", "ri", "sleep-forever", nil)
	roomActors := func() int {
		var st struct {
			RoomActors *int `json:"room_actors"`
		}
		if r := k.call("status", "", nil); r.Error != nil || json.Unmarshal(r.Result, &st) != nil || st.RoomActors == nil {
			t.Fatalf("status: %+v", r)
		}
		return *st.RoomActors
	}
	post := func(body string) {
		if r := k.call("message", "s1", map[string]any{"to": "room:ri", "type": "chat.message", "from": "run:ri", "body": body}); r.Error != nil {
			t.Fatal(r.Error)
		}
	}
	c, err := wire.Dial(k.agent, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	params, _ := json.Marshal(map[string]any{"target": "room:ri"})
	if err := c.Send(wire.Request{Op: "watch_room", Session: "s1", Params: params}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(); err != nil {
		t.Fatal(err)
	}
	post("one")
	// With a subscriber the actor stays, however long it is quiet.
	time.Sleep(800 * time.Millisecond)
	if n := roomActors(); n != 1 {
		t.Fatalf("room actors with a subscriber: %d", n)
	}
	c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for roomActors() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the room actor did not retire")
		}
		time.Sleep(50 * time.Millisecond)
	}
	follow := watchRoom(t, k.agent, "room:ri")
	post("two")
	if got := follow(1); len(got) != 1 || got[0].Body != "two" {
		t.Fatalf("after the restart: %+v", got)
	}
	if n := roomActors(); n != 1 {
		t.Fatalf("room actors after a new watch: %d", n)
	}
}
