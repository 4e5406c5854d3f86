package swarm

import (
	"reflect"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/runs"
)

// TestLockerStateLeases: claims skip tasks whose resources another owner
// holds; an expired lease goes back to the front of the queue (attempts
// counted) and frees its resources; finishing releases them; the state
// survives a reload from its files.
func TestLockerStateLeases(t *testing.T) {
	dir := runs.Dir(t.TempDir())
	s, err := loadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, id := range []string{"t1", "t2", "t3"} {
		res := []string{"db"}
		if id == "t3" {
			res = nil
		}
		s.q.Items = append(s.q.Items, Item{ID: id, Task: id, Resources: res, EnqueuedAt: stamp(now.Add(time.Duration(i) * time.Second))})
	}
	a := s.claim("a", time.Minute, now)
	b := s.claim("b", time.Minute, now)
	if a == nil || a.ID != "t1" || b == nil || b.ID != "t3" {
		t.Fatalf("claims: a=%+v b=%+v, want t1 then t3 (t2 waits for db)", a, b)
	}
	if s.claim("c", time.Minute, now) != nil {
		t.Fatal("t2 was leased while a holds db")
	}
	if err := s.save(); err != nil {
		t.Fatal(err)
	}
	if s, err = loadState(dir); err != nil {
		t.Fatal(err)
	}
	changes := s.expire(now.Add(2 * time.Minute))
	if len(changes) != 3 { // t1, t3, and the db lock
		t.Fatalf("expired %v", changes)
	}
	ids := []string{}
	for _, it := range s.q.Items {
		ids = append(ids, it.ID)
	}
	if !reflect.DeepEqual(ids, []string{"t1", "t3", "t2"}) || s.q.Items[0].Attempts != 1 || len(s.locks) != 0 {
		t.Fatalf("after expiry: queue %v (attempts %d), locks %v", ids, s.q.Items[0].Attempts, s.locks)
	}
	later := now.Add(3 * time.Minute)
	c := s.claim("c", time.Minute, later)
	if c == nil || c.ID != "t1" || s.locks["db"].Owner != "c" {
		t.Fatalf("takeover: %+v, locks %v", c, s.locks)
	}
	s.finish(c, false, "", false)
	if s.q.Completed["t1"] != "c" || len(s.locks) != 0 || s.known("t1") != "completed" {
		t.Fatalf("finish: completed %v, locks %v", s.q.Completed, s.locks)
	}
	d := s.claim("d", time.Minute, later)
	s.finish(d, true, "boom", true)
	if d.ID != "t3" || s.q.Items[len(s.q.Items)-1].ID != "t3" || len(s.q.Failed) != 0 {
		t.Fatalf("retry: %+v, queue %+v", d, s.q.Items)
	}
}

// TestLockerStateWaiters: an owner waits once (a newer claim replaces
// its older one in place), waits end in order of their deadlines, unwait
// removes one owner's claim, and the waiters survive a reload.
func TestLockerStateWaiters(t *testing.T) {
	dir := runs.Dir(t.TempDir())
	s, err := loadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) string { return stamp(now.Add(d)) }
	s.wait(Waiter{Owner: "a", MessageID: "m1", Until: at(time.Minute)})
	s.wait(Waiter{Owner: "b", MessageID: "m2", Until: at(time.Second)})
	s.wait(Waiter{Owner: "a", MessageID: "m3", Until: at(2 * time.Second)})
	if got := s.nextWaitEnd(); !got.Equal(now.Add(time.Second)) {
		t.Fatalf("nextWaitEnd = %v, want %v", got, now.Add(time.Second))
	}
	if err := s.save(); err != nil {
		t.Fatal(err)
	}
	if s, err = loadState(dir); err != nil {
		t.Fatal(err)
	}
	ids := func(ws []Waiter) (out []string) {
		for _, w := range ws {
			out = append(out, w.Owner+"/"+w.MessageID)
		}
		return out
	}
	if got := ids(s.q.Waiting); !reflect.DeepEqual(got, []string{"a/m3", "b/m2"}) {
		t.Fatalf("waiting after reload = %v, want [a/m3 b/m2]", got)
	}
	if got := ids(s.waitOver(now.Add(time.Second))); !reflect.DeepEqual(got, []string{"b/m2"}) {
		t.Fatalf("waitOver at +1s = %v, want [b/m2]", got)
	}
	s.unwait("a")
	if len(s.q.Waiting) != 0 || !s.nextWaitEnd().IsZero() {
		t.Fatalf("after unwait: %v", s.q.Waiting)
	}
}
