package workflows

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pi-actors/pi-actors/internal/fsutil"
)

// Files of a workflow in its run's state directory.
const (
	StateFile = "workflow.json" // the durable state (State)
	LockFile  = "workflow.lock" // held by the one scheduler of the workflow
	EnvFile   = "workflow-env.json"
)

// Node statuses.
const (
	NodePending   = "pending"   // waiting for its dependencies (or a slot)
	NodeStarting  = "starting"  // its child run is being asked for
	NodeRunning   = "running"   // its child run is up
	NodeBackoff   = "backoff"   // failed; retried at next_attempt_at
	NodeDone      = "done"      // ended with exit 0 (a service: stopped once its dependents ended)
	NodeFailed    = "failed"    // failed with no retry left
	NodeSkipped   = "skipped"   // a dependency failed
	NodeCancelled = "cancelled" // never started: fail_fast or a kill stopped the workflow
	NodeKilled    = "killed"    // stopped while running: fail_fast or a kill
)

// Workflow statuses.
const (
	StatusRunning = "running"
	StatusDone    = "done"
	StatusFailed  = "failed"
	StatusKilled  = "killed"
)

// NodeEnded reports whether a node status is final (until a retry).
func NodeEnded(status string) bool {
	switch status {
	case NodeDone, NodeFailed, NodeSkipped, NodeCancelled, NodeKilled:
		return true
	}
	return false
}

// Retryable reports whether control.retry may re-run a node in status.
func Retryable(status string) bool {
	return status == NodeFailed || status == NodeKilled || status == NodeCancelled || status == NodeSkipped
}

// State is workflow.json: every node's status, attempts, exit code, times
// and output, written whole and atomically after every change.
type State struct {
	Run      string   `json:"run"`
	Instance string   `json:"instance"` // the workflow run's createdAt
	DAG      string   `json:"dag_id,omitempty"`
	Status   string   `json:"status"`
	Reason   string   `json:"reason,omitempty"`
	Failed   []string `json:"failed,omitempty"`
	// Excused are failed nodes a control.retry of another node let stand:
	// under fail_fast their failure no longer stops the nodes that run
	// again (it still fails the workflow at its end).
	Excused   []string    `json:"excused,omitempty"`
	StartedAt time.Time   `json:"started_at"`
	EndedAt   time.Time   `json:"ended_at,omitzero"`
	UpdatedAt time.Time   `json:"updated_at"`
	Layers    [][]string  `json:"layers"`
	Policy    Policy      `json:"policy"`
	Nodes     []NodeState `json:"nodes"`
	// PausedMS is the time the workflow spent suspended with its session
	// (its timeouts and retry delays did not count it); PausedSeen is the
	// last paused_ms read from its run's progress.json.
	PausedMS   int64 `json:"paused_ms,omitempty"`
	PausedSeen int64 `json:"paused_seen_ms,omitempty"`
	// PausedBy is the supervisor PausedSeen was read from (Engine.Supervisor).
	PausedBy string `json:"paused_by,omitempty"`
}

// NodeState is one node in workflow.json.
type NodeState struct {
	ID      string `json:"id"`
	Layer   int    `json:"layer"`
	Service bool   `json:"service,omitempty"`
	Status  string `json:"status"`
	// Attempts counts the child runs asked for; RetryBase is Attempts when
	// the last control.retry reset the node (its retry budget counts from
	// there).
	Attempts  int    `json:"attempts"`
	RetryBase int    `json:"retry_base,omitempty"`
	ExitCode  *int   `json:"exit_code,omitempty"`
	Reason    string `json:"reason,omitempty"`
	Error     string `json:"error,omitempty"`
	// Stopping says why the scheduler is stopping the node's run:
	// timeout, fail_fast, services_done or kill.
	Stopping   string    `json:"stopping,omitempty"`
	Run        string    `json:"run,omitempty"`
	StateDir   string    `json:"state_dir,omitempty"`
	OutputFile string    `json:"output_file,omitempty"`
	StartedAt  time.Time `json:"started_at,omitzero"`
	EndedAt    time.Time `json:"ended_at,omitzero"`
	NextAt     time.Time `json:"next_attempt_at,omitzero"`
	// Ready is what the last observation of the node's run said of its
	// readiness (condition "ready"), ReadyAt since when.
	Ready   bool      `json:"ready,omitempty"`
	ReadyAt time.Time `json:"ready_at,omitzero"`
	// ReadyTimedOut: the node's run was not ready within its
	// ready_timeout (this attempt): its dependents waiting for ready are
	// skipped.
	ReadyTimedOut bool `json:"ready_timed_out,omitempty"`
	// PausedMS is the time this attempt spent suspended: its timeout
	// does not count it.
	PausedMS int64 `json:"paused_ms,omitempty"`
}

// NewState is the state of a workflow that has not started a node yet.
func NewState(w *Workflow, run, instance string, now time.Time) *State {
	st := &State{Run: run, Instance: instance, DAG: w.ID, Status: StatusRunning, StartedAt: now.UTC(), UpdatedAt: now.UTC(),
		Layers: w.Layers, Policy: w.Policy}
	for _, n := range w.Nodes {
		st.Nodes = append(st.Nodes, NodeState{ID: n.ID, Layer: n.Layer, Service: n.Service, Status: NodePending, Run: ChildRun(run, n.ID)})
	}
	return st
}

// Node returns the state of node id, or nil.
func (s *State) Node(id string) *NodeState {
	for i := range s.Nodes {
		if s.Nodes[i].ID == id {
			return &s.Nodes[i]
		}
	}
	return nil
}

// Ended reports whether the workflow is over.
func (s *State) Ended() bool { return s.Status != StatusRunning }

// Counts counts the nodes by status.
func (s *State) Counts() map[string]int {
	c := map[string]int{}
	for _, n := range s.Nodes {
		c[n.Status]++
	}
	return c
}

// CountText is "3 done, 1 failed, …": the nodes by status, in a fixed
// order.
func (s *State) CountText() string {
	c := s.Counts()
	var out []string
	for _, st := range []string{NodeDone, NodeFailed, NodeSkipped, NodeKilled, NodeCancelled, NodeRunning, NodeStarting, NodeBackoff, NodePending} {
		if c[st] > 0 {
			out = append(out, fmt.Sprintf("%d %s", c[st], st))
		}
	}
	return strings.Join(out, ", ")
}

// Load reads workflow.json from a state directory; a missing file is
// fs.ErrNotExist.
func Load(dir string) (*State, error) {
	path := filepath.Join(dir, StateFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var st State
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return &st, nil
}

// Save writes workflow.json atomically.
func (s *State) Save(dir string) error {
	s.UpdatedAt = time.Now().UTC()
	if err := fsutil.WriteJSON(filepath.Join(dir, StateFile), s, 0o600); err != nil {
		return fmt.Errorf("write workflow state: %w", err)
	}
	return nil
}

// Open loads the workflow state of this instance from dir, or starts a
// new one (no file yet, or a file of an earlier run with the same id).
func Open(dir string, w *Workflow, run, instance string) (*State, error) {
	st, err := Load(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	case st.Instance == instance && len(st.Nodes) == len(w.Nodes):
		return st, nil
	}
	return NewState(w, run, instance, time.Now()), nil
}

// Finish records a workflow ended from outside its scheduler, once the
// scheduler is dead (the kernel's control.kill, or a workflow run that
// ended for good with its workflow still running: cancelled while its
// scheduler could not answer, its scheduler's restart limit reached):
// nodes that were running are killed, nodes that had not started are
// cancelled, and the workflow gets status (killed or failed) and reason;
// ended, if not nil, is told of each attempt it ended and each node it
// cancelled (once recorded).
// A workflow that ended already is left as it is. It takes the
// workflow's lock, so it waits for a scheduler still letting go.
//
// paused is the time the workflow's run was suspended in all, as its
// supervisor (Engine.Supervisor) counted it: what the scheduler did not
// count yet (a kill while the session is suspended) is left out of the
// killed nodes' took= as the scheduler leaves it out.
func Finish(dir, status, reason string, timeout time.Duration, supervisor string, paused int64, ended func(*NodeState)) error {
	if _, err := os.Stat(filepath.Join(dir, StateFile)); err != nil {
		return nil // nothing was recorded yet: nothing to finish
	}
	unlock, err := fsutil.LockTimeout(filepath.Join(dir, LockFile), timeout)
	if err != nil {
		return err
	}
	defer unlock()
	st, err := Load(dir)
	if err != nil {
		return err
	}
	if st.Ended() {
		return nil
	}
	now := time.Now().UTC()
	delta := paused
	if supervisor != "" && supervisor == st.PausedBy {
		delta = paused - st.PausedSeen
	}
	delta = max(delta, 0)
	st.PausedMS += delta
	var killed []*NodeState
	for i := range st.Nodes {
		n := &st.Nodes[i]
		switch n.Status {
		case NodeRunning, NodeStarting:
			n.PausedMS += delta
			n.Status, n.Reason, n.EndedAt, n.Stopping = NodeKilled, reason, now, ""
			killed = append(killed, n)
		case NodePending, NodeBackoff:
			n.Status, n.Reason, n.NextAt = NodeCancelled, reason, time.Time{}
			killed = append(killed, n) // ended by this stop too: the trace says why it never ran
		}
	}
	st.Status, st.Reason, st.EndedAt = status, reason, now
	if err := st.Save(dir); err != nil {
		return err
	}
	for _, n := range killed {
		if ended != nil {
			ended(n) // an attempt this stop ended, or a node it cancelled
		}
	}
	return nil
}
