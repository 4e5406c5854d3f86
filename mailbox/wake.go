package mailbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pi-actors/pi-actors/internal/fsutil"
)

// Wake reasons written by the runtime.
const (
	WakeRunMessage    = "run.message"
	WakeRoomMessage   = "room.message"
	WakeBranchMessage = "branch.message"
	WakeBranchClaim   = "branch.inbox.claim"
	WakeBranchStatus  = "branch.inbox.status"
)

// Wake is one wake.jsonl record: an advisory doorbell telling a watcher of
// a state directory that an actor has something to look at. It carries no
// message; the durable record is already in an inbox or timeline when the
// wake is written, so a lost wake delays delivery but loses nothing.
type Wake struct {
	Actor    string         `json:"actor"`
	ID       string         `json:"id"`
	Metadata map[string]any `json:"metadata,omitempty"`
	Reason   string         `json:"reason"`
	StateDir string         `json:"state_dir"`
	TS       string         `json:"ts"`
}

// AppendWake appends a wake record to path (a state dir's wake.jsonl) and
// returns it as written. Actor (an address, written canonically) and
// Reason are required; ID defaults to a new uuid, StateDir to the
// directory of path, TS to now.
func AppendWake(path string, w Wake) (Wake, error) {
	var out []Wake
	err := Update(path, func(tx *Tx) (err error) {
		out, err = AppendWakes(tx, path, w)
		return err
	})
	if err != nil {
		return Wake{}, err
	}
	return out[0], nil
}

// AppendWakes is AppendWake for several records, in one write, inside a
// transaction whose lock guards path.
func AppendWakes(tx *Tx, path string, ws ...Wake) ([]Wake, error) {
	out := make([]Wake, len(ws))
	recs := make([]any, len(ws))
	for i, w := range ws {
		w, err := w.normalized()
		if err != nil {
			return nil, err
		}
		if w.ID == "" {
			w.ID = NewID()
		}
		if w.StateDir == "" {
			w.StateDir = filepath.Dir(path)
		}
		if w.TS == "" {
			w.TS = timestamp()
		}
		out[i], recs[i] = w, w
	}
	if err := tx.AppendFile(path, recs...); err != nil {
		return nil, err
	}
	if err := TrimLines(path, WakeLimit); err != nil {
		return nil, err
	}
	return out, nil
}

// WakeLimit bounds a wake.jsonl: an append that takes it past WakeLimit
// bytes drops its oldest records, keeping the newest quarter. Wakes are
// doorbells, read from the end (a reader that finds the file shorter
// starts again at its beginning); a long-lived run whose branches or room
// are busy wrote them for ever.
var WakeLimit int64 = 1 << 20

// TrimLines cuts the JSONL file path to its newest limit/4 bytes of
// whole lines once it is larger than limit (a log read from its end:
// wake.jsonl, an actor's journal). Its one writer calls it after an
// append, holding the file's lock if others append.
func TrimLines(path string, limit int64) error {
	fi, err := os.Stat(path)
	if err != nil || fi.Size() <= limit {
		return nil // a file that cannot be stat'ed was just appended to: the next append trims it
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("trim %s: %w", path, err)
	}
	cut := len(data) - int(limit/4)
	nl := bytes.IndexByte(data[max(cut, 0):], '\n')
	if cut <= 0 || nl < 0 {
		return nil
	}
	if err := fsutil.WriteSnapshot(path, data[cut+nl+1:], fi.Mode().Perm()); err != nil {
		return fmt.Errorf("trim %s: %w", path, err)
	}
	return nil
}

func (w Wake) normalized() (Wake, error) {
	w.Actor = strings.TrimSpace(w.Actor)
	w.Reason = strings.TrimSpace(w.Reason)
	if w.Actor == "" {
		return Wake{}, envErr("actor", nil, "wake record requires actor (an address such as run:<id>)")
	}
	if w.Reason == "" {
		return Wake{}, envErr("reason", nil, "wake record requires reason (such as %s)", WakeRunMessage)
	}
	a, err := Parse(w.Actor)
	if err != nil {
		return Wake{}, envErr("actor", err, "wake actor: %v", err)
	}
	w.Actor = a.String()
	return w, nil
}

// ParseWake decodes one wake.jsonl line; a line without actor or reason is
// an error, as is a malformed one (watchers skip both).
func ParseWake(line []byte) (Wake, error) {
	var w Wake
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(&w); err != nil {
		return Wake{}, fmt.Errorf("%w: wake record: %v", ErrMalformed, err)
	}
	if strings.TrimSpace(w.Actor) == "" || strings.TrimSpace(w.Reason) == "" {
		return Wake{}, fmt.Errorf("%w: wake record without actor or reason", ErrMalformed)
	}
	return w, nil
}
