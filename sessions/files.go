package sessions

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/pi-actors/pi-actors/internal/fsutil"
	"github.com/pi-actors/pi-actors/internal/lazyre"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// Session states. Completed is derived (every run ended), never stored;
// resuming is the record's state while the kernel releases what it held.
const (
	StateActive    = "active"
	StateSuspended = "suspended"
	StateResuming  = "resuming"
	StateCompleted = "completed"
)

// File suffixes under Dir.
const (
	RecordSuffix   = ".session.json"  // the record
	SnapshotSuffix = ".snapshot.json" // written when the session is suspended
	HeldSuffix     = ".held.jsonl"    // messages held while it is suspended
	ActivitySuffix = ".active"        // modified at each CLI/MCP/pi call of the session
	QueueSuffix    = ".jsonl"         // the follow-up queue (package actors)
)

var tokenRe = lazyre.New(`^[A-Za-z0-9_.-]+$`)

// Name is the file name of a session: the id itself when it is a token
// of at most 100 bytes, else "s-" and a hash of it.
func Name(session string) string {
	if tokenRe.MatchString(session) && len(session) <= 100 {
		return session
	}
	sum := sha256.Sum256([]byte(session))
	return "s-" + hex.EncodeToString(sum[:12])
}

// Dir is <agent>/tmp/pi-actors/sessions.
func Dir(agentDir string) string { return filepath.Join(wire.TmpDir(agentDir), "sessions") }

// Path is the session's file with suffix under Dir.
func Path(agentDir, session, suffix string) string {
	return filepath.Join(Dir(agentDir), Name(session)+suffix)
}

// Record is <session>.session.json.
type Record struct {
	Session string `json:"session"`
	// State is active, suspended or resuming; Since is when it became so.
	State string    `json:"state"`
	Since time.Time `json:"since"`
	// SuspendedAt and ResumedAt are the last suspend and resume; By says
	// who asked (session:<id>, operator, or auto_suspend_after).
	SuspendedAt time.Time `json:"suspended_at,omitzero"`
	ResumedAt   time.Time `json:"resumed_at,omitzero"`
	By          string    `json:"by,omitempty"`
	// Snapshot is the snapshot file of the last suspend; Runs the live
	// runs it stopped; Suspends counts the suspends.
	Snapshot string `json:"snapshot,omitempty"`
	Runs     int    `json:"runs"`
	Suspends int    `json:"suspends"`
	// PausedMS is the time the session spent suspended, in all.
	PausedMS int64 `json:"paused_ms,omitempty"`
}

// Held reports whether the record keeps the session's messages and
// follow-ups back (suspended, or still resuming).
func (r *Record) Held() bool {
	return r != nil && (r.State == StateSuspended || r.State == StateResuming)
}

// Load reads a session's record; nil (and no error) when it has none.
func Load(agentDir, session string) (*Record, error) {
	return read(Path(agentDir, session, RecordSuffix))
}

func read(path string) (*Record, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read session record %s: %w", path, err)
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("read session record %s: %w", path, err)
	}
	return &r, nil
}

// Save writes the record atomically.
func (r *Record) Save(agentDir string) error {
	if err := os.MkdirAll(Dir(agentDir), 0o700); err != nil {
		return fmt.Errorf("save session record: %w", err)
	}
	return fsutil.WriteJSON(Path(agentDir, r.Session, RecordSuffix), r, 0o600)
}

// Suspended reports whether the session's record says suspended (a
// resuming session is not: its runs go on). A missing or unreadable
// record is not suspended.
func Suspended(agentDir, session string) bool {
	if session == "" {
		return false
	}
	r, err := Load(agentDir, session)
	return err == nil && r != nil && r.State == StateSuspended
}

// List reads every session record, by session id.
func List(agentDir string) ([]*Record, error) {
	paths, err := filepath.Glob(filepath.Join(Dir(agentDir), "*"+RecordSuffix))
	if err != nil {
		return nil, err
	}
	var out []*Record
	for _, p := range paths {
		r, err := read(p)
		if err != nil || r == nil || r.Session == "" {
			continue // a damaged record reads as no record: the session is active
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Session < out[j].Session })
	return out, nil
}

// Touch records activity of the session now (its activity file's
// modification time), creating the file if needed. Best effort: activity
// only feeds auto_suspend_after and listings.
func Touch(agentDir, session string) {
	if session == "" || session == "all" { // all: every session (ps session=all)
		return
	}
	p := Path(agentDir, session, ActivitySuffix)
	now := time.Now()
	if os.Chtimes(p, now, now) == nil {
		return
	}
	if os.MkdirAll(Dir(agentDir), 0o700) != nil {
		return
	}
	if f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE, 0o600); err == nil {
		f.Close()
	}
}

// LastActivity is when the session was last active through a front door
// (zero when never).
func LastActivity(agentDir, session string) time.Time {
	st, err := os.Stat(Path(agentDir, session, ActivitySuffix))
	if err != nil {
		return time.Time{}
	}
	return st.ModTime()
}

// Caller reports whether an environment is a session's own front door
// (a person, pi or an MCP client): it is not inside a run
// (PI_ACTORS_RUN_ID unset, nor RemoteRunEnv: a run's call that came
// from another node). A run's own calls are not the session's activity.
func Caller(environ []string) bool {
	for _, kv := range environ {
		for _, key := range []string{"PI_ACTORS_RUN_ID=", RemoteRunEnv + "="} {
			if v, ok := strings.CutPrefix(kv, key); ok && v != "" {
				return false
			}
		}
	}
	return true
}

// RemoteRunEnv names, in a request that came from another node, the run
// on that node that made it (run id@node): its PI_ACTORS_RUN_ID does not
// cross, since the id may name another run here.
const RemoteRunEnv = "PI_ACTORS_REMOTE_RUN"
