package workflows

import (
	"context"
	"time"
)

// Host starts, observes and stops a workflow's child runs: the lean
// binary's kernel client and the runs' own state files (package verbs).
type Host interface {
	// Start asks for the child runs of these attempts at once and returns
	// one result per request, in order.
	Start(ctx context.Context, reqs []StartRequest) []StartResult
	// Observe reads the child run of an attempt now.
	Observe(c Child) Observation
	// Stop stops child runs at once: kills them (their whole trees), or
	// — gently, as a service is once the nodes that needed it ended —
	// cancels them (SIGTERM, the kill grace, SIGKILL), so a server or a
	// database shuts down cleanly.
	Stop(ctx context.Context, runs []string, gently bool) error
}

// StartRequest asks for the child run of one attempt of a node.
type StartRequest struct {
	Node    string
	Attempt int
	Run     string
	Params  map[string]any // the spawn request (SpawnParams)
	// Template is the node's template as the workflow wrote it (nil for
	// a recipe or agent node), for listings.
	Template any
}

// StartResult is the answer to one StartRequest.
type StartResult struct {
	StateDir string
	Err      error
	// Again means the start may work later (the kernel is unavailable,
	// the session is at its live-run limit, the run is being started):
	// the same attempt is asked for again.
	Again bool
	// Held means the run id is held by a live run that is not this
	// attempt's (a run of that id started by hand): asked for again up to
	// HeldWait, then the attempt fails (start_failed) instead of waiting
	// in starting for as long as that run lives.
	Held bool
}

// HeldWait bounds how long a node waits for a run id another live run
// holds.
var HeldWait = time.Minute

// Child names the child run of one attempt.
type Child struct {
	Node     string
	Run      string
	StateDir string // "" when not known yet
	Attempt  int
}

// Child run states an Observation reports.
const (
	ChildMissing = "missing" // no run of this attempt (not yet, or another attempt's)
	ChildRunning = "running"
	ChildEnded   = "ended"
)

// Observation is a child run as its files show it now.
type Observation struct {
	State     string
	StateDir  string
	StartedAt time.Time // the run's createdAt
	// Ready is a running run's readiness ((*runs.Info).Ready): its
	// readiness probe passed in its current attempt, or it has none;
	// ReadyAt is since when.
	Ready   bool
	ReadyAt time.Time
	// ReadyTimedOut: its readiness probe did not pass within its
	// ready_timeout in this attempt; a dependent waiting for it to be
	// ready will not start.
	ReadyTimedOut bool
	// Status, Code, Reason and Error describe an ended run (its
	// result.json, or how it was lost).
	Status  string
	Code    int
	Reason  string
	Error   string
	EndedAt time.Time
}
