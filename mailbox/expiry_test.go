package mailbox

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestEnvelopeExpiryFields(t *testing.T) {
	e, err := ParseEnvelope([]byte(`{"to":"run:x","type":"t","ttl_ms":1500,"deadline":"2030-01-02T16:04:05+01:00","summary":"s","id":"a"}`))
	if err != nil {
		t.Fatal(err)
	}
	if e.TTL != 1500*time.Millisecond || !e.Deadline.Equal(time.Date(2030, 1, 2, 15, 4, 5, 0, time.UTC)) {
		t.Fatalf("ttl %v deadline %v", e.TTL, e.Deadline)
	}
	b, _ := json.Marshal(e)
	want := `{"to":"run:x","type":"t","deadline":"2030-01-02T15:04:05Z","summary":"s","ttl_ms":1500,"id":"a"}`
	if string(b) != want {
		t.Fatalf("marshal:\n got %s\nwant %s", b, want)
	}
	back, err := ParseEnvelope(b)
	if err != nil || back.TTL != e.TTL || !back.Deadline.Equal(e.Deadline) {
		t.Fatalf("round trip: %+v %v", back, err)
	}
	// A digit string is accepted (CLI key=value); a Go TTL is rounded up to
	// whole milliseconds.
	e, err = ParseEnvelope([]byte(`{"to":"run:x","type":"t","ttl_ms":" 20 "}`))
	if err != nil || e.TTL != 20*time.Millisecond {
		t.Fatalf("string ttl: %v %v", e.TTL, err)
	}
	e, err = Envelope{To: "run:x", Type: "t", TTL: 1500 * time.Microsecond}.Normalized()
	if err != nil || e.TTL != 2*time.Millisecond {
		t.Fatalf("rounding: %v %v", e.TTL, err)
	}
	// Without the fields nothing changes.
	e, _ = ParseEnvelope([]byte(`{"to":"run:x","type":"t"}`))
	if b, _ := json.Marshal(e); string(b) != `{"to":"run:x","type":"t"}` {
		t.Fatalf("plain envelope: %s", b)
	}
}

func TestEnvelopeExpiryErrors(t *testing.T) {
	for _, c := range []struct{ in, field, want string }{
		{`{"to":"run:x","type":"t","ttl_ms":0}`, "ttl_ms", "positive whole number"},
		{`{"to":"run:x","type":"t","ttl_ms":-5}`, "ttl_ms", "positive whole number"},
		{`{"to":"run:x","type":"t","ttl_ms":1.5}`, "ttl_ms", "positive whole number"},
		{`{"to":"run:x","type":"t","ttl_ms":"soon"}`, "ttl_ms", "positive whole number"},
		{`{"to":"run:x","type":"t","ttl_ms":true}`, "ttl_ms", "positive whole number"},
		{`{"to":"run:x","type":"t","ttl_ms":[1]}`, "ttl_ms", "positive whole number"},
		{`{"to":"run:x","type":"t","ttl_ms":99999999999999999999}`, "ttl_ms", "at most"},
		{`{"to":"run:x","type":"t","deadline":"tomorrow"}`, "deadline", "RFC 3339"},
		{`{"to":"run:x","type":"t","deadline":17}`, "deadline", "RFC 3339"},
	} {
		_, err := ParseEnvelope([]byte(c.in))
		var ee *EnvelopeError
		if !errors.As(err, &ee) || !errors.Is(err, ErrInvalid) || ee.Field != c.field || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want field %s error containing %q", c.in, err, c.field, c.want)
		}
	}
	if _, err := (Envelope{To: "run:x", Type: "t", TTL: -time.Second}).Normalized(); !errors.Is(err, ErrInvalid) {
		t.Errorf("negative Go TTL: %v", err)
	}
}

func TestEnvelopeExpiredAt(t *testing.T) {
	acc := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	e := Envelope{TTL: time.Second}
	if exp, _ := e.ExpiredAt(acc, acc.Add(999*time.Millisecond)); exp {
		t.Fatal("expired before its ttl")
	}
	if exp, why := e.ExpiredAt(acc, acc.Add(time.Second)); !exp || why != "ttl_expired" {
		t.Fatalf("at its ttl: %v %s", exp, why)
	}
	e = Envelope{Deadline: acc.Add(time.Minute), TTL: time.Hour}
	if exp, why := e.ExpiredAt(acc, acc.Add(2*time.Minute)); !exp || why != "deadline_passed" {
		t.Fatalf("past its deadline: %v %s", exp, why)
	}
	if exp, _ := (Envelope{}).ExpiredAt(acc, acc.Add(1000*time.Hour)); exp {
		t.Fatal("an envelope without bounds expired")
	}
}
