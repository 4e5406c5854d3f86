package sessions

import (
	"path/filepath"
	"time"

	"github.com/pi-actors/pi-actors/verbs/wire"
)

// Trace item kinds.
const (
	KindSpawn   = "spawn"
	KindMessage = "message"
	KindSuspend = "suspend"
	KindResume  = "resume"
)

// Item is one line of a session's causal record (TracePath): a spawn or a
// message the kernel accepted, with its cause — an immutable fact, only
// ever appended.
type Item struct {
	// ID is the message's id, or spawn:<run>@<createdAt ms> for a spawn.
	ID   string    `json:"id"`
	TS   time.Time `json:"ts"`
	Kind string    `json:"kind"`
	// Run is the run a spawn started, StateDir its state directory.
	Run      string `json:"run,omitempty"`
	StateDir string `json:"state_dir,omitempty"`
	// To, Type and From are a message's.
	To   string `json:"to,omitempty"`
	Type string `json:"type,omitempty"`
	From string `json:"from,omitempty"`
	// Outcome is what became of a message (the delivery's reason:
	// queued_mailbox, control_applied, session_suspended, …).
	Outcome string      `json:"outcome,omitempty"`
	Cause   *wire.Cause `json:"cause,omitempty"`
	// Detail: a spawn's recipe or tool, a suspend's count.
	Detail string `json:"detail,omitempty"`
}

// TraceDir is <agent>/tmp/pi-actors/trace.
func TraceDir(agentDir string) string { return filepath.Join(wire.TmpDir(agentDir), "trace") }

// TracePath is a session's causal record; the file rotated out of the
// way (TraceMaxBytes) is TracePath + ".1".
func TracePath(agentDir, session string) string {
	return filepath.Join(TraceDir(agentDir), Name(session)+".jsonl")
}

// TraceMaxBytes is the size past which the kernel rotates a session's
// causal record to TracePath + ".1" (one older file is kept).
const TraceMaxBytes = 32 << 20
