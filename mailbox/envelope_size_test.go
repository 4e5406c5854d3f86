package mailbox

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func sizeCase(t *testing.T, e Envelope) *EnvelopeError {
	t.Helper()
	err := e.CheckSize()
	if err == nil {
		return nil
	}
	var ee *EnvelopeError
	if !errors.As(err, &ee) || !errors.Is(err, ErrInvalid) {
		t.Fatalf("CheckSize error %T %v is not an *EnvelopeError matching ErrInvalid", err, err)
	}
	return ee
}

// What one message carries: at the limits accepted, one byte past refused
// naming the field, its size, the limit and the fix.
func TestCheckSizeLimits(t *testing.T) {
	base := Envelope{To: "run:r", Type: "note.x"}
	q := func(n int) string { return strings.Repeat("q", n) }
	for _, c := range []struct {
		name  string
		env   func(e Envelope) Envelope
		field string
		bytes int
	}{
		{"body at 1 MiB", func(e Envelope) Envelope { e.Body = q(MaxBodyBytes - 2); return e }, "", 0},
		{"body past 1 MiB", func(e Envelope) Envelope { e.Body = q(MaxBodyBytes - 1); return e }, "body", MaxBodyBytes + 1},
		{"body escapes count", func(e Envelope) Envelope { e.Body = strings.Repeat("\n", MaxBodyBytes/2); return e }, "body", MaxBodyBytes + 2},
		{"object body", func(e Envelope) Envelope { e.Body = map[string]any{"x": q(MaxBodyBytes)}; return e }, "body", MaxBodyBytes + 8},
		{"raw body", func(e Envelope) Envelope { e.Body = json.RawMessage(`[ "` + q(MaxBodyBytes) + `" ]`); return e }, "body", MaxBodyBytes + 4},
		{"raw body compacts", func(e Envelope) Envelope {
			e.Body = json.RawMessage(`"` + q(MaxBodyBytes-2) + `"` + strings.Repeat(" ", 100))
			return e
		}, "", 0},
		{"summary at 4 KiB", func(e Envelope) Envelope { e.Summary = q(MaxSummaryBytes); return e }, "", 0},
		{"summary past 4 KiB", func(e Envelope) Envelope { e.Summary = q(MaxSummaryBytes + 1); return e }, "summary", MaxSummaryBytes + 1},
		{"metadata past 64 KiB", func(e Envelope) Envelope { e.Metadata = map[string]any{"k": q(MaxMetadataBytes)}; return e }, "metadata", MaxMetadataBytes + 8},
		{"correlation_id", func(e Envelope) Envelope { e.CorrelationID = q(MaxFieldBytes + 1); return e }, "correlation_id", MaxFieldBytes + 1},
		{"reply_to", func(e Envelope) Envelope { e.ReplyTo = q(MaxFieldBytes + 1); return e }, "reply_to", MaxFieldBytes + 1},
		{"id", func(e Envelope) Envelope { e.ID = q(MaxFieldBytes + 1); return e }, "id", MaxFieldBytes + 1},
		{"type", func(e Envelope) Envelope { e.Type = "t" + q(MaxFieldBytes); return e }, "type", MaxFieldBytes + 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			ee := sizeCase(t, c.env(base))
			if c.field == "" {
				if ee != nil {
					t.Fatalf("refused: %v", ee)
				}
				return
			}
			if ee == nil {
				t.Fatal("accepted")
			}
			if ee.Field != c.field || ee.Bytes != c.bytes || ee.Limit == 0 {
				t.Errorf("field=%q bytes=%d limit=%d, want %q %d", ee.Field, ee.Bytes, ee.Limit, c.field, c.bytes)
			}
			if !strings.HasPrefix(ee.Msg, "message."+c.field+" is ") || !strings.Contains(ee.Msg, "more than") {
				t.Errorf("message: %s", ee.Msg)
			}
		})
	}
	ee := sizeCase(t, Envelope{To: "run:r", Type: "x", Body: q(5 << 20)})
	if ee == nil || !strings.Contains(ee.Msg, "write the content to a file") || !strings.Contains(ee.Msg, "send its path") {
		t.Errorf("the fix is not named: %v", ee)
	}
}

// Reading stored messages is not sending them: Normalize keeps a large
// body (an older writer's) readable, so claims and views still work.
func TestNormalizeDoesNotBoundSize(t *testing.T) {
	e, err := Normalize(map[string]any{"to": "run:r", "type": "x", "body": strings.Repeat("q", 2<<20), "summary": strings.Repeat("s", 10000)})
	if err != nil {
		t.Fatalf("a stored large message does not normalize: %v", err)
	}
	if e.CheckSize() == nil {
		t.Fatal("CheckSize accepted a 2 MiB body")
	}
}
