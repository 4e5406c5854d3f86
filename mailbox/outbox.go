package mailbox

import (
	"fmt"
	"strconv"
	"strings"
)

// Outbox deliveries: how far a record travels towards the session that
// owns the run.
const (
	DeliveryLog      = "log"      // stays in the outbox; seen through inspect
	DeliveryNotify   = "notify"   // the owner is notified
	DeliveryFollowup = "followup" // notified and queued as a follow-up turn
)

// Outbox levels.
const (
	LevelInfo    = "info"
	LevelWarning = "warning"
	LevelError   = "error"
)

// DefaultEvent is the event of an outbox record that names none.
const DefaultEvent = "run.event"

// epoch is the ts of a parsed record without one.
const epoch = "1970-01-01T00:00:00.000Z"

// OutboxRecord is one outbox.jsonl record: something a run says to the
// coordinator, a session or the log (command.done, a message to
// coordinator, …). Run and StateDir are not stored; ParseOutbox fills Run
// from its caller.
type OutboxRecord struct {
	Body          any            `json:"body,omitempty"`
	CorrelationID string         `json:"correlation_id,omitempty"`
	Data          any            `json:"data,omitempty"`
	Delivery      string         `json:"delivery"`
	Event         string         `json:"event"`
	From          string         `json:"from,omitempty"`
	ID            string         `json:"id,omitempty"`
	Level         string         `json:"level"`
	Metadata      map[string]any `json:"metadata,omitempty"`
	ReplyTo       string         `json:"reply_to,omitempty"`
	Summary       string         `json:"summary"`
	To            string         `json:"to,omitempty"`
	TS            string         `json:"ts"`
	Type          string         `json:"type,omitempty"`

	Run      string `json:"-"`
	StateDir string `json:"-"`
}

// AppendOutbox appends rec to path (a state dir's outbox.jsonl) and
// returns it as written. Defaults: ID a new uuid, Event the Type (else
// run.event), Summary the event, Delivery log, Level info, TS now. A
// Delivery or Level outside its set, or a From/To that is not an address,
// is an error (errors.Is ErrInvalid); From and To are written canonically.
func AppendOutbox(path string, rec OutboxRecord) (OutboxRecord, error) {
	rec.Event = strings.TrimSpace(rec.Event)
	if rec.Event == "" {
		rec.Event = strings.TrimSpace(rec.Type)
	}
	if rec.Event == "" {
		rec.Event = DefaultEvent
	}
	if rec.Summary == "" {
		rec.Summary = rec.Event
	}
	switch rec.Delivery {
	case "":
		rec.Delivery = DeliveryLog
	case DeliveryLog, DeliveryNotify, DeliveryFollowup:
	default:
		return OutboxRecord{}, envErr("delivery", nil, "outbox delivery %q: use %s, %s or %s", rec.Delivery, DeliveryLog, DeliveryNotify, DeliveryFollowup)
	}
	switch rec.Level {
	case "":
		rec.Level = LevelInfo
	case LevelInfo, LevelWarning, LevelError:
	default:
		return OutboxRecord{}, envErr("level", nil, "outbox level %q: use %s, %s or %s", rec.Level, LevelInfo, LevelWarning, LevelError)
	}
	for _, f := range []struct {
		name string
		v    *string
	}{{"from", &rec.From}, {"to", &rec.To}} {
		*f.v = strings.TrimSpace(*f.v)
		if *f.v == "" {
			continue
		}
		a, err := Parse(*f.v)
		if err != nil {
			return OutboxRecord{}, envErr(f.name, err, "outbox %s: %v", f.name, err)
		}
		*f.v = a.String()
	}
	if rec.ID == "" {
		rec.ID = NewID()
	}
	if rec.TS == "" {
		rec.TS = timestamp()
	}
	if err := Append(path, rec); err != nil {
		return OutboxRecord{}, err
	}
	return rec, nil
}

// ParseOutbox normalizes one outbox.jsonl line of run; index is the line's
// 0-based position in the file (Line.N-1). Event is trimmed (default
// run.event), Summary defaults to the event, TS to the epoch, ID to
// "<run>:<index>", Delivery to log unless notify or followup, Level to
// info unless warning or error. Metadata is kept only when it is an
// object. A line that is not a JSON object is an error wrapping
// ErrMalformed.
func ParseOutbox(line []byte, run string, index int) (OutboxRecord, error) {
	m, err := decodeObject(line)
	if err != nil {
		return OutboxRecord{}, fmt.Errorf("%w: outbox record: %v", ErrMalformed, err)
	}
	str := func(key string) string {
		s, _ := scalarString(m[key])
		return s
	}
	r := OutboxRecord{
		Body:          m["body"],
		CorrelationID: str("correlation_id"),
		Data:          m["data"],
		Event:         strings.TrimSpace(str("event")),
		From:          str("from"),
		ID:            str("id"),
		ReplyTo:       str("reply_to"),
		Summary:       str("summary"),
		To:            str("to"),
		TS:            str("ts"),
		Type:          str("type"),
		Run:           run,
	}
	if md, ok := m["metadata"].(map[string]any); ok {
		r.Metadata = md
	}
	if r.Event == "" {
		r.Event = DefaultEvent
	}
	if r.Summary == "" {
		r.Summary = r.Event
	}
	if r.TS == "" {
		r.TS = epoch
	}
	if r.ID == "" {
		r.ID = run + ":" + strconv.Itoa(index)
	}
	switch d := str("delivery"); d {
	case DeliveryNotify, DeliveryFollowup:
		r.Delivery = d
	default:
		r.Delivery = DeliveryLog
	}
	switch l := str("level"); l {
	case LevelWarning, LevelError:
		r.Level = l
	default:
		r.Level = LevelInfo
	}
	return r, nil
}
