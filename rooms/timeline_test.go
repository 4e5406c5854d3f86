package rooms

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/mailbox"
)

// readLines returns the well-formed lines of a JSONL file as maps and the
// malformed ones as raw strings.
func readLines(t *testing.T, path string) (recs []map[string]any, bad []string) {
	t.Helper()
	lines, err := mailbox.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		if l.Err != nil {
			bad = append(bad, string(l.Raw))
			continue
		}
		recs = append(recs, l.Value)
	}
	return recs, bad
}

func post(t *testing.T, dir string, env mailbox.Envelope) AppendResult {
	t.Helper()
	res, err := Append(dir, env)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The default room is made by EnsureDefaultRoom (a reused state
// directory) or SeedDefaultRoom (a new one, before it is published): the
// same room either way, and EnsureDefaultRoom after either changes
// nothing.
func TestEnsureDefaultRoom(t *testing.T) {
	for name, make := range map[string]func(dir string) error{
		"ensure": func(dir string) error {
			c, err := EnsureDefaultRoom(dir, "r1")
			if err == nil && c != (Counts{MessageCount: 1, RosterCount: 1}) {
				err = fmt.Errorf("counts %+v", c)
			}
			return err
		},
		"seed": func(dir string) error { return SeedDefaultRoom(dir, "r1") },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := make(dir); err != nil {
				t.Fatalf("first: %v", err)
			}
			checkDefaultRoom(t, dir)
		})
	}
	// Seeding is for a new directory only: it never writes over a room.
	dir := t.TempDir()
	EnsureDefaultRoom(dir, "r1")
	if err := SeedDefaultRoom(dir, "r1"); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("seed over an existing room: %v", err)
	}
}

func checkDefaultRoom(t *testing.T, dir string) {
	t.Helper()
	c, err := EnsureDefaultRoom(dir, "r1")
	if err != nil || c != (Counts{MessageCount: 1, RosterCount: 1}) {
		t.Fatalf("again: %+v %v", c, err)
	}
	recs, _ := readLines(t, TimelinePath(dir))
	e := recs[0]
	if e["to"] != "room:r1" || e["type"] != "actor.join" || e["from"] != "run:r1" || e["summary"] != RunJoinSummary || e["id"] == nil || e["received_at"] == nil {
		t.Fatalf("join entry: %v", e)
	}
	if b := e["body"].(map[string]any); b["role"] != "run" || b["status"] != "present" {
		t.Fatalf("join body: %v", b)
	}
	r, _ := LoadRoster(dir)
	if len(r) != 1 || r[0].Address != "run:r1" || r[0].Role != "run" || r[0].Status != "present" || r[0].JoinedAt != r[0].LastSeen {
		t.Fatalf("roster: %+v", r)
	}
	s, err := LoadSnapshot(filepath.Join(dir, CommunicationFile))
	if err != nil || s == nil {
		t.Fatalf("snapshot: %v %v", s, err)
	}
	if s.Self != "run:r1" || s.Root != "run:r1" || s.Parent != "" || len(s.Contacts) != 0 || len(s.Rooms) != 1 ||
		s.Rooms[0].Address != "room:r1" || s.Rooms[0].Name != "main" || len(s.Rooms[0].Members) != 1 {
		t.Fatalf("snapshot: %+v", s)
	}
	data, _ := os.ReadFile(filepath.Join(dir, CommunicationFile))
	if strings.Contains(string(data), "contacts") || strings.Contains(string(data), "parent") {
		t.Fatalf("empty contacts and parent must be omitted:\n%s", data)
	}
	// The run's own join at spawn rings no doorbell: no wake.jsonl.
	if _, err := os.Stat(filepath.Join(dir, WakeFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the default room's join wrote a wake: %v", err)
	}
	// A branch joining does ring.
	if _, joined, err := EnsureMember(dir, "r1", "branch:r1/b", branchJoinBody("r1"), BranchJoinSummary); err != nil || !joined {
		t.Fatalf("branch join: %v %v", joined, err)
	}
	wakes, _ := readLines(t, filepath.Join(dir, WakeFile))
	if len(wakes) != 1 || wakes[0]["reason"] != "room.message" || wakes[0]["actor"] != "room:r1" {
		t.Fatalf("wakes: %v", wakes)
	}
	if _, _, err := EnsureMember(dir, "r1", "run:other", nil, ""); !errors.Is(err, mailbox.ErrInvalid) {
		t.Fatalf("cross-run member: %v", err)
	}
}

func TestRosterRules(t *testing.T) {
	t.Setenv(EnvRosterMinMS, "0")
	dir := t.TempDir()
	from := "branch:r/a"
	send := func(typ string, body any) Member {
		t.Helper()
		post(t, dir, mailbox.Envelope{To: "room:r", Type: typ, From: from, Body: body})
		r, err := LoadRoster(dir)
		if err != nil {
			t.Fatal(err)
		}
		return r[r.Find(from)]
	}
	m := send("chat.message", "hello") // a string body sets nothing
	if m.Role != "actor" || m.Status != "present" || m.JoinedAt == "" {
		t.Fatalf("first post: %+v", m)
	}
	joined := m.JoinedAt
	m = send("chat.message", map[string]any{"role": "reviewer", "caps": []any{"go", "review"}, "claim": "file x.go", "display": "Rev", "parent": "run:r"})
	if m.Role != "reviewer" || strings.Join(m.Caps, ",") != "go,review" || m.Claim != "file x.go" || m.Display != "Rev" || m.Parent != "run:r" || m.JoinedAt != joined {
		t.Fatalf("fields: %+v", m)
	}
	m = send("status.update", map[string]any{"status": "busy"})
	if m.Status != "busy" || m.Role != "reviewer" {
		t.Fatalf("status: %+v", m)
	}
	m = send(TypeLeave, map[string]any{"role": "ignored", "caps": []any{"ignored"}})
	if m.Status != "left" || m.Role != "reviewer" || strings.Join(m.Caps, ",") != "go,review" || m.Claim != "file x.go" {
		t.Fatalf("leave: %+v", m)
	}
	m = send("chat.message", map[string]any{"note": "still here?"})
	if m.Status != "left" {
		t.Fatalf("leave status must stick: %+v", m)
	}
	m = send(TypeLeave, map[string]any{"status": "done"})
	if m.Status != "done" {
		t.Fatalf("leave with a status: %+v", m)
	}
	r, _ := LoadRoster(dir)
	if len(r) != 1 {
		t.Fatalf("leave removed or duplicated the member: %+v", r)
	}
	// A post without from changes nothing.
	res := post(t, dir, mailbox.Envelope{To: "room:r", Type: "system.note"})
	if res.RosterCount != 1 || res.MessageCount != 7 {
		t.Fatalf("counts: %+v", res.Counts)
	}
}

func TestRosterLastSeenCoalescing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(RoomDir(dir), RosterFile)
	t.Setenv(EnvRosterMinMS, "3600000")
	post(t, dir, mailbox.Envelope{To: "room:r", Type: "chat", From: "run:r"})
	before, _ := os.ReadFile(path)
	res := post(t, dir, mailbox.Envelope{To: "room:r", Type: "chat", From: "run:r"})
	after, _ := os.ReadFile(path)
	if string(before) != string(after) || res.RosterCount != 1 {
		t.Fatalf("a last_seen-only change was written within the interval (count %d)", res.RosterCount)
	}
	// A new member or a changed field is always written.
	post(t, dir, mailbox.Envelope{To: "room:r", Type: "chat", From: "run:r", Body: map[string]any{"role": "lead"}})
	if r, _ := LoadRoster(dir); r[0].Role != "lead" {
		t.Fatalf("field change not written: %+v", r)
	}
	res = post(t, dir, mailbox.Envelope{To: "room:r", Type: "chat", From: "branch:r/x"})
	if r, _ := LoadRoster(dir); len(r) != 2 || res.RosterCount != 2 {
		t.Fatalf("new member not written: %+v", r)
	}
	// Past the interval last_seen is written too.
	t.Setenv(EnvRosterMinMS, "0")
	last := post(t, dir, mailbox.Envelope{To: "room:r", Type: "chat", From: "run:r"})
	if r, _ := LoadRoster(dir); r[0].LastSeen != last.Entry.ReceivedAt {
		t.Fatalf("last_seen %s, want %s", r[0].LastSeen, last.Entry.ReceivedAt)
	}
}

func TestTimelineIDsAndTimes(t *testing.T) {
	dir := t.TempDir()
	first := post(t, dir, mailbox.Envelope{To: "room:r", Type: "chat", From: "run:r", ID: "m-1", Body: "x"})
	again := post(t, dir, mailbox.Envelope{To: "room:r", Type: "chat", From: "run:r", ID: "m-1", Body: "changed"})
	if first.Duplicate || !again.Duplicate || again.Entry.ReceivedAt != first.Entry.ReceivedAt || again.Entry.Body != "x" || again.MessageCount != 1 {
		t.Fatalf("retry: %+v then %+v", first, again)
	}
	var prev time.Time
	for range 200 {
		e := post(t, dir, mailbox.Envelope{To: "room:r", Type: "chat", From: "run:r"}).Entry
		if e.ID == "" || len(e.ReceivedAt) != len("2006-01-02T15:04:05.000000000Z") {
			t.Fatalf("entry %+v", e)
		}
		if !e.Time().After(prev) {
			t.Fatalf("received_at %s not after %s", e.ReceivedAt, prev)
		}
		prev = e.Time()
	}
	// Ids written by another writer (whatever their key order) count too,
	// also once this process has indexed the timeline.
	mailbox.Append(TimelinePath(dir), map[string]any{"id": "legacy-1", "type": "x"})
	if !post(t, dir, mailbox.Envelope{To: "room:r", Type: "chat", ID: "legacy-1"}).Duplicate {
		t.Fatal("an id written by another writer was not seen")
	}
	if post(t, dir, mailbox.Envelope{To: "room:r", Type: "chat", ID: "legacy-2"}).Duplicate {
		t.Fatal("a new id reported duplicate")
	}
	if _, err := Append(dir, mailbox.Envelope{To: "run:r", Type: "chat"}); !errors.Is(err, mailbox.ErrInvalid) {
		t.Fatalf("append to a run: %v", err)
	}
}

func TestCompaction(t *testing.T) {
	t.Setenv(EnvRoomMaxMessages, "5")
	dir := t.TempDir()
	post(t, dir, mailbox.Envelope{To: "room:r", Type: "chat", From: "run:r"})
	f, _ := os.OpenFile(TimelinePath(dir), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("not json\n")
	f.Close()
	var last AppendResult
	var ids []string
	for range 7 {
		last = post(t, dir, mailbox.Envelope{To: "room:r", Type: "chat", From: "run:r"})
		ids = append(ids, last.Entry.ID)
	}
	// The newest 5 entries stay, and the malformed line (it does not
	// count against the limit: torn lines never crowd entries out).
	recs, bad := readLines(t, TimelinePath(dir))
	if len(bad) != 1 || len(recs) != 5 || last.MessageCount != 6 {
		t.Fatalf("after compaction: %d entries, malformed %q, message_count %d", len(recs), bad, last.MessageCount)
	}
	for i, r := range recs {
		if r["id"] != ids[2+i] {
			t.Fatalf("kept %v, want the newest", r["id"])
		}
	}
	c, err := LoadCompaction(dir)
	if err != nil || c == nil || c.DroppedCount != 1 || c.MaxMessages != 5 || c.FirstKeptAt != recs[0]["received_at"] || c.LastKeptAt != last.Entry.ReceivedAt || c.CompactedAt == "" {
		t.Fatalf("compaction.json: %+v %v", c, err)
	}
	// Past 16 the slack applies: max 32 compacts at 35 lines, to 32.
	t.Setenv(EnvRoomMaxMessages, "32")
	dir = t.TempDir()
	for i := 1; i <= 35; i++ {
		res := post(t, dir, mailbox.Envelope{To: "room:r", Type: "chat", From: "run:r"})
		want := i
		if i == 35 {
			want = 32
		}
		if res.MessageCount != want {
			t.Fatalf("append %d: message_count %d, want %d", i, res.MessageCount, want)
		}
	}
}

func TestTornTailRepaired(t *testing.T) {
	dir := t.TempDir()
	post(t, dir, mailbox.Envelope{To: "room:r", Type: "chat", From: "run:r", Body: "before"})
	f, _ := os.OpenFile(TimelinePath(dir), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"to":"room:r","type":"chat","bo`)
	f.Close()
	res := post(t, dir, mailbox.Envelope{To: "room:r", Type: "chat", From: "run:r", Body: "after"})
	recs, bad := readLines(t, TimelinePath(dir))
	if len(recs) != 2 || recs[0]["body"] != "before" || recs[1]["body"] != "after" || len(bad) != 1 || res.MessageCount != 3 {
		t.Fatalf("entries %v, malformed %q", recs, bad)
	}
	s, err := Status(dir)
	if err != nil || s.DiagnosticsCount != 1 || !strings.Contains(s.Diagnostics[0], TimelinePath(dir)+":2:") {
		t.Fatalf("status: %+v %v", s, err)
	}
}

// Malformed lines, however many, never make a compaction drop the entry
// just appended.
func TestCompactionKeepsNewEntryPastMalformedLines(t *testing.T) {
	t.Setenv(EnvRoomMaxMessages, "1")
	dir := t.TempDir()
	post(t, dir, mailbox.Envelope{To: "room:r", Type: "chat", From: "run:r"})
	f, _ := os.OpenFile(TimelinePath(dir), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("torn 1\ntorn 2\n")
	f.Close()
	last := post(t, dir, mailbox.Envelope{To: "room:r", Type: "chat", From: "run:r"})
	recs, bad := readLines(t, TimelinePath(dir))
	if len(bad) != 2 || len(recs) != 1 || recs[0]["id"] != last.Entry.ID {
		t.Fatalf("timeline: %v, malformed %q", recs, bad)
	}
}

// Since reports a gap only when an entry newer than since was dropped,
// and compaction.json says so before the timeline is rewritten.
func TestSinceMissedOnlyForDroppedNewer(t *testing.T) {
	t.Setenv(EnvRoomMaxMessages, "3")
	dir := t.TempDir()
	var all []AppendResult
	for range 5 {
		all = append(all, post(t, dir, mailbox.Envelope{To: "room:r", Type: "chat", From: "run:r"}))
	}
	c, err := LoadCompaction(dir)
	if err != nil || c == nil || c.LastDroppedAt == "" {
		t.Fatalf("compaction.json: %+v %v", c, err)
	}
	// The newest dropped entry was seen: nothing missed.
	if r, err := Since(dir, c.LastDroppedAt, 0); err != nil || r.Missed || len(r.Entries) != 3 {
		t.Fatalf("since the newest dropped: missed=%v %d entries %v", r.Missed, len(r.Entries), err)
	}
	// Seen only an older one: the gap is reported.
	if r, _ := Since(dir, all[0].Entry.ReceivedAt, 0); !r.Missed {
		t.Fatalf("since the first entry: no gap reported (dropped up to %s)", c.LastDroppedAt)
	}
}

// A cursor that falls behind a compaction learns of the gap.
func TestCursorGapAcrossCompaction(t *testing.T) {
	t.Setenv(EnvRoomMaxMessages, "16")
	dir := t.TempDir()
	post(t, dir, mailbox.Envelope{To: "room:r", Type: "chat", From: "run:r"})
	c, err := NewCursor(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	post(t, dir, mailbox.Envelope{To: "room:r", Type: "chat", From: "run:r"})
	if got, _ := c.Next(); len(got) != 1 || c.Gap() {
		t.Fatalf("first: %d entries, gap %v", len(got), c.Gap())
	}
	for range 40 { // far past the limit: entries it never read are dropped
		post(t, dir, mailbox.Envelope{To: "room:r", Type: "chat", From: "run:r"})
	}
	got, err := c.Next()
	if err != nil || !c.Gap() || len(got) == 0 {
		t.Fatalf("after the compaction: %d entries, gap not reported, %v", len(got), err)
	}
	if c.Gap() {
		t.Fatal("the gap was reported twice")
	}
}

func TestNewest(t *testing.T) {
	dir := t.TempDir()
	if n, err := Newest(dir); err != nil || !n.IsZero() {
		t.Fatalf("empty: %v %v", n, err)
	}
	post(t, dir, mailbox.Envelope{To: "room:r", Type: "chat", From: "run:r"})
	last := post(t, dir, mailbox.Envelope{To: "room:r", Type: "chat", From: "run:r"})
	f, _ := os.OpenFile(TimelinePath(dir), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("torn {")
	f.Close()
	if n, err := Newest(dir); err != nil || formatTime(n) != last.Entry.ReceivedAt {
		t.Fatalf("newest %v, want %s (%v)", n, last.Entry.ReceivedAt, err)
	}
}
