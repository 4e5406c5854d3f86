package mailbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/pi-actors/pi-actors/internal/lazyre"
)

// typeRe is the grammar of a message type: control.kill, run.message,
// review:done, …
var typeRe = lazyre.New(`^[A-Za-z][A-Za-z0-9_.:-]*$`)

// Envelope is a typed actor message. To and Type are required; To and From
// are canonical addresses. Body is any JSON value: nil when absent, and a
// JSON null body is kept as json.RawMessage("null") so it round-trips. ID
// is an optional caller-chosen token: an inbox keeps one record per id, so
// a retried send with the same ID is not delivered twice.
//
// TTL (ttl_ms, whole milliseconds) and Deadline (deadline, RFC 3339) are
// optional expiry bounds: TTL counts from the time the message was
// accepted (its record's received_at), Deadline is absolute. This package
// only carries them; the routes decide what an expired message becomes
// (see ExpiredAt).
type Envelope struct {
	To            string
	Type          string
	Body          any
	CorrelationID string
	Deadline      time.Time
	From          string
	Metadata      map[string]any
	ReplyTo       string
	Summary       string
	TTL           time.Duration
	ID            string
}

// Normalize validates a decoded message object and returns its normalized
// envelope: to, type and from must be strings and are trimmed (empty is
// missing); to and from must parse as addresses and are rewritten
// canonically; type must match ^[A-Za-z][A-Za-z0-9_.:-]*$;
// correlation_id, reply_to and summary may be strings, numbers or booleans
// and become strings; metadata must be an object; id, when present, must
// be a token or a copy id (a caller's is checked by CheckCallerID). Other
// keys (such as the tool-only "verbose") are ignored.
// Errors are *EnvelopeError (errors.Is ErrInvalid).
func Normalize(raw map[string]any) (Envelope, error) {
	if raw == nil {
		return Envelope{}, envErr("", nil, "actor message must be an object")
	}
	var e Envelope
	var err error
	if e.To, err = stringField(raw, "to"); err != nil {
		return Envelope{}, err
	}
	if e.Type, err = stringField(raw, "type"); err != nil {
		return Envelope{}, err
	}
	if e.From, err = stringField(raw, "from"); err != nil {
		return Envelope{}, err
	}
	if e.ID, err = stringField(raw, "id"); err != nil {
		return Envelope{}, err
	}
	for _, f := range []struct {
		key string
		dst *string
	}{{"correlation_id", &e.CorrelationID}, {"reply_to", &e.ReplyTo}, {"summary", &e.Summary}} {
		if *f.dst, err = coerceString(raw, f.key); err != nil {
			return Envelope{}, err
		}
	}
	if v, ok := raw["metadata"]; ok {
		m, isObj := v.(map[string]any)
		if !isObj {
			return Envelope{}, envErr("metadata", nil, "message metadata must be an object, got %s", jsonKind(v))
		}
		e.Metadata = m
	}
	if e.TTL, err = ttlField(raw); err != nil {
		return Envelope{}, err
	}
	if e.Deadline, err = deadlineField(raw); err != nil {
		return Envelope{}, err
	}
	if v, ok := raw["body"]; ok {
		if v == nil {
			e.Body = json.RawMessage("null")
		} else {
			e.Body = v
		}
	}
	return e.Normalized()
}

// ParseEnvelope decodes one JSON message and normalizes it. Numbers in the
// body and metadata are kept exact (json.Number).
func ParseEnvelope(data []byte) (Envelope, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return Envelope{}, envErr("", err, "actor message is not valid JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Envelope{}, envErr("", nil, "actor message has trailing data after the JSON value")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return Envelope{}, envErr("", nil, "actor message must be an object, got %s", jsonKind(v))
	}
	return Normalize(m)
}

// Normalized checks an envelope built in Go and returns it trimmed, with
// canonical addresses. An already normalized envelope comes back unchanged.
func (e Envelope) Normalized() (Envelope, error) {
	e.To = strings.TrimSpace(e.To)
	e.Type = strings.TrimSpace(e.Type)
	e.From = strings.TrimSpace(e.From)
	e.ID = strings.TrimSpace(e.ID)
	if e.To == "" {
		return Envelope{}, envErr("to", nil, "message.to is required: name the recipient, e.g. to=run:<id>")
	}
	if e.Type == "" {
		return Envelope{}, envErr("type", nil, "message.type is required, e.g. type=run.message")
	}
	if !typeRe.MatchString(e.Type) {
		return Envelope{}, envErr("type", nil, "message.type contains unsupported characters: %q; start with a letter, then letters, digits, '_', '.', ':' or '-'", e.Type)
	}
	to, err := Parse(e.To)
	if err != nil {
		return Envelope{}, envErr("to", err, "message.to: %v", err)
	}
	e.To = to.String()
	if e.From != "" {
		from, err := Parse(e.From)
		if err != nil {
			return Envelope{}, envErr("from", err, "message.from: %v", err)
		}
		e.From = from.String()
	}
	if e.ID != "" && !validRecordID(e.ID) {
		return Envelope{}, envErr("id", nil, "message.id contains unsupported characters: %q; use letters, digits, '.', '_' and '-'", e.ID)
	}
	if e.TTL < 0 {
		return Envelope{}, envErr("ttl_ms", nil, "message.ttl_ms must be a positive number of milliseconds, got %d", e.TTL.Milliseconds())
	}
	if r := e.TTL % time.Millisecond; r != 0 {
		e.TTL += time.Millisecond - r // whole milliseconds, rounded up
	}
	if !e.Deadline.IsZero() {
		e.Deadline = e.Deadline.UTC()
	}
	return e, nil
}

// Limits of what one message carries, checked when it is sent
// (Envelope.CheckSize: the CLI, MCP and the kernel all send through it).
// Larger content belongs in a file — an artifact — whose path the message
// carries. The views show what is stored, each carried value bounded
// (docs/messages.md, "Size limits").
const (
	// MaxBodyBytes bounds the body as compact JSON (the form stored), as a
	// recipe file is bounded.
	MaxBodyBytes = 1 << 20
	// MaxMetadataBytes bounds metadata as compact JSON.
	MaxMetadataBytes = 64 << 10
	// MaxSummaryBytes bounds the summary, a line or two (UTF-8 bytes).
	MaxSummaryBytes = 4 << 10
	// MaxFieldBytes bounds type, id, correlation_id and reply_to.
	MaxFieldBytes = 1 << 10
)

// CheckSize refuses an envelope that carries more than a message may: a
// body over MaxBodyBytes or metadata over MaxMetadataBytes (compact JSON),
// a summary over MaxSummaryBytes, a type, id, correlation_id or reply_to
// over MaxFieldBytes. The *EnvelopeError names the field, its size and
// the fix.
func (e Envelope) CheckSize() error {
	for _, f := range []struct{ key, v string }{{"type", e.Type}, {"id", e.ID}, {"correlation_id", e.CorrelationID}, {"reply_to", e.ReplyTo}} {
		if n := len(f.v); n > MaxFieldBytes {
			return sizeErr(f.key, n, MaxFieldBytes, "message.%s is %d bytes, more than %d (1 KiB): use a shorter %s; what a message says goes in its body", f.key, n, MaxFieldBytes, f.key)
		}
	}
	if n := len(e.Summary); n > MaxSummaryBytes {
		return sizeErr("summary", n, MaxSummaryBytes, "message.summary is %d bytes, more than %d (4 KiB): keep the summary to a line or two and put the rest in the body (up to 1 MiB as JSON), or in a file (an artifact) whose path the body carries", n, MaxSummaryBytes)
	}
	if e.Metadata != nil {
		if n, err := jsonSize(e.Metadata, MaxMetadataBytes); err != nil {
			return envErr("metadata", err, "message.metadata cannot be encoded as JSON: %v", err)
		} else if n > MaxMetadataBytes {
			return sizeErr("metadata", n, MaxMetadataBytes, "message.metadata is %d bytes as JSON, more than %d (64 KiB): metadata routes and labels a message; put content in the body (up to 1 MiB), or in a file (an artifact) and send its path", n, MaxMetadataBytes)
		}
	}
	if e.Body != nil {
		if n, err := jsonSize(e.Body, MaxBodyBytes); err != nil {
			return envErr("body", err, "message.body cannot be encoded as JSON: %v", err)
		} else if n > MaxBodyBytes {
			return sizeErr("body", n, MaxBodyBytes, "message.body is %d bytes as JSON, more than a message carries (%d, 1 MiB): write the content to a file (an artifact of the run) and send its path instead, e.g. body:='{\"path\":\"/abs/path/report.json\"}'", n, MaxBodyBytes)
		}
	}
	return nil
}

// MaxDoneErrorBytes bounds the error a consumer records when it finishes
// a message (mailbox done error=…), as a summary is bounded.
const MaxDoneErrorBytes = 4 << 10

// CheckDoneMeta refuses what finishing a message may not record: an
// error over MaxDoneErrorBytes (field error, *EnvelopeError with its
// size and limit).
func CheckDoneMeta(meta map[string]any) error {
	if s, ok := meta["error"].(string); ok && len(s) > MaxDoneErrorBytes {
		return sizeErr("error", len(s), MaxDoneErrorBytes, "mailbox done: error is %d bytes, more than %d (4 KiB): say why in a line or two and write the rest (a log, a trace) to a file whose path the error names", len(s), MaxDoneErrorBytes)
	}
	return nil
}

// sizeErr is a field larger than a message may carry.
func sizeErr(field string, n, limit int, format string, args ...any) *EnvelopeError {
	e := envErr(field, nil, format, args...)
	e.Bytes, e.Limit = n, limit
	return e
}

// jsonSize is the size of v as compact JSON, as a message stores it; a
// value that is surely within limit is not encoded (a string's JSON is at
// most 6 bytes per byte, plus its quotes; raw JSON compacts to at most
// its own size).
func jsonSize(v any, limit int) (int, error) {
	switch x := v.(type) {
	case string:
		if 6*len(x)+2 <= limit {
			return len(x) + 2, nil
		}
	case json.RawMessage:
		if len(x) <= limit {
			return len(x), nil
		}
		var b bytes.Buffer
		if err := json.Compact(&b, x); err != nil {
			return 0, err
		}
		return b.Len(), nil
	}
	b, err := marshal(v)
	return len(b), err
}

// ExpiredAt reports whether the message has expired at now, given the
// time it was accepted, and why: "ttl_expired" once TTL has passed since
// accepted, "deadline_passed" once now is past Deadline. A message with
// neither bound never expires.
func (e Envelope) ExpiredAt(accepted, now time.Time) (bool, string) {
	if !e.Deadline.IsZero() && now.After(e.Deadline) {
		return true, "deadline_passed"
	}
	if e.TTL > 0 && !accepted.IsZero() && now.Sub(accepted) >= e.TTL {
		return true, "ttl_expired"
	}
	return false, ""
}

// Address returns the parsed recipient.
func (e Envelope) Address() (Address, error) { return Parse(e.To) }

// MarshalJSON writes the keys in the reference order: to, type, body,
// correlation_id, from, metadata, reply_to, summary, then id. The expiry
// bounds, when set, take their alphabetical places (deadline after
// correlation_id, ttl_ms after summary). Empty optional fields are left
// out.
func (e Envelope) MarshalJSON() ([]byte, error) {
	o, err := e.object()
	if err != nil {
		return nil, err
	}
	return o.bytes(), nil
}

func (e Envelope) object() (object, error) {
	o := make(object, 0, 11)
	add := func(key string, v any) error {
		raw, err := marshal(v)
		if err != nil {
			return fmt.Errorf("encode message %s: %w", key, err)
		}
		o = append(o, member{key, raw})
		return nil
	}
	fields := []struct {
		key  string
		v    any
		skip bool
	}{
		{"to", e.To, false},
		{"type", e.Type, false},
		{"body", e.Body, e.Body == nil},
		{"correlation_id", e.CorrelationID, e.CorrelationID == ""},
		{"deadline", e.Deadline.UTC().Format(time.RFC3339Nano), e.Deadline.IsZero()},
		{"from", e.From, e.From == ""},
		{"metadata", e.Metadata, e.Metadata == nil},
		{"reply_to", e.ReplyTo, e.ReplyTo == ""},
		{"summary", e.Summary, e.Summary == ""},
		{"ttl_ms", ttlMillis(e.TTL), e.TTL <= 0},
		{"id", e.ID, e.ID == ""},
	}
	for _, f := range fields {
		if f.skip {
			continue
		}
		if err := add(f.key, f.v); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// CheckCallerID refuses an id a caller may not choose: anything but a
// token (a copy id, with CopySep, is made by the routes alone).
func CheckCallerID(id string) error {
	if id = strings.TrimSpace(id); id != "" && !validID(id) {
		return envErr("id", nil, "message.id contains unsupported characters: %q; use letters, digits, '.', '_' and '-'", id)
	}
	return nil
}

// UnmarshalJSON decodes and normalizes a message (see ParseEnvelope).
func (e *Envelope) UnmarshalJSON(data []byte) error {
	v, err := ParseEnvelope(data)
	if err != nil {
		return err
	}
	*e = v
	return nil
}

// stringField reads an optional string field; present but not a string is
// an error. The result is trimmed.
func stringField(raw map[string]any, key string) (string, error) {
	v, ok := raw[key]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", envErr(key, nil, "message.%s must be a string, got %s", key, jsonKind(v))
	}
	return strings.TrimSpace(s), nil
}

// maxTTLMillis keeps ttl_ms exact in JSON (2^53-1) and within a
// time.Duration.
const maxTTLMillis = min(1<<53-1, math.MaxInt64/int64(time.Millisecond))

// ttlField reads the optional ttl_ms: a positive whole number of
// milliseconds, given as a JSON number or a string of digits.
func ttlField(raw map[string]any) (time.Duration, error) {
	v, ok := raw["ttl_ms"]
	if !ok || v == nil {
		return 0, nil
	}
	s, ok := scalarString(v)
	if _, isBool := v.(bool); !ok || isBool {
		return 0, envErr("ttl_ms", nil, "message.ttl_ms must be a positive whole number of milliseconds, got %s", jsonKind(v))
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n <= 0 || n > maxTTLMillis {
		return 0, envErr("ttl_ms", nil, "message.ttl_ms must be a positive whole number of milliseconds (at most %d), got %q", maxTTLMillis, s)
	}
	return time.Duration(n) * time.Millisecond, nil
}

// deadlineField reads the optional deadline, an RFC 3339 time.
func deadlineField(raw map[string]any) (time.Time, error) {
	v, ok := raw["deadline"]
	if !ok || v == nil {
		return time.Time{}, nil
	}
	s, isString := v.(string)
	if !isString {
		return time.Time{}, envErr("deadline", nil, "message.deadline must be an RFC 3339 time string such as 2030-01-02T15:04:05Z, got %s", jsonKind(v))
	}
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(s))
	if err != nil {
		return time.Time{}, envErr("deadline", err, "message.deadline must be an RFC 3339 time such as 2030-01-02T15:04:05Z, got %q", s)
	}
	return t.UTC(), nil
}

// ttlMillis is the ttl_ms written for a TTL (whole milliseconds).
func ttlMillis(d time.Duration) int64 { return int64(d / time.Millisecond) }

// coerceString reads an optional scalar and formats it as a string, as the
// reference coerces with String(). Objects and arrays are refused rather
// than written as "[object Object]".
func coerceString(raw map[string]any, key string) (string, error) {
	v, ok := raw[key]
	if !ok || v == nil {
		return "", nil
	}
	if s, ok := scalarString(v); ok {
		return s, nil
	}
	return "", envErr(key, nil, "message.%s must be a string, number or boolean, got %s", key, jsonKind(v))
}

// scalarString formats a JSON scalar (string, number, bool) as a string.
func scalarString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return x.String(), true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	case float32:
		return strconv.FormatFloat(float64(x), 'f', -1, 32), true
	case int:
		return strconv.Itoa(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case bool:
		return strconv.FormatBool(x), true
	}
	return "", false
}

// jsonKind names the JSON type of a decoded value for error messages.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number, float64, float32, int, int64:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func envErr(field string, cause error, format string, args ...any) *EnvelopeError {
	return &EnvelopeError{Field: field, Msg: fmt.Sprintf(format, args...), Err: cause}
}
