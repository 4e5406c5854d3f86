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

func (s *supervisor) appendEvent(rec map[string]any) {
	if err := appendEvent(s.dir, rec); err != nil {
		s.logf("append event: %v", err)
	}
}

func (s *supervisor) appendOutbox(rec map[string]any) {
	rec["ts"] = time.Now().UTC().Format(time.RFC3339Nano)
	if err := mailbox.Append(s.dir.Path(OutboxFile), rec); err != nil {
		s.logf("append outbox: %v", err)
	}
}
