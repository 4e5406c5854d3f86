package runs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/pi-actors/pi-actors/internal/fsutil"
	"github.com/pi-actors/pi-actors/internal/lazyre"
)

// File names inside a run's state directory.
const (
	RunFile       = "run.json"
	ProgressFile  = "progress.json"
	EventsFile    = "events.jsonl"
	OutboxFile    = "outbox.jsonl"
	InboxFile     = "inbox.jsonl"
	WakeFile      = "wake.jsonl"
	StdoutLog     = "stdout.log"
	StderrLog     = "stderr.log"
	ResultFile    = "result.json"
	HandledFile   = "terminal-handled.json"
	NotifiedFile  = "notified.json"
	TombstoneFile = "archive-tombstone.json"
)

// Statuses a run can have.
const (
	StatusRunning   = "running"
	StatusBackoff   = "backoff"
	StatusDone      = "done"
	StatusFailed    = "failed"
	StatusCancelled = "cancelled"
	StatusKilled    = "killed"
	StatusExited    = "exited"
	StatusArchived  = "archived"
)

// Terminal reports whether a status is final.
func Terminal(status string) bool {
	switch status {
	case StatusRunning, StatusBackoff:
		return false
	}
	return true
}

// Sentinel errors.
var (
	ErrNotFound  = errors.New("run not found")
	ErrInvalidID = errors.New("invalid run id")
	ErrBusy      = errors.New("run busy")
	ErrDenied    = errors.New("access denied")
)

var idRe = lazyre.New(`^[A-Za-z0-9_.-]+$`)

// ValidID checks a run id before it becomes a path: letters, digits, dot,
// underscore and dash, not "." or "..", at most 128 bytes.
func ValidID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: run id is empty; use letters, digits, '.', '_' and '-'", ErrInvalidID)
	case id == "." || id == ".." || !idRe.MatchString(id):
		return fmt.Errorf("%w: %q: run ids may contain only letters, digits, '.', '_' and '-' (and are not . or ..)", ErrInvalidID, id)
	case len(id) > 128:
		return fmt.Errorf("%w: %q is longer than 128 bytes", ErrInvalidID, id)
	}
	return nil
}

// Root returns <agent>/tmp/pi-actors/runs.
func Root(agentDir string) string {
	return filepath.Join(agentDir, "tmp", "pi-actors", "runs")
}

// Meta is run.json: what was started, by whom, and the supervisor's pid
// with its start time (a pid is only trusted together with it).
type Meta struct {
	Run            string          `json:"run"`
	Address        string          `json:"address"`
	StateDir       string          `json:"state_dir"`
	Cwd            string          `json:"cwd"`
	CreatedAt      time.Time       `json:"createdAt"`
	LaunchSource   string          `json:"launch_source,omitempty"`
	OwnerID        string          `json:"ownerId,omitempty"`
	Pid            int             `json:"pid"`
	PidStart       uint64          `json:"pid_start_time,omitempty"`
	Recipe         string          `json:"recipe,omitempty"`
	RecipeFile     string          `json:"recipe_file,omitempty"`
	Tool           string          `json:"tool,omitempty"`
	Template       any             `json:"template"`
	Values         map[string]any  `json:"values"`
	Artifacts      map[string]any  `json:"artifacts,omitempty"`
	Mailbox        any             `json:"mailbox,omitempty"`
	Restart        *Restart        `json:"restart,omitempty"`
	Health         *Health         `json:"health,omitempty"`
	RetireWhen     string          `json:"retire_when,omitempty"`
	Depth          int             `json:"depth"`
	Parent         string          `json:"parent,omitempty"`
	ContextRecords json.RawMessage `json:"recipe_context_records,omitempty"`
	ActorContext   bool            `json:"actor_context,omitempty"`
	Limits         Limits          `json:"limits"`
	DraftRecipe    string          `json:"draft_recipe,omitempty"`
	// Workflow is a workflow run's DAG as given (package workflows reads
	// it); WorkflowNode names the node a child run of a workflow carries
	// out; Resumes counts the times the kernel resumed the run on its
	// state dir (a workflow whose supervisor was lost, or retried).
	Workflow     any      `json:"workflow,omitempty"`
	WorkflowNode *NodeRef `json:"workflow_node,omitempty"`
	Resumes      int      `json:"resumes,omitempty"`
}

// Limits are the engine limits a supervisor applies.
type Limits struct {
	MaxParallel int   `json:"max_parallel"`
	MaxLeaves   int   `json:"max_leaves"`
	KillGraceMS int   `json:"kill_grace_ms"`
	LogMaxBytes int64 `json:"log_max_bytes"`
	LogKeep     int   `json:"log_keep"`
}

// Progress is progress.json, rewritten by the supervisor as the run goes.
type Progress struct {
	Phase     string    `json:"phase"`
	UpdatedAt time.Time `json:"updatedAt"`
	Active    int       `json:"activeSubagents"`
	Completed int       `json:"completed"`
	Failures  []any     `json:"failures"`
	Attempt   int       `json:"attempt,omitempty"`
	Restarts  int       `json:"restarts,omitempty"`
	NextStart string    `json:"next_start_at,omitempty"`
	Leaves    []Leaf    `json:"leaves,omitempty"`
	// Health is what the run's probes found (runs with a health
	// declaration only).
	Health *HealthState `json:"health,omitempty"`
}

// Leaf is a running leaf process group (for cleanup after a crash).
type Leaf struct {
	Pid     int    `json:"pid"`
	Start   uint64 `json:"start_time"`
	Command string `json:"command"`
	Path    string `json:"path"`
}

// Result is result.json, written once when the run is over.
type Result struct {
	Status      string    `json:"status"`
	Code        int       `json:"code"`
	Command     string    `json:"command,omitempty"`
	Killed      bool      `json:"killed"`
	Reason      string    `json:"reason,omitempty"`
	Error       string    `json:"error,omitempty"`
	Restarts    int       `json:"restarts,omitempty"`
	CompletedAt time.Time `json:"completedAt"`
}

// Handled is terminal-handled.json: the run ended on purpose (control.kill,
// control.cancel), so it raises no follow-up.
type Handled struct {
	Event  string    `json:"event"`
	Signal string    `json:"signal,omitempty"`
	From   string    `json:"from,omitempty"`
	TS     time.Time `json:"ts"`
}

// Dir is a run's state directory.
type Dir string

// Path returns a file inside the state directory.
func (d Dir) Path(name string) string { return filepath.Join(string(d), name) }

// ReadJSON decodes a JSON state file; a missing file is fs.ErrNotExist.
func (d Dir) ReadJSON(name string, v any) error {
	data, err := os.ReadFile(d.Path(name))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("read %s: %w", d.Path(name), err)
	}
	return nil
}

// WriteJSON atomically replaces a state file.
func (d Dir) WriteJSON(name string, v any) error {
	return fsutil.WriteJSON(d.Path(name), v, 0o600)
}

// WriteSnapshot atomically replaces a snapshot state file, one a crash of
// the machine may lose (progress.json): no fsync (fsutil.WriteSnapshot).
func (d Dir) WriteSnapshot(name string, v any) error {
	data, err := fsutil.MarshalIndent(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", d.Path(name), err)
	}
	return fsutil.WriteSnapshot(d.Path(name), data, 0o600)
}

// Exists reports whether a state file exists.
func (d Dir) Exists(name string) bool {
	_, err := os.Stat(d.Path(name))
	return err == nil
}

// Meta reads run.json.
func (d Dir) Meta() (*Meta, error) {
	var m Meta
	if err := d.ReadJSON(RunFile, &m); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s", ErrNotFound, d)
		}
		return nil, err
	}
	return &m, nil
}

// metaHead reads the identity fields of run.json only (run, address,
// createdAt, owner, pid and start time, recipe, tool): enough for a runs
// index entry, without building the template and values.
func (d Dir) metaHead() (*Meta, error) {
	var h struct {
		Run       string    `json:"run"`
		Address   string    `json:"address"`
		StateDir  string    `json:"state_dir"`
		CreatedAt time.Time `json:"createdAt"`
		OwnerID   string    `json:"ownerId"`
		Pid       int       `json:"pid"`
		PidStart  uint64    `json:"pid_start_time"`
		Recipe    string    `json:"recipe"`
		Tool      string    `json:"tool"`
	}
	data, err := os.ReadFile(d.Path(RunFile))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s", ErrNotFound, d)
		}
		return nil, err
	}
	// run.json is written indented from Meta ("run" first), whose
	// identity fields all come before "template": decode just that head (a
	// third of the file) when the file has that shape, else all of it.
	if i := bytes.Index(data, []byte("\n  \"template\":")); i > 0 && bytes.HasPrefix(data, []byte("{\n  \"run\":")) {
		head := append(bytes.TrimSuffix(bytes.TrimRight(data[:i:i], " \t\r\n"), []byte(",")), '}')
		if json.Unmarshal(head, &h) != nil || h.Run == "" {
			h.Run = ""
		}
	}
	if h.Run == "" {
		if err := json.Unmarshal(data, &h); err != nil {
			return nil, fmt.Errorf("read %s: %w", d.Path(RunFile), err)
		}
	}
	return &Meta{Run: h.Run, Address: h.Address, StateDir: h.StateDir, CreatedAt: h.CreatedAt, OwnerID: h.OwnerID,
		Pid: h.Pid, PidStart: h.PidStart, Recipe: h.Recipe, Tool: h.Tool}, nil
}

// Result reads result.json; nil when the run has not ended.
func (d Dir) Result() *Result {
	var r Result
	if d.ReadJSON(ResultFile, &r) != nil {
		return nil
	}
	return &r
}

// Progress reads progress.json; nil when absent.
func (d Dir) Progress() *Progress {
	var p Progress
	if d.ReadJSON(ProgressFile, &p) != nil {
		return nil
	}
	return &p
}

// StateDirFor returns the default state directory of a run id.
func StateDirFor(agentDir, id string) Dir {
	return Dir(filepath.Join(Root(agentDir), id))
}

// shortCommand cuts a command for summaries: 160 chars, else 157 + "...".
func shortCommand(c string) string {
	if r := []rune(c); len(r) > 160 {
		return string(r[:157]) + "..."
	}
	return c
}
