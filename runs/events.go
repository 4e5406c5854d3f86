package runs

import (
	"time"

	"github.com/pi-actors/pi-actors/mailbox"
)

// appendEvent adds a timestamped record to events.jsonl (durable JSONL:
// one write under the file's lock, torn tails repaired).
func appendEvent(dir Dir, rec map[string]any) error {
	rec["ts"] = time.Now().UTC().Format(time.RFC3339Nano)
	return mailbox.Append(dir.Path(EventsFile), rec)
}

// AppendEvent is appendEvent for the kernel (run.exited, run.message…).
func AppendEvent(dir Dir, rec map[string]any) error { return appendEvent(dir, rec) }

// AppendEventIn is AppendEvent inside a transaction that holds the state
// directory's lock (every JSONL file of the directory shares it).
func AppendEventIn(tx *mailbox.Tx, dir Dir, rec map[string]any) error {
	rec["ts"] = time.Now().UTC().Format(time.RFC3339Nano)
	return tx.AppendFile(dir.Path(EventsFile), rec)
}

// appendEvent appends rec to the run's events — after the run.start
// record if that is still held (holdEvent): one locked write for both.
// A record without a ts is stamped now.
func (s *supervisor) appendEvent(rec map[string]any) {
	if _, ok := rec["ts"]; !ok {
		rec["ts"] = time.Now().UTC().Format(time.RFC3339Nano)
	}
	s.writeEvents(rec)
}

// holdEvent stamps rec now and keeps it for the next appendEvent (or
// flushEvent): run.start goes out with the first leaf's command.start,
// so the way to the leaf holds one append instead of two.
func (s *supervisor) holdEvent(rec map[string]any) {
	rec["ts"] = time.Now().UTC().Format(time.RFC3339Nano)
	s.emu.Lock()
	s.heldEvent = rec
	s.emu.Unlock()
}

// flushEvent appends the held record, if any.
func (s *supervisor) flushEvent() { s.writeEvents(nil) }

// writeEvents appends the held record, if any, then rec, if not nil, in
// one locked write.
func (s *supervisor) writeEvents(rec map[string]any) {
	s.emu.Lock()
	defer s.emu.Unlock()
	var recs []any
	if s.heldEvent != nil {
		recs, s.heldEvent = append(recs, s.heldEvent), nil
	}
	if rec != nil {
		recs = append(recs, rec)
	}
	if len(recs) == 0 {
		return
	}
	if err := mailbox.Append(s.dir.Path(EventsFile), recs...); err != nil {
		s.logf("append event: %v", err)
	}
}

func (s *supervisor) appendOutbox(rec map[string]any) {
	rec["ts"] = time.Now().UTC().Format(time.RFC3339Nano)
	if err := mailbox.Append(s.dir.Path(OutboxFile), rec); err != nil {
		s.logf("append outbox: %v", err)
	}
}
