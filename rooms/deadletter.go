package rooms

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/pi-actors/pi-actors/mailbox"
)

// Dead-letter reasons written by this package (callers may use their
// own, e.g. run_not_found).
const (
	ReasonTTLExpired     = "ttl_expired"
	ReasonDeadlinePassed = "deadline_passed"
)

// DeadLetterRecord is one line of a dead_letters.jsonl: a message that
// expired or could not be delivered, with why. ID is the message's id
// (else a new uuid), so a message is dead-lettered once.
type DeadLetterRecord struct {
	ID       string         `json:"id"`
	Reason   string         `json:"reason"`
	TS       string         `json:"ts"`
	StateDir string         `json:"state_dir,omitempty"`
	Message  map[string]any `json:"message"`
}

// DeadLetter appends env, with reason, to <dir>/dead_letters.jsonl (a
// run's). A message whose id is already there is a duplicate: the stored
// record comes back and nothing is written.
func DeadLetter(dir string, env mailbox.Envelope, reason string) (DeadLetterRecord, bool, error) {
	return deadLetter(filepath.Join(dir, DeadLettersFile), dir, env, reason)
}

// DeadLetterAt is DeadLetter to any file (the coordinator's
// dead_letters.jsonl, for messages with no run to hold them).
func DeadLetterAt(path string, env mailbox.Envelope, reason string) (DeadLetterRecord, bool, error) {
	return deadLetter(path, "", env, reason)
}

func deadLetter(path, dir string, env mailbox.Envelope, reason string) (DeadLetterRecord, bool, error) {
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return DeadLetterRecord{}, false, &mailbox.EnvelopeError{Field: "reason", Msg: "a dead letter needs a reason (such as ttl_expired)"}
	}
	b, err := env.MarshalJSON()
	if err != nil {
		return DeadLetterRecord{}, false, fmt.Errorf("dead letter: %w", err)
	}
	msg, _ := decodeMap(b)
	rec := DeadLetterRecord{ID: env.ID, Reason: reason, TS: formatTime(time.Now()), StateDir: dir, Message: msg}
	if rec.ID == "" {
		rec.ID = mailbox.NewID()
	}
	var dup bool
	err = mailbox.Update(path, func(tx *mailbox.Tx) error {
		if env.ID != "" {
			old, err := tx.Find(env.ID)
			if err != nil || old != nil {
				rec, dup = deadLetterFrom(old), old != nil
				return err
			}
		}
		return tx.Append(rec)
	})
	if err != nil {
		return DeadLetterRecord{}, false, fmt.Errorf("dead letter %s: %w", rec.ID, err)
	}
	return rec, dup, nil
}

func deadLetterFrom(m map[string]any) DeadLetterRecord {
	msg, _ := m["message"].(map[string]any)
	return DeadLetterRecord{ID: str(m, "id"), Reason: str(m, "reason"), TS: str(m, "ts"), StateDir: str(m, "state_dir"), Message: msg}
}

// DeadLettersView is the dead_letters view: the newest records of a
// dead-letter file.
type DeadLettersView struct {
	DeadLetters []DeadLetterRecord `json:"dead_letters"`
	Corrupted   int                `json:"corrupted"`
	Total       int                `json:"total"`
	File        string             `json:"file"`
}

// DeadLetters reads the last lines (default 40) of a dead-letter file.
func DeadLetters(path string, lines int) (DeadLettersView, error) {
	v := DeadLettersView{DeadLetters: []DeadLetterRecord{}, File: path}
	recs, corrupted, total, err := tailRecords(path, defaultLines(lines), deadLetterFrom)
	if err != nil {
		return v, err
	}
	v.DeadLetters, v.Corrupted, v.Total = recs, corrupted, total
	return v, nil
}

// Text renders one line per dead letter: id, reason, ts, then the
// message's type, from and to.
func (v DeadLettersView) Text() string {
	var out []string
	for _, d := range v.DeadLetters {
		line := fmt.Sprintf("id=%s reason=%s ts=%s type=%s", compactPreview(d.ID), compactPreview(d.Reason), d.TS, compactPreview(str(d.Message, "type")))
		if from := str(d.Message, "from"); from != "" {
			line += " from=" + from
		}
		line += " to=" + str(d.Message, "to")
		out = append(out, line)
	}
	if len(out) == 0 {
		out = append(out, "(no dead letters)")
	}
	if v.Corrupted > 0 {
		out = append(out, fmt.Sprintf("corrupted=%d", v.Corrupted))
	}
	return joinWithMore(out, len(v.DeadLetters)+v.Corrupted, v.Total, v.File)
}
