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
	Session  string         `json:"session,omitempty"` // the sender's, in the coordinator's log
	Message  map[string]any `json:"message"`
}

// DeadLetter appends env, with reason, to <dir>/dead_letters.jsonl (a
// run's). A message whose id is already there is a duplicate: the stored
// record comes back and nothing is written.
func DeadLetter(dir string, env mailbox.Envelope, reason string) (DeadLetterRecord, bool, error) {
	return deadLetter(filepath.Join(dir, DeadLettersFile), dir, "", env, reason)
}

// DeadLetterAt is DeadLetter to any file (the coordinator's
// dead_letters.jsonl, for messages with no run to hold them), recording
// the sender's session: the log holds every session's, and each sees its
// own. A retry is a duplicate only from the same session.
func DeadLetterAt(path, session string, env mailbox.Envelope, reason string) (DeadLetterRecord, bool, error) {
	return deadLetter(path, "", strings.TrimSpace(session), env, reason)
}

func deadLetter(path, dir, session string, env mailbox.Envelope, reason string) (DeadLetterRecord, bool, error) {
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return DeadLetterRecord{}, false, &mailbox.EnvelopeError{Field: "reason", Msg: "a dead letter needs a reason (such as ttl_expired)"}
	}
	b, err := env.MarshalJSON()
	if err != nil {
		return DeadLetterRecord{}, false, fmt.Errorf("dead letter: %w", err)
	}
	msg, _ := decodeMap(b)
	rec := DeadLetterRecord{ID: env.ID, Reason: reason, TS: formatTime(time.Now()), StateDir: dir, Session: session, Message: msg}
	if rec.ID == "" {
		rec.ID = mailbox.NewID()
	}
	var dup bool
	err = mailbox.Update(path, func(tx *mailbox.Tx) error {
		if env.ID != "" {
			// A retry of the same message is a duplicate; the same caller
			// id on a message to another address (one dead-letter file
			// holds every address's) is another message, kept under
			// <id>.<to>.
			rec.ID = ""
			for _, id := range []string{env.ID, env.ID + "." + tokenOf(env.To)} {
				old, err := tx.Find(id)
				if err != nil {
					return err
				}
				if old == nil {
					rec.ID = id
					break
				}
				if o := deadLetterFrom(old); o.Message["to"] == msg["to"] && o.Session == session {
					rec, dup = o, true
					return nil
				}
			}
			if rec.ID == "" { // both taken by messages to other addresses
				rec.ID = env.ID + "." + mailbox.NewID()
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
	return DeadLetterRecord{ID: str(m, "id"), Reason: str(m, "reason"), TS: str(m, "ts"), StateDir: str(m, "state_dir"), Session: str(m, "session"), Message: msg}
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

// SessionDeadLetters is DeadLetters of the coordinator's log as session
// sees it: its own records and those written with no session (every
// record when session is empty). Total counts those records.
func SessionDeadLetters(path, session string, lines int) (DeadLettersView, error) {
	session = strings.TrimSpace(session)
	if session == "" {
		return DeadLetters(path, lines)
	}
	v := DeadLettersView{DeadLetters: []DeadLetterRecord{}, File: path}
	all, err := mailbox.Read(path)
	if err != nil {
		return v, err
	}
	for _, l := range all {
		if l.Err != nil {
			v.Corrupted++
			continue
		}
		if r := deadLetterFrom(l.Value); r.Session == "" || r.Session == session {
			v.DeadLetters = append(v.DeadLetters, r)
		}
	}
	v.Total = len(v.DeadLetters) + v.Corrupted
	if n, keep := len(v.DeadLetters), defaultLines(lines); n > keep {
		v.DeadLetters = v.DeadLetters[n-keep:]
	}
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
	return JoinWithMore(out, len(v.DeadLetters)+v.Corrupted, v.Total, v.File)
}

// tokenOf is s with every character an id may not have replaced by '-'.
func tokenOf(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '.' || r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '-'
	}, s)
}
