package verbs

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pi-actors/pi-actors/internal/fsutil"
	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/rooms"
	"github.com/pi-actors/pi-actors/runs"
)

// big is a 5 MiB body, as a message stored before bodies were bounded.
var big = strings.Repeat("q", 5<<20)

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := fsutil.MarshalCompact(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A small record is shown exactly as it is: the same value, so the same
// JSON (an object body stays an object).
func TestBoundRecordKeepsSmall(t *testing.T) {
	rec := mailbox.Record{"id": "m1", "type": "note.x", "body": map[string]any{"k": []any{1, 2}}, "summary": strings.Repeat("s", 4096)}
	got := boundRecord(rec, cutWhere{File: "/f", ID: "m1"})
	if !reflect.DeepEqual(got, rec) {
		t.Fatalf("small record changed: %#v", got)
	}
	e := rooms.Entry{Envelope: mailbox.Envelope{To: "room:r", Type: "t", Body: "hi", ID: "e1"}, ReceivedAt: "2026-01-01T00:00:00Z"}
	if got := boundRecord(e, cutWhere{}); !reflect.DeepEqual(got, e) {
		t.Fatalf("small entry changed: %#v", got)
	}
}

func TestBoundRecordCutsAndPlaces(t *testing.T) {
	rec := mailbox.Record{"id": "m1", "type": "note.x", "body": big, "status": "queued"}
	b := mustJSON(t, boundRecord(rec, cutWhere{File: "/s/inbox.jsonl", ID: "m1"}))
	if len(b) > 4<<10 {
		t.Fatalf("bounded record is %d bytes", len(b))
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	body, _ := out["body"].(string)
	if !strings.HasPrefix(body, strings.Repeat("q", viewPreviewBytes)) || !strings.HasSuffix(body, "…[cut: 5242880 bytes; whole in /s/inbox.jsonl id=m1]") {
		t.Errorf("preview: %.80q…%q", body, body[len(body)-80:])
	}
	want := map[string]any{"bytes": float64(5 << 20), "type": "string", "file": "/s/inbox.jsonl", "id": "m1"}
	if !reflect.DeepEqual(out["body_cut"], want) {
		t.Errorf("body_cut = %v, want %v", out["body_cut"], want)
	}
	if out["id"] != "m1" || out["status"] != "queued" || out["type"] != "note.x" {
		t.Errorf("other fields lost: %v", out)
	}
	// the order is kept, the note right after its value
	if s := string(b); !(strings.Index(s, `"body"`) < strings.Index(s, `"body_cut"`) && strings.Index(s, `"body_cut"`) < strings.Index(s, `"id"`)) {
		t.Errorf("order: %.200s", s)
	}

	// an object body: its compact JSON's start, type object; the line
	// when there is no id
	obj := map[string]any{"to": "run:r", "body": map[string]any{"x": big}}
	b = mustJSON(t, boundRecord(obj, cutWhere{File: "/s/outbox.jsonl", Line: 7}))
	if !strings.Contains(string(b), `"body":"{\"x\":\"qqq`) || !strings.Contains(string(b), `"body_cut":{"bytes":5242888,"type":"object","file":"/s/outbox.jsonl","line":7}`) {
		t.Errorf("object body: %.300s", b)
	}
}

// A record whose values are each under the value bound but together over
// the record bound has its largest values cut until it fits.
func TestBoundRecordTotal(t *testing.T) {
	rec := map[string]any{}
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		rec[k] = strings.Repeat(k, 4000)
	}
	b := mustJSON(t, boundRecord(rec, cutWhere{File: "/f"}))
	if len(b) > viewRecordBytes {
		t.Fatalf("record is %d bytes, more than %d", len(b), viewRecordBytes)
	}
	if !strings.Contains(string(b), `"a_cut":{"bytes":4000,"type":"string","file":"/f"}`) {
		t.Errorf("no cut note: %.300s", b)
	}
}

// A dead letter keeps its message an object: the message's body is cut.
func TestBoundDeadLetterNested(t *testing.T) {
	d := rooms.DeadLetterRecord{ID: "d1", Reason: "ttl_expired", TS: "t", Message: map[string]any{"to": "run:r", "type": "x", "body": big}}
	b := mustJSON(t, boundRecord(d, cutWhere{File: "/s/dead_letters.jsonl", ID: "d1"}, "message"))
	var out struct {
		ID      string         `json:"id"`
		Message map[string]any `json:"message"`
	}
	if err := json.Unmarshal(b, &out); err != nil || len(b) > 4<<10 {
		t.Fatalf("%d bytes, %v: %.300s", len(b), err, b)
	}
	if out.ID != "d1" || out.Message["to"] != "run:r" || out.Message["body_cut"] == nil {
		t.Errorf("dead letter: %.400s", b)
	}
}

func TestFollowupWhere(t *testing.T) {
	for _, c := range []struct {
		run, kind, id string
		want          cutWhere
	}{
		{"r.1", "message", "r.1.1795.rec-7", cutWhere{File: "/s/outbox.jsonl", ID: "rec-7"}},
		{"r", "message", "r.1795.outbox.4", cutWhere{File: "/s/outbox.jsonl", Line: 5}},
		{"r", "message", "o-abcdef", cutWhere{File: "/s/outbox.jsonl"}},
		{"r", "transition", "r.1795.done", cutWhere{File: "/s/result.json"}},
	} {
		if got := followupWhere(c.run, c.kind, c.id, "/s"); got != c.want {
			t.Errorf("followupWhere(%q, %q, %q) = %+v, want %+v", c.run, c.kind, c.id, got, c.want)
		}
	}
	f := Followup{ID: "r.1795.rec-7", Kind: "message", Run: "r", Summary: strings.Repeat("s", 100000), Text: "run:r: …", Body: big, StateDir: "/s"}
	raw := boundFollowupJSON(mustJSON(t, f))
	if len(raw) > 8<<10 {
		t.Fatalf("follow-up is %d bytes", len(raw))
	}
	var back Followup // what watch's front doors decode: the note is in the preview
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(back.Body.(string), "[cut: 5242880 bytes; whole in /s/outbox.jsonl id=rec-7]") ||
		!strings.HasSuffix(back.Summary, "[cut: 100000 bytes; whole in /s/outbox.jsonl id=rec-7]") || back.Text != f.Text {
		t.Errorf("follow-up: %.400s", raw)
	}
	small := mustJSON(t, Followup{ID: "x", Body: "hi"})
	if got := boundFollowupJSON(small); string(got) != string(small) {
		t.Errorf("small follow-up changed: %s", got)
	}
}

// The run views on real files: an inbox and an outbox holding 5 MiB
// bodies (written before bodies were bounded) give small JSON.
func TestRunViewsBounded(t *testing.T) {
	dir := t.TempDir()
	in := &runs.Info{Dir: runs.Dir(dir), Meta: &runs.Meta{Run: "r"}, Status: runs.StatusRunning}
	inbox := filepath.Join(dir, runs.InboxFile)
	for i, body := range []any{big, map[string]any{"k": []any{1, 2}}} {
		if err := mailbox.Append(inbox, map[string]any{"to": "run:r", "type": "note.x", "body": body, "id": []string{"big", "small"}[i]}); err != nil {
			t.Fatal(err)
		}
	}
	out, err := runMailboxView(in, 40)
	if err != nil {
		t.Fatal(err)
	}
	b := mustJSON(t, out.details)
	if len(b) > 8<<10 || !strings.Contains(string(b), `"body_cut":{"bytes":5242880,"type":"string","file":"`+inbox+`","id":"big"}`) ||
		!strings.Contains(string(b), `"body":{"k":[1,2]}`) {
		t.Errorf("view=mailbox: %d bytes: %.600s", len(b), b)
	}
	outbox := filepath.Join(dir, runs.OutboxFile)
	if _, err := mailbox.AppendOutbox(outbox, mailbox.OutboxRecord{ID: "o1", Event: "note.x", Summary: strings.Repeat("s", 100000), Body: big}); err != nil {
		t.Fatal(err)
	}
	out, err = runMessagesView(in, 40)
	if err != nil {
		t.Fatal(err)
	}
	b = mustJSON(t, out.details)
	if len(b) > 8<<10 || !strings.Contains(string(b), `"summary_cut":{"bytes":100000,"type":"string","file":"`+outbox+`","id":"o1"}`) {
		t.Errorf("view=messages: %d bytes: %.600s", len(b), b)
	}
}

// The send check every front door and the kernel share: Validate (CLI,
// MCP) and Envelope (the kernel) refuse a body over 1 MiB with 65
// invalid_envelope, the field, its size and the limit in details.
func TestMessageRefusesLargeBody(t *testing.T) {
	m := &Message{To: "run:r", Type: "note.x", Body: json.RawMessage(`"` + big + `"`)}
	for _, err := range []error{m.Validate(), func() error { _, err := m.Envelope(); return err }()} {
		e := Classify(err)
		if e.Exit != ExitDataErr || e.Code != "invalid_envelope" || !strings.Contains(e.Message, "message.body is 5242882 bytes") ||
			!reflect.DeepEqual(e.Details, map[string]any{"field": "body", "bytes": 5242882, "limit": mailbox.MaxBodyBytes}) {
			t.Errorf("got %+v", e)
		}
	}
	m.Body = json.RawMessage(`{"path":"/abs/report.json"}`)
	if err := m.Validate(); err != nil {
		t.Errorf("a path body: %v", err)
	}
}
