package sessions_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/sessions"
)

// Names: a token stays itself (the follow-up queue's name was already
// that); anything else is hashed, stably.
func TestName(t *testing.T) {
	if got := sessions.Name("mcp-1a2b"); got != "mcp-1a2b" {
		t.Errorf("Name(mcp-1a2b) = %q", got)
	}
	a, b := sessions.Name("a b/c"), sessions.Name("a b/c")
	if a != b || !strings.HasPrefix(a, "s-") || strings.ContainsAny(a, " /") {
		t.Errorf("Name(a b/c) = %q, %q", a, b)
	}
	if got := sessions.Name(strings.Repeat("x", 101)); !strings.HasPrefix(got, "s-") {
		t.Errorf("a 101-byte id is not hashed: %q", got)
	}
}

// A record round-trips atomically; a session without one is active; a
// damaged record reads as none in List and as an error in Load.
func TestRecord(t *testing.T) {
	agent := t.TempDir()
	if r, err := sessions.Load(agent, "s1"); r != nil || err != nil || sessions.Suspended(agent, "s1") {
		t.Fatalf("no record: %v %v", r, err)
	}
	now := time.Now().UTC()
	rec := &sessions.Record{Session: "s1", State: sessions.StateSuspended, Since: now, SuspendedAt: now, By: "session:s1", Runs: 3, Suspends: 1}
	if err := rec.Save(agent); err != nil {
		t.Fatal(err)
	}
	got, err := sessions.Load(agent, "s1")
	if err != nil || got.State != sessions.StateSuspended || !got.SuspendedAt.Equal(now) || got.Runs != 3 || !got.Held() {
		t.Fatalf("loaded %+v, %v", got, err)
	}
	if !sessions.Suspended(agent, "s1") {
		t.Error("Suspended(s1) = false")
	}
	got.State = sessions.StateResuming
	got.Save(agent)
	if sessions.Suspended(agent, "s1") || !got.Held() {
		t.Error("a resuming session: its runs go on, its messages are still held")
	}
	os.WriteFile(sessions.Path(agent, "bad", sessions.RecordSuffix), []byte("{"), 0o600)
	if _, err := sessions.Load(agent, "bad"); err == nil {
		t.Error("a damaged record loads without an error")
	}
	list, err := sessions.List(agent)
	if err != nil || len(list) != 1 || list[0].Session != "s1" {
		t.Errorf("List = %v, %v; want only s1", list, err)
	}
}

// Touch creates the activity stamp, then moves its time; calls from
// inside a run are not the session's activity.
func TestActivity(t *testing.T) {
	agent := t.TempDir()
	if !sessions.LastActivity(agent, "s1").IsZero() {
		t.Fatal("activity before any call")
	}
	sessions.Touch(agent, "s1")
	first := sessions.LastActivity(agent, "s1")
	if time.Since(first) > time.Minute {
		t.Fatalf("activity %v", first)
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(sessions.Path(agent, "s1", sessions.ActivitySuffix), old, old)
	sessions.Touch(agent, "s1")
	if !sessions.LastActivity(agent, "s1").After(old.Add(time.Minute)) {
		t.Error("Touch did not move the activity time")
	}
	if !sessions.Caller([]string{"HOME=/x", "PI_ACTORS_RUN_ID="}) || sessions.Caller([]string{"PI_ACTORS_RUN_ID=r1"}) || sessions.Caller([]string{sessions.RemoteRunEnv + "=r1@a"}) {
		t.Error("Caller: a run's call (here or from another node) counted as the session's, or an empty run id as a run")
	}
}
