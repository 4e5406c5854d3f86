package mailbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sort"
	"strings"
	"time"
)

// Inbox record statuses. A record is queued when appended, sent once a
// live transport (FIFO, pipe) took it, claimed by a consumer, and finally
// handled or failed.
const (
	StatusQueued  = "queued"
	StatusSent    = "sent"
	StatusClaimed = "claimed"
	StatusHandled = "handled"
	StatusFailed  = "failed"
)

// DefaultOwner is the claimed_by of a claim made without an owner.
const DefaultOwner = "runtime"

// Record is one inbox record as stored: the message fields plus id,
// queued_at, received_at, status and the claim/done fields. Numbers are
// json.Number.
type Record map[string]any

// ID returns the record id ("" for a legacy record without one).
func (r Record) ID() string {
	switch v := r["id"].(type) {
	case string:
		return strings.TrimSpace(v)
	case json.Number:
		return v.String()
	}
	return ""
}

// Status returns the record status; a record without one is queued.
func (r Record) Status() string {
	if s, ok := r["status"].(string); ok && s != "" {
		return s
	}
	return StatusQueued
}

// Type returns the message type ("" if the record has none).
func (r Record) Type() string {
	s, _ := r["type"].(string)
	return s
}

// Envelope normalizes the record's message fields.
func (r Record) Envelope() (Envelope, error) { return Normalize(r) }

// RecordFromLine turns one line written to a run (a FIFO payload) into an
// inbox record: a JSON object is the record; anything else becomes
// {body: <line>, type: "run.message"}.
func RecordFromLine(line string) Record {
	s := strings.TrimSpace(line)
	if m, err := decodeObject([]byte(s)); err == nil {
		return Record(m)
	}
	return Record{"body": s, "type": "run.message"}
}

// Inbox is a durable JSONL inbox (a run's inbox.jsonl, a branch's
// branches/<b>/inbox.jsonl). Every operation takes the file's lock, so any
// number of goroutines and processes may use the same inbox.
type Inbox struct {
	Path string
	// Sync fsyncs every append (survives power loss; costs a disk flush).
	Sync bool
	// KeepTerminal, when > 0, makes Done compact the file to at most this
	// many handled/failed records (the newest). Queued, sent and claimed
	// records and malformed lines are always kept.
	KeepTerminal int
}

// NewInbox returns the inbox stored at path. Nothing is created until the
// first Append.
func NewInbox(path string) *Inbox { return &Inbox{Path: path} }

// managed are the fields Append sets itself; a caller's values are replaced.
var managed = []string{"id", "queued_at", "received_at", "status"}

// Append stores a message as a queued record and returns it. msg is an
// Envelope (normalized first), a Record or a map[string]any (stored as
// given; it must be an object). The record gets an id (the caller's, else a
// new uuid), queued_at and received_at (RFC 3339 UTC) and status queued.
// When the caller chose the id and a record with that id is already in the
// inbox, that record is returned with dup true and nothing is written, so
// retrying a send is safe.
func (in *Inbox) Append(msg any) (rec Record, dup bool, err error) {
	err = Update(in.Path, func(tx *Tx) error {
		rec, dup, err = in.AppendIn(tx, msg)
		return err
	})
	if err != nil {
		return nil, false, err
	}
	return rec, dup, nil
}

// Find returns the first record whose id is id, or nil (under the
// inbox's lock): for a sender that must know whether a caller-chosen id
// was stored already.
func (in *Inbox) Find(id string) (rec Record, err error) {
	if _, err := os.Stat(in.Path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil // no inbox, no record: and no directory made
	}
	err = Update(in.Path, func(tx *Tx) error {
		rec, err = findID(in.Path, id)
		return err
	})
	return rec, err
}

// AppendIn is Append inside a transaction that holds the inbox's lock
// (tx is for any file of the inbox's directory), so the message and the
// writes around it (its wake, an event) are one step.
func (in *Inbox) AppendIn(tx *Tx, msg any) (rec Record, dup bool, err error) {
	return in.appendIn(tx, msg, true)
}

// AppendNewIn is AppendIn for a message whose caller-chosen id the caller
// knows to be new here (it was just stored for the first time elsewhere,
// and this is its copy): the inbox is not searched for it, so the append
// costs the same in a long inbox as in a short one.
func (in *Inbox) AppendNewIn(tx *Tx, msg any) (Record, error) {
	rec, _, err := in.appendIn(tx, msg, false)
	return rec, err
}

func (in *Inbox) appendIn(tx *Tx, msg any, dedupe bool) (rec Record, dup bool, err error) {
	if err := tx.guards(in.Path); err != nil {
		return nil, false, err
	}
	line, id, callerID, err := recordLine(msg)
	if err != nil {
		return nil, false, err
	}
	if callerID && dedupe {
		old, err := findID(in.Path, id)
		if err != nil {
			return nil, false, err
		}
		if old != nil {
			return old, true, nil
		}
	}
	if err := appendLocked(in.Path, append(line, '\n'), in.Sync); err != nil {
		return nil, false, err
	}
	m, err := decodeObject(line)
	if err != nil {
		return nil, false, fmt.Errorf("append %s: %w", in.Path, err)
	}
	return Record(m), false, nil
}

// recordLine encodes msg as a new queued inbox record: its fields, then
// id (the caller's, else a new uuid), queued_at, received_at and status.
func recordLine(msg any) (line []byte, id string, callerID bool, err error) {
	o, id, err := inboxObject(msg)
	if err != nil {
		return nil, "", false, err
	}
	callerID = id != ""
	if !callerID {
		id = NewID()
	}
	now := timestamp()
	for _, kv := range []struct {
		k string
		v any
	}{{"id", id}, {"queued_at", now}, {"received_at", now}, {"status", StatusQueued}} {
		if err := o.set(kv.k, kv.v); err != nil {
			return nil, "", false, err
		}
	}
	return o.bytes(), id, callerID, nil
}

// inboxObject converts a message to an ordered object without the managed
// fields, and returns the caller's id, if any.
func inboxObject(msg any) (object, string, error) {
	var o object
	switch m := msg.(type) {
	case Envelope:
		e, err := m.Normalized()
		if err != nil {
			return nil, "", err
		}
		if o, err = e.object(); err != nil {
			return nil, "", err
		}
	case *Envelope:
		if m == nil {
			return nil, "", envErr("", nil, "actor message must be an object")
		}
		return inboxObject(*m)
	case Record:
		return inboxObject(map[string]any(m))
	case map[string]any:
		if m == nil {
			return nil, "", envErr("", nil, "actor message must be an object")
		}
		b, err := marshal(m)
		if err != nil {
			return nil, "", fmt.Errorf("encode inbox record: %w", err)
		}
		if o, err = parseObject(b); err != nil {
			return nil, "", fmt.Errorf("encode inbox record: %w", err)
		}
	default:
		return nil, "", fmt.Errorf("inbox record must be an Envelope or an object, got %T", msg)
	}
	var id string
	for _, mem := range o {
		if mem.key != "id" {
			continue
		}
		var s string
		if err := json.Unmarshal(mem.val, &s); err != nil || !validRecordID(strings.TrimSpace(s)) {
			return nil, "", envErr("id", nil, "message.id must be a token of letters, digits, '.', '_' and '-', got %s", mem.val)
		}
		id = strings.TrimSpace(s)
	}
	o = slices.DeleteFunc(o, func(mem member) bool { return slices.Contains(managed, mem.key) })
	return o, id, nil
}

// Claim hands out the first record whose status is one of statuses
// (default queued): it sets claimed_at, claimed_by (owner, default
// "runtime") and status claimed, and gives an id-less legacy record an id
// first, so every claimed record can be marked done. It returns nil when
// no record matches. Under the lock no record is handed out twice.
// Claiming status claimed takes over records whose consumer died.
func (in *Inbox) Claim(owner string, statuses ...string) (Record, error) {
	if owner == "" {
		owner = DefaultOwner
	}
	if len(statuses) == 0 {
		statuses = []string{StatusQueued}
	}
	var got Record
	err := Rewrite(in.Path, func(lines []Line) ([]Line, error) {
		for i := range lines {
			l := &lines[i]
			if l.Err != nil || !slices.Contains(statuses, Record(l.Value).Status()) {
				continue
			}
			if Record(l.Value).ID() == "" {
				if err := l.Set("id", NewID()); err != nil {
					return nil, err
				}
			}
			now := timestamp()
			if err := setAll(l, "claimed_at", now, "claimed_by", owner, "status", StatusClaimed); err != nil {
				return nil, err
			}
			got = Record(l.Value)
			break
		}
		return lines, nil
	})
	if err != nil {
		return nil, err
	}
	return got, nil
}

// Sent records that a live transport took the record: it adds meta (for
// example bytes) and sent_at, and moves a queued record to sent. A record
// already claimed or done keeps its status: delivery never moves a record
// back.
func (in *Inbox) Sent(id string, meta map[string]any) error {
	return in.update(id, StatusSent, func(status string) error { return nil }, meta)
}

// Done marks a claimed record handled or failed: it adds meta (for example
// error), <status>_at and the status. An unknown id is ErrNotFound; a
// record that is not claimed is ErrTransition. meta cannot change id or
// status. With KeepTerminal set, the oldest handled/failed records beyond
// it are dropped in the same rewrite.
func (in *Inbox) Done(id, status string, meta map[string]any) error {
	if status != StatusHandled && status != StatusFailed {
		return fmt.Errorf("%w: done status %q; use %s or %s", ErrTransition, status, StatusHandled, StatusFailed)
	}
	if err := CheckDoneMeta(meta); err != nil {
		return err
	}
	return in.update(id, status, func(cur string) error {
		if cur != StatusClaimed {
			return fmt.Errorf("%w: inbox record %s is %s, not claimed; claim it before marking it %s", ErrTransition, id, cur, status)
		}
		return nil
	}, meta)
}

// update applies a status change to the record with id. check vets the
// current status; a sent update never regresses a later status.
func (in *Inbox) update(id, status string, check func(cur string) error, meta map[string]any) error {
	id = strings.TrimSpace(id)
	return Rewrite(in.Path, func(lines []Line) ([]Line, error) {
		idx := -1
		for i := range lines {
			if lines[i].Err != nil || Record(lines[i].Value).ID() != id {
				continue
			}
			// Legacy files may repeat an id: prefer a record the change fits.
			if idx < 0 || (check(Record(lines[idx].Value).Status()) != nil && check(Record(lines[i].Value).Status()) == nil) {
				idx = i
			}
		}
		if idx < 0 {
			return nil, fmt.Errorf("%w: %s in %s", ErrNotFound, id, in.Path)
		}
		l := &lines[idx]
		cur := Record(l.Value).Status()
		if err := check(cur); err != nil {
			return nil, err
		}
		keys := make([]string, 0, len(meta))
		for k := range meta {
			if k != "id" && k != "status" {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			if err := l.Set(k, meta[k]); err != nil {
				return nil, err
			}
		}
		if err := l.Set(status+"_at", timestamp()); err != nil {
			return nil, err
		}
		if status != StatusSent || cur == StatusQueued {
			if err := l.Set("status", status); err != nil {
				return nil, err
			}
		}
		if in.KeepTerminal > 0 && (status == StatusHandled || status == StatusFailed) {
			lines = compact(lines, in.KeepTerminal)
		}
		return lines, nil
	})
}

// CompactTerminal drops the oldest handled/failed records beyond keep,
// preserving order, for a Rewrite that keeps a queue small. Malformed
// lines and unfinished records stay.
func CompactTerminal(lines []Line, keep int) []Line { return compact(lines, keep) }

// DoneMany marks claimed records handled or failed in one locked pass (a
// burst of deliveries): each gets <status>_at and the status. Ids that are
// unknown or not claimed are left as they are (another reader took them
// over, or they were done already). With KeepTerminal set, the oldest
// terminal records beyond it are dropped in the same rewrite.
func (in *Inbox) DoneMany(ids []string, status string) error {
	if status != StatusHandled && status != StatusFailed {
		return fmt.Errorf("%w: done status %q; use %s or %s", ErrTransition, status, StatusHandled, StatusFailed)
	}
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[strings.TrimSpace(id)] = true
	}
	return RewriteLazy(in.Path, func(lines []Line) ([]Line, error) {
		now := timestamp()
		done := 0
		for i := range lines {
			l := &lines[i]
			id, _ := l.Peek("id")
			st, _ := l.Peek("status")
			if !want[id] || st != StatusClaimed {
				continue
			}
			if err := setAll(l, status+"_at", now, "status", status); err != nil {
				return nil, err
			}
			done++
		}
		if done > 0 && in.KeepTerminal > 0 {
			lines = compact(lines, in.KeepTerminal)
		}
		return lines, nil
	})
}

// Requeue gives claimed records back (a delivery that did not go
// through): they are queued again, in place, so order holds. Records that
// are not claimed are left as they are.
func (in *Inbox) Requeue(ids []string) error {
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[strings.TrimSpace(id)] = true
	}
	return RewriteLazy(in.Path, func(lines []Line) ([]Line, error) {
		for i := range lines {
			l := &lines[i]
			id, _ := l.Peek("id")
			st, _ := l.Peek("status")
			if !want[id] || st != StatusClaimed {
				continue
			}
			if err := setAll(l, "status", StatusQueued, "requeued_at", timestamp()); err != nil {
				return nil, err
			}
		}
		return lines, nil
	})
}

// compact drops the oldest handled/failed records beyond keep, preserving
// order. Malformed lines and unfinished records stay.
func compact(lines []Line, keep int) []Line {
	terminal := 0
	for _, l := range lines {
		if isTerminal(l) {
			terminal++
		}
	}
	drop := terminal - keep
	if drop <= 0 {
		return lines
	}
	return slices.DeleteFunc(lines, func(l Line) bool {
		if drop > 0 && isTerminal(l) {
			drop--
			return true
		}
		return false
	})
}

func isTerminal(l Line) bool {
	if l.Err != nil {
		return false
	}
	s := ""
	if l.Value == nil {
		s, _ = l.Peek("status") // a line a lazy rewrite did not decode
	} else {
		s = Record(l.Value).Status()
	}
	return s == StatusHandled || s == StatusFailed
}

// List returns the records among the last n lines of the inbox, oldest
// first, and how many of those lines are malformed.
func (in *Inbox) List(n int) (recs []Record, malformed int, err error) {
	lines, err := Tail(in.Path, n)
	if err != nil {
		return nil, 0, err
	}
	for _, l := range lines {
		if l.Err != nil {
			malformed++
			continue
		}
		recs = append(recs, Record(l.Value))
	}
	return recs, malformed, nil
}

// setAll sets key/value pairs in order.
func setAll(l *Line, kv ...any) error { return l.SetAll(kv...) }

// timestamp is the time format of every record: RFC 3339, UTC, nanoseconds.
func timestamp() string { return time.Now().UTC().Format(time.RFC3339Nano) }
