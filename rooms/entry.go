package rooms

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/pi-actors/pi-actors/mailbox"
)

// TimeFormat is the format of received_at: RFC 3339 in UTC with a fixed
// nine-digit fraction, so timeline times also sort as strings.
const TimeFormat = "2006-01-02T15:04:05.000000000Z07:00"

// Entry is one room timeline entry: the room-visible envelope (its ID is
// the entry id) and the time the room received it. It is stored as the
// envelope's JSON with received_at last.
type Entry struct {
	mailbox.Envelope
	ReceivedAt string
}

// MarshalJSON writes the envelope in its key order, then received_at.
func (e Entry) MarshalJSON() ([]byte, error) {
	b, err := e.Envelope.MarshalJSON()
	if err != nil || e.ReceivedAt == "" {
		return b, err
	}
	ts, err := json.Marshal(e.ReceivedAt)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(b)+len(ts)+16)
	out = append(out, b[:len(b)-1]...)
	if len(b) > 2 {
		out = append(out, ',')
	}
	out = append(out, `"received_at":`...)
	out = append(append(out, ts...), '}')
	return out, nil
}

// UnmarshalJSON decodes a stored entry leniently: a line that is an
// object but not a valid envelope (an older writer's) keeps whatever
// fields it has.
func (e *Entry) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return fmt.Errorf("decode room entry: %w", err)
	}
	*e = entryFrom(m)
	return nil
}

// Time is ReceivedAt parsed (zero when missing or unparsable).
func (e Entry) Time() time.Time { return parseTime(e.ReceivedAt) }

// entryFrom reads a decoded timeline line.
func entryFrom(m map[string]any) Entry {
	env, err := mailbox.Normalize(m)
	if err != nil {
		env = mailbox.Envelope{To: str(m, "to"), Type: str(m, "type"), From: str(m, "from"), Summary: str(m, "summary"),
			CorrelationID: str(m, "correlation_id"), ReplyTo: str(m, "reply_to"), Body: m["body"], ID: str(m, "id")}
		env.Metadata, _ = m["metadata"].(map[string]any)
	}
	return Entry{Envelope: env, ReceivedAt: str(m, "received_at")}
}

// str is a string field of a decoded object ("" if absent or not a
// string).
func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

func formatTime(t time.Time) string { return t.UTC().Format(TimeFormat) }
