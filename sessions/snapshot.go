package sessions

import (
	"time"
)

// Snapshot is <session>.snapshot.json, written atomically when the
// session is suspended: its runs and their states, the messages waiting
// for them, and its workflows' node states — what the session was doing
// when it stopped.
type Snapshot struct {
	Session     string         `json:"session"`
	SuspendedAt time.Time      `json:"suspended_at"`
	By          string         `json:"by,omitempty"`
	Runs        []SnapshotRun  `json:"runs"`
	Pending     []PendingMsg   `json:"pending_messages"`
	Workflows   []SnapshotFlow `json:"workflows,omitempty"`
}

// SnapshotRun is one live run of a suspended session.
type SnapshotRun struct {
	Run       string `json:"run"`
	Status    string `json:"status"` // before the suspend: running or backoff
	StateDir  string `json:"state_dir"`
	Pid       int    `json:"pid"`
	Parent    string `json:"parent,omitempty"`
	Workflow  string `json:"workflow,omitempty"` // a workflow node's workflow run
	Node      string `json:"node,omitempty"`
	Attempt   int    `json:"attempt,omitempty"`
	Restarts  int    `json:"restarts,omitempty"`
	Suspended bool   `json:"suspended"` // its supervisor confirmed
	Error     string `json:"error,omitempty"`
}

// PendingMsg is a message queued for a run (not yet claimed) when the
// session was suspended.
type PendingMsg struct {
	Run      string `json:"run"`
	ID       string `json:"id"`
	Type     string `json:"type"`
	From     string `json:"from,omitempty"`
	QueuedAt string `json:"queued_at,omitempty"`
}

// SnapshotFlow is a workflow run's state when the session was suspended.
type SnapshotFlow struct {
	Run    string            `json:"run"`
	Status string            `json:"status"`
	Nodes  map[string]string `json:"nodes"` // node id → status
	File   string            `json:"state_file"`
}
