package mailbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/pi-actors/pi-actors/internal/fsutil"
)

// fold rewrites the file with every update written into its record (see
// foldFile) and brings the state up to date. The caller holds the lock.
func (q *Queue) fold(st *queueState) error {
	data, err := os.ReadFile(q.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("fold %s: %w", q.Path, err)
	}
	out, changed, err := foldFile(data, retained(q.KeepTerminal))
	if err != nil {
		return fmt.Errorf("fold %s: %w", q.Path, err)
	}
	if !changed {
		return nil
	}
	var perm fs.FileMode = filePerm
	if fi, err := os.Stat(q.Path); err == nil {
		perm = fi.Mode().Perm()
	}
	if err := fsutil.WriteFile(q.Path, out, perm); err != nil {
		return err
	}
	return st.catchUp(q.Path)
}

// foldLine is one line of a file being folded.
type foldLine struct {
	Line
	rec    int // index into recs for a record line, else -1
	folded bool
}

type foldRec struct {
	line   int
	status string
	sets   []json.RawMessage
	newID  bool
	drop   bool
}

// foldFile writes each update line's set into the record it names (the
// first record with that id before it) and drops the update line; gives
// records without an id, or with an id an earlier record has, a fresh
// one; and, when keep >= 0, drops the oldest handled/failed records
// beyond keep. Malformed lines, updates of unknown records and all other
// records stay byte for byte, in order; blank lines go.
func foldFile(data []byte, keep int) (out []byte, changed bool, err error) {
	var lines []foldLine
	var recs []foldRec
	byID := map[string]int{}
	for _, l := range splitLines(data, 0, 1) {
		fl := foldLine{Line: l, rec: -1}
		m, ok := rawObject(l.Raw)
		status := rawStatus(m["status"])
		switch {
		case !ok:
		case status == StatusUpdate:
			ref, _ := rawString(m["ref"])
			i, found := byID[strings.TrimSpace(ref)]
			if set, ok := rawObject(m["set"]); found && ok {
				recs[i].sets = append(recs[i].sets, m["set"])
				if v, has := set["status"]; has {
					recs[i].status = rawStatus(v)
				}
				fl.folded, changed = true, true
			}
		default:
			fl.rec = len(recs)
			r := foldRec{line: len(lines), status: status}
			id := rawID(m["id"])
			if _, dup := byID[id]; id == "" || dup {
				r.newID, changed = true, true
			} else {
				byID[id] = len(recs)
			}
			recs = append(recs, r)
		}
		lines = append(lines, fl)
	}
	if dropTerminal(recs, keep) {
		changed = true
	}
	if !changed {
		return nil, false, nil
	}
	return writeFolded(lines, recs)
}

// dropTerminal marks the oldest handled/failed records beyond keep
// (keep < 0: none) and reports whether it marked any.
func dropTerminal(recs []foldRec, keep int) bool {
	if keep < 0 {
		return false
	}
	terminal := 0
	for _, r := range recs {
		if isTerminalStatus(r.status) {
			terminal++
		}
	}
	drop := terminal - keep
	for i := 0; i < len(recs) && drop > 0; i++ {
		if isTerminalStatus(recs[i].status) {
			recs[i].drop = true
			drop--
		}
	}
	return terminal > keep
}

// writeFolded encodes the lines that stay, each record with its sets
// applied.
func writeFolded(lines []foldLine, recs []foldRec) ([]byte, bool, error) {
	var out []byte
	for _, l := range lines {
		if l.folded {
			continue
		}
		if l.rec < 0 {
			out = append(append(out, l.Raw...), '\n')
			continue
		}
		r := recs[l.rec]
		if r.drop {
			continue
		}
		if len(r.sets) == 0 && !r.newID {
			out = append(append(out, l.Raw...), '\n')
			continue
		}
		o, err := parseObject(l.Raw)
		if err != nil {
			return nil, false, fmt.Errorf("line %d: %w", l.N, err)
		}
		if r.newID {
			o.set("id", newUUID())
		}
		for _, s := range r.sets {
			set, err := parseObject(s)
			if err != nil {
				return nil, false, fmt.Errorf("update of line %d: %w", l.N, err)
			}
			for _, m := range set {
				if err := o.set(m.key, m.val); err != nil {
					return nil, false, err
				}
			}
		}
		out = append(append(out, o.bytes()...), '\n')
	}
	return out, true, nil
}
