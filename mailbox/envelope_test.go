package mailbox

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestNormalizeEnvelope(t *testing.T) {
	raw := map[string]any{
		"verbose":        true, // tool-only, dropped
		"summary":        42.5,
		"reply_to":       true,
		"correlation_id": json.Number("7"),
		"metadata":       map[string]any{"requires_response": true},
		"from":           " branch:r1/b1 ",
		"body":           map[string]any{"text": "<b>&"},
		"type":           " review:done ",
		"to":             "room:r1/main",
		"id":             "msg-1",
	}
	e, err := Normalize(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := Envelope{To: "room:r1", Type: "review:done", Body: map[string]any{"text": "<b>&"},
		CorrelationID: "7", From: "branch:r1/b1", Metadata: map[string]any{"requires_response": true},
		ReplyTo: "true", Summary: "42.5", ID: "msg-1"}
	gotJSON, _ := marshal(e)
	wantJSON := `{"to":"room:r1","type":"review:done","body":{"text":"<b>&"},"correlation_id":"7","from":"branch:r1/b1","metadata":{"requires_response":true},"reply_to":"true","summary":"42.5","id":"msg-1"}`
	if string(gotJSON) != wantJSON {
		t.Fatalf("marshal:\n got %s\nwant %s", gotJSON, wantJSON)
	}
	wantMarshal, _ := marshal(want)
	if string(wantMarshal) != wantJSON {
		t.Fatalf("want envelope marshals as %s", wantMarshal)
	}
	// Normalized is idempotent and UnmarshalJSON normalizes.
	var back Envelope
	if err := json.Unmarshal(gotJSON, &back); err != nil {
		t.Fatal(err)
	}
	if b2, _ := marshal(back); string(b2) != wantJSON {
		t.Fatalf("round trip: %s", b2)
	}
}

func TestEnvelopeMinimalAndNullBody(t *testing.T) {
	e, err := ParseEnvelope([]byte(`{"to":"run:x","type":"run.message","body":null}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(e)
	if string(b) != `{"to":"run:x","type":"run.message","body":null}` {
		t.Fatalf("got %s", b)
	}
	e, _ = ParseEnvelope([]byte(`{"to":"run:x","type":"t","from":""}`))
	if b, _ := json.Marshal(e); string(b) != `{"to":"run:x","type":"t"}` {
		t.Fatalf("empty from must be absent: %s", b)
	}
}

func TestEnvelopeErrors(t *testing.T) {
	cases := []struct {
		in, field, want string
	}{
		{`[1]`, "", "actor message must be an object"},
		{`"x"`, "", "actor message must be an object"},
		{`{"to":"run:x"`, "", "not valid JSON"},
		{`{"to":"run:x","type":"t"} {}`, "", "trailing data"},
		{`{"type":"t"}`, "to", "message.to is required"},
		{`{"to":"  ","type":"t"}`, "to", "message.to is required"},
		{`{"to":5,"type":"t"}`, "to", "message.to must be a string"},
		{`{"to":"run:x"}`, "type", "message.type is required"},
		{`{"to":"run:x","type":""}`, "type", "message.type is required"},
		{`{"to":"run:x","type":["a"]}`, "type", "message.type must be a string"},
		{`{"to":"run:x","type":"1abc"}`, "type", `message.type contains unsupported characters: "1abc"`},
		{`{"to":"run:x","type":"a b"}`, "type", "message.type contains unsupported characters"},
		{`{"to":"run:x","type":"t","from":7}`, "from", "message.from must be a string"},
		{`{"to":"run:x","type":"t","from":"file:x"}`, "from", `unsupported actor address kind "file"`},
		{`{"to":"run:","type":"t"}`, "to", "run address is required"},
		{`{"to":"session:","type":"t"}`, "to", "session address is required"},
		{`{"to":"run:x","type":"t","metadata":[1]}`, "metadata", "message metadata must be an object"},
		{`{"to":"run:x","type":"t","metadata":"m"}`, "metadata", "message metadata must be an object"},
		{`{"to":"run:x","type":"t","metadata":null}`, "metadata", "message metadata must be an object"},
		{`{"to":"run:x","type":"t","summary":{"a":1}}`, "summary", "message.summary must be a string, number or boolean"},
		{`{"to":"run:x","type":"t","id":"a/b"}`, "id", "message.id contains unsupported characters"},
		{`{"to":"run:x","type":"t","id":".."}`, "id", "message.id contains unsupported characters"},
	}
	for _, c := range cases {
		_, err := ParseEnvelope([]byte(c.in))
		var ee *EnvelopeError
		if !errors.As(err, &ee) {
			t.Errorf("%s: got %v, want *EnvelopeError", c.in, err)
			continue
		}
		if !errors.Is(err, ErrInvalid) || ee.Field != c.field || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got field %q error %q, want field %q containing %q", c.in, ee.Field, err, c.field, c.want)
		}
	}
	// An address error stays reachable.
	_, err := ParseEnvelope([]byte(`{"to":"room:r/x","type":"t"}`))
	var ae *AddressError
	if !errors.As(err, &ae) {
		t.Fatalf("want a wrapped *AddressError, got %v", err)
	}
	if _, err := Normalize(nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("nil message: %v", err)
	}
}
