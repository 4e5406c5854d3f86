package rooms

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pi-actors/pi-actors/mailbox"
)

// stamps replaces timestamps and uuids so texts compare exactly.
var stamps = regexp.MustCompile(`\d{4}-\d\d-\d\dT[\d:.]+Z|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

func scrub(s string) string { return stamps.ReplaceAllString(s, "T") }

func TestEmptyViews(t *testing.T) {
	dir := t.TempDir()
	s, err := Status(dir)
	if err != nil || s.Text() != "room=main messages=0 roster=0" {
		t.Fatalf("status: %q %v", s.Text(), err)
	}
	m, _ := Messages(dir, 0)
	p, _ := Previews(dir, 0)
	r, _ := RosterOf(dir, 0)
	c, _ := ContactsOf(dir, "", 0)
	mb, _ := BranchMailbox(dir, "branch:r/w", 0)
	cm, _ := Communication(dir, "")
	dl, _ := DeadLetters(filepath.Join(dir, DeadLettersFile), 0)
	for got, want := range map[string]string{
		m.Text(): "(no room messages)", p.Text(): "(no room message previews)", r.Text(): "(no room members)",
		c.Text(): "(no room contacts)", mb.Text(): "(no branch inbox messages)", cm.Text(): "(no communication snapshot)",
		dl.Text(): "(no dead letters)",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	// JSON details have lists, never null.
	for _, v := range []any{m, p, r, c, mb} {
		b, _ := json.Marshal(v)
		if strings.Contains(string(b), "null") {
			t.Errorf("%T details: %s", v, b)
		}
	}
}

func TestRoomViewsText(t *testing.T) {
	dir := t.TempDir()
	EnsureDefaultRoom(dir, "r")
	long := strings.Repeat("word ", 100)
	post(t, dir, mailbox.Envelope{To: "room:r", Type: "chat.message", From: "branch:r/a", Summary: "two  words",
		Body: map[string]any{"role": "reviewer", "caps": []any{"go", "sql"}, "claim": "lint x", "note": long}})
	post(t, dir, mailbox.Envelope{To: "room:r", Type: "note", Body: "plain\ttext"})

	s, _ := Status(dir)
	if got := scrub(s.Text()); got != "room=main messages=3 roster=2 last_message_at=T last_type=note" {
		t.Fatalf("status: %q", got)
	}
	m, _ := Messages(dir, 0)
	lines := strings.Split(scrub(m.Text()), "\n")
	if lines[0] != `ts=T from=run:r to=room:r type=actor.join summary=Run_joined_default_room body={"role":"run","status":"present"}` {
		t.Fatalf("messages line 1: %q", lines[0])
	}
	if !strings.HasPrefix(lines[1], `ts=T from=branch:r/a to=room:r type=chat.message summary=two_words body={"caps":["go","sql"],"claim":"lint_x","note":"word_word_`) ||
		!strings.HasSuffix(lines[1], "…") || len([]rune(lines[1][strings.Index(lines[1], "body=")+5:])) != 160 {
		t.Fatalf("messages line 2: %q", lines[1])
	}
	if lines[2] != "ts=T from=<unknown> to=room:r type=note summary= body=plain_text" {
		t.Fatalf("messages line 3: %q", lines[2])
	}
	p, _ := Previews(dir, 2)
	if bp := p.Previews[0].BodyPreview; len([]rune(bp)) != 320 || !strings.HasSuffix(bp, "…") || strings.Contains(bp, "  ") {
		t.Fatalf("body_preview: %q", bp)
	}
	pl := strings.Split(scrub(p.Text()), "\n")
	if !strings.HasPrefix(pl[0], "ts=T from=branch:r/a to=room:r type=chat.message summary=two_words body={") || pl[1] != "ts=T to=room:r type=note body=plain_text" {
		t.Fatalf("previews: %q", pl)
	}
	if pl[2] != fmt.Sprintf("(last 2 of 3 lines; lines=3 shows more; all in %s)", TimelinePath(dir)) {
		t.Fatalf("previews trailer: %q", pl[2])
	}
	r, _ := RosterOf(dir, 0)
	if got := scrub(r.Text()); got != "address=run:r role=run    status=present last_seen=T\naddress=branch:r/a role=reviewer  caps=go,sql claim=lint_x status=present last_seen=T" {
		t.Fatalf("roster:\n%s", got)
	}
	c, _ := ContactsOf(dir, "run:r", 0)
	if got := c.Text(); got != "address=branch:r/a role=reviewer caps=go,sql claim=lint_x status=present" {
		t.Fatalf("contacts: %q", got)
	}
	cm, _ := Communication(dir, "")
	if got := scrub(cm.Text()); got != "self=run:r root=run:r rooms=1 updated_at=T" {
		t.Fatalf("communication: %q", got)
	}
	b, _ := json.Marshal(c)
	if string(b) != `{"contacts":[{"address":"branch:r/a","caps":["go","sql"],"claim":"lint x","role":"reviewer","status":"present"}],"total":1,"file":"`+filepath.Join(RoomDir(dir), RosterFile)+`"}` {
		t.Fatalf("contacts details: %s", b)
	}
}

func TestStatusDiagnostics(t *testing.T) {
	dir := t.TempDir()
	post(t, dir, mailbox.Envelope{To: "room:r", Type: "chat", From: "run:r", Summary: "hi there"})
	os.WriteFile(filepath.Join(RoomDir(dir), RosterFile), []byte("{broken"), 0o600)
	os.WriteFile(filepath.Join(RoomDir(dir), CompactionFile), []byte("[]"), 0o600)
	f, _ := os.OpenFile(TimelinePath(dir), os.O_APPEND|os.O_WRONLY, 0)
	for range 6 {
		f.WriteString("junk\n")
	}
	f.Close()
	s, err := Status(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.DiagnosticsCount != 8 || len(s.Diagnostics) != 5 || s.MessageCount != 7 || s.RosterCount != 0 {
		t.Fatalf("status: %+v", s)
	}
	if got := scrub(s.Text()); got != "room=main messages=7 roster=0 diagnostics=8 last_message_at=T last_from=run:r last_type=chat last_summary=hi_there" {
		t.Fatalf("text: %q", got)
	}
	// A post rewrites the corrupt roster and keeps the bad copy.
	post(t, dir, mailbox.Envelope{To: "room:r", Type: "chat", From: "run:r"})
	if r, err := LoadRoster(dir); err != nil || len(r) != 1 {
		t.Fatalf("roster after repair: %+v %v", r, err)
	}
	if data, _ := os.ReadFile(filepath.Join(RoomDir(dir), RosterFile+".corrupt")); string(data) != "{broken" {
		t.Fatalf("corrupt copy: %q", data)
	}
}

func TestBranchMailboxText(t *testing.T) {
	dir := t.TempDir()
	d := send(t, dir, "branch:r/w", "x")
	ClaimBranch(dir, "branch:r/w", "w1", 0)
	f, _ := os.OpenFile(BranchInboxPath(dir, "w"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("junk\n")
	f.Close()
	v, _ := BranchMailbox(dir, "branch:r/w", 0)
	got := scrub(v.Text())
	want := "id=" + scrub(d.InboxID) + " status=claimed type=task.assign from=run:r to=branch:r/w queued_at=T claimed_at=T\ncorrupted=1"
	if got != want {
		t.Fatalf("mailbox:\n got %q\nwant %q", got, want)
	}
}
