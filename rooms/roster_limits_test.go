package rooms

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-actors/pi-actors/mailbox"
)

// What a post sets for its sender is cut to the roster limits when it is
// stored, with a note naming the timeline entry that holds the whole; a
// later post that fits forgets the note. The views and the communication
// snapshots are bounded: lines= members, at most SnapshotMembers.
func TestRosterLimits(t *testing.T) {
	dir := t.TempDir()
	big := make([]any, 90000)
	for i := range big {
		big[i] = fmt.Sprintf("c%d", i)
	}
	caps := append([]any{strings.Repeat("x", 300)}, big...)
	p, err := Post(dir, mailbox.Envelope{To: "room:few", From: "branch:few/big", Type: "actor.join", ID: "huge",
		Body: map[string]any{"caps": caps, "display": strings.Repeat("é", 2000), "claim": map[string]any{"k": strings.Repeat("y", 5000)}, "role": strings.Repeat("r", 500)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = p
	r, err := LoadRoster(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := r[r.Find("branch:few/big")]
	if len(m.Caps) != MaxCaps || len(m.Caps[0]) > MaxCapBytes || len(m.Display) > MaxDisplayBytes || len(m.Claim) > MaxClaimBytes || len(m.Role) > MaxFieldBytes {
		t.Fatalf("member not bounded: %d caps, cap0 %d, display %d, claim %d, role %d", len(m.Caps), len(m.Caps[0]), len(m.Display), len(m.Claim), len(m.Role))
	}
	if !strings.HasSuffix(m.Display, "é…") {
		t.Fatalf("display not cut at a rune: %q", m.Display[len(m.Display)-8:])
	}
	if m.Cut["caps"] != "90001 entries, 64 kept, 1 cut to 128 bytes; whole in the room timeline, id huge" || !strings.HasPrefix(m.Cut["claim"], "5008 bytes, 1024 kept; whole in the room timeline, id huge") {
		t.Fatalf("cut notes: %v", m.Cut)
	}
	if st, _ := os.Stat(filepath.Join(RoomDir(dir), RosterFile)); st.Size() > 32<<10 {
		t.Fatalf("roster.json is %d bytes", st.Size())
	}
	// A later post that fits forgets the caps note, keeps the others.
	if _, err := Post(dir, mailbox.Envelope{To: "room:few", From: "branch:few/big", Type: "t", Body: map[string]any{"caps": []any{"go"}}}, nil); err != nil {
		t.Fatal(err)
	}
	r, _ = LoadRoster(dir)
	if m := r[r.Find("branch:few/big")]; len(m.Caps) != 1 || m.Cut["caps"] != "" || m.Cut["claim"] == "" {
		t.Fatalf("after a post that fits: %+v", m.Cut)
	}
	// Many members: the views show lines= of them, the snapshot at most
	// SnapshotMembers, each saying where the rest is.
	for i := range SnapshotMembers + 20 {
		if _, err := Post(dir, mailbox.Envelope{To: "room:few", From: fmt.Sprintf("branch:few/b%d", i), Type: "t"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	rv, _ := RosterOf(dir, 5)
	lines := strings.Split(rv.Text(), "\n")
	if len(rv.Roster) != 5 || len(lines) != 6 || !strings.HasPrefix(lines[5], "(last 5 of 121 lines; lines=") || !strings.HasSuffix(lines[5], filepath.Join(RoomDir(dir), RosterFile)+")") {
		t.Fatalf("roster lines=5: %d members\n%s", len(rv.Roster), rv.Text())
	}
	cv, _ := ContactsOf(dir, "", 5)
	if len(cv.Contacts) != 5 || cv.Total != 121 || len(strings.Split(cv.Text(), "\n")) != 6 {
		t.Fatalf("contacts lines=5:\n%s", cv.Text())
	}
	cm, err := Communication(dir, "")
	if err != nil || cm.Communication == nil {
		t.Fatal(cm, err)
	}
	s := cm.Communication
	if len(s.Rooms[0].Members) != SnapshotMembers || s.Rooms[0].MembersTotal != 121 || !strings.Contains(s.Rooms[0].Note, filepath.Join(RoomDir(dir), RosterFile)) ||
		len(s.Contacts) != SnapshotMembers || s.ContactsTotal != 121 {
		t.Fatalf("snapshot: %d members (total %d, note %q), %d contacts (total %d)", len(s.Rooms[0].Members), s.Rooms[0].MembersTotal, s.Rooms[0].Note, len(s.Contacts), s.ContactsTotal)
	}
	// A snapshot written before the limits is bounded as it is read.
	old := Snapshot{Root: "run:few", Self: "run:few", Rooms: []SnapshotRoom{{Address: "room:few", Name: Name}}}
	for i := range 3 * SnapshotMembers {
		a := fmt.Sprintf("branch:few/o%d", i)
		old.Rooms[0].Members = append(old.Rooms[0].Members, Member{Address: a, Claim: strings.Repeat("z", 9000)})
		old.Contacts = append(old.Contacts, Contact{Address: a, Claim: strings.Repeat("z", 9000)})
	}
	b, _ := json.Marshal(old)
	if err := os.WriteFile(filepath.Join(dir, CommunicationFile), b, 0o600); err != nil {
		t.Fatal(err)
	}
	cm, _ = Communication(dir, "")
	out, _ := json.Marshal(cm)
	if len(out) > 512<<10 || len(cm.Communication.Rooms[0].Members) != SnapshotMembers || cm.Communication.ContactsTotal != 3*SnapshotMembers {
		t.Fatalf("old snapshot read: %d bytes, %d members", len(out), len(cm.Communication.Rooms[0].Members))
	}
}
