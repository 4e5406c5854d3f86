package mailbox

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAppendOutbox(t *testing.T) {
	path := filepath.Join(t.TempDir(), "outbox.jsonl")
	rec, err := AppendOutbox(path, OutboxRecord{Type: "review.done", From: "run:r1", To: "coordinator", Body: "<ok>",
		Delivery: DeliveryNotify, Run: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Event != "review.done" || rec.Summary != "review.done" || rec.Level != LevelInfo || rec.ID == "" || rec.TS == "" {
		t.Fatalf("record: %+v", rec)
	}
	AppendOutbox(path, OutboxRecord{Event: "command.done", Data: map[string]any{"code": 0}, ID: "x", TS: "t", Summary: "s"})
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if !strings.HasPrefix(lines[0], `{"body":"<ok>","delivery":"notify","event":"review.done","from":"run:r1","id":"`) || strings.Contains(lines[0], `"run"`) {
		t.Fatalf("line 1: %s", lines[0])
	}
	if lines[1] != `{"data":{"code":0},"delivery":"log","event":"command.done","id":"x","level":"info","summary":"s","ts":"t"}` {
		t.Fatalf("line 2: %s", lines[1])
	}
	if r, _ := AppendOutbox(path, OutboxRecord{}); r.Event != DefaultEvent || r.Summary != DefaultEvent {
		t.Fatalf("empty record: %+v", r)
	}
	for _, bad := range []OutboxRecord{{Delivery: "shout"}, {Level: "fatal"}, {From: "file:x"}, {To: "room:r/x"}} {
		if _, err := AppendOutbox(path, bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("AppendOutbox(%+v): %v", bad, err)
		}
	}
}

func TestParseOutbox(t *testing.T) {
	r, err := ParseOutbox([]byte(`{"event":"  ","delivery":"loud","level":"debug","metadata":[1],"summary":"","body":{"a":1},"correlation_id":9}`), "r1", 4)
	if err != nil {
		t.Fatal(err)
	}
	if r.Event != DefaultEvent || r.Summary != DefaultEvent || r.ID != "r1:4" || r.Delivery != DeliveryLog ||
		r.Level != LevelInfo || r.Metadata != nil || r.TS != "1970-01-01T00:00:00.000Z" || r.CorrelationID != "9" || r.Run != "r1" {
		t.Fatalf("defaults: %+v", r)
	}
	r, _ = ParseOutbox([]byte(`{"event":" command.done ","delivery":"followup","level":"error","id":"e1","summary":"S","ts":"T","metadata":{"k":"v"},"from":"run:r1","to":"session:s","type":"x","reply_to":"y","data":[1]}`), "r1", 0)
	b, _ := json.Marshal(r)
	want := `{"data":[1],"delivery":"followup","event":"command.done","from":"run:r1","id":"e1","level":"error","metadata":{"k":"v"},"reply_to":"y","summary":"S","to":"session:s","ts":"T","type":"x"}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	if _, err := ParseOutbox([]byte(`[]`), "r1", 0); !errors.Is(err, ErrMalformed) {
		t.Fatalf("malformed: %v", err)
	}
}
