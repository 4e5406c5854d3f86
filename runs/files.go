package runs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pi-actors/pi-actors/internal/fsutil"
	"github.com/pi-actors/pi-actors/internal/lazyre"
	"github.com/pi-actors/pi-actors/verbs/wire"
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
	StatusRunning = "running"
	StatusBackoff = "backoff"
	// StatusSuspended: its session is suspended; every process of the run
	// is stopped, and so are its clocks (live, not terminal).
	StatusSuspended = "suspended"
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
	case StatusRunning, StatusBackoff, StatusSuspended:
		return false
	}
	return true
}

// Sentinel errors.
var (
	ErrNotFound  = errors.New("run not found")
	ErrInvalidID = errors.New("invalid run id")
	ErrBusy      = errors.New("run busy")
	// ErrDamaged is a state file that is not the JSON pi-actors wrote
	// (changed from outside: pi-actors writes each atomically).
	ErrDamaged = errors.New("state file damaged")
	// ErrStateDir is a state directory that cannot be created where it
	// was asked for (its parent missing, not a directory, read-only).
	ErrStateDir = errors.New("create state dir")
	ErrDenied   = errors.New("access denied")
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
	case strings.HasPrefix(id, "."):
		// .<id>.new-<n> is a run being created: the next kernel removes it.
		return fmt.Errorf("%w: %q starts with '.', which names a run still being created; start the id with a letter, digit, '_' or '-'", ErrInvalidID, id)
	case slices.Contains(reservedIDs, id):
		return fmt.Errorf("%w: %q is reserved (the runs directory keeps its archives, index and lock under these names: %s); pick another id", ErrInvalidID, id, strings.Join(reservedIDs, ", "))
	}
	return nil
}

// archivedDir is the runs root's directory of archived runs (rm).
const archivedDir = "archived"

// preservedDir is the directory beside a pruned run's state dir that
// keeps the artifacts its prune preserved (<parent>/preserved-artifacts/<run>).
const preservedDir = "preserved-artifacts"

// reservedIDs are the names the runs root (Root) holds besides run
// directories: the archives, every pruned run's preserved artifacts, the
// index and its lock, and tmp, which the index scan passes over.
var reservedIDs = []string{archivedDir, preservedDir, "tmp", IndexFile, IndexFile + ".lock"}

// runDirName reports whether a name in the runs root can be a run's
// directory: not a reserved name, not a run being created (.<id>.new-<n>).
func runDirName(n string) bool {
	return !strings.HasPrefix(n, ".") && !slices.Contains(reservedIDs, n)
}

// Root returns <agent>/tmp/pi-actors/runs.
func Root(agentDir string) string {
	return filepath.Join(agentDir, "tmp", "pi-actors", "runs")
}

// Meta is run.json: what was started, by whom, and the supervisor's pid
// with its start time (a pid is only trusted together with it).
type Meta struct {
	Run          string    `json:"run"`
	Address      string    `json:"address"`
	StateDir     string    `json:"state_dir"`
	Cwd          string    `json:"cwd"`
	CreatedAt    time.Time `json:"createdAt"`
	LaunchSource string    `json:"launch_source,omitempty"`
	OwnerID      string    `json:"ownerId,omitempty"`
	// HomeNode is the cluster node of the owning session when it is not
	// the run's own: the run's follow-ups are delivered there.
	HomeNode       string          `json:"homeNode,omitempty"`
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
	// ResumedAt is when the last resume started the run again (zero if
	// never): its elapsed time counts from there.
	ResumedAt time.Time `json:"resumedAt,omitzero"`
	// Cause is what made the spawn happen: the session, the run it came
	// from, the message, tool call or MCP request, the workflow node.
	Cause *wire.Cause `json:"cause,omitempty"`
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
	// SuspendedAt is when the run's session suspended it (zero while it
	// runs); PausedMS is the time it spent suspended so far.
	SuspendedAt time.Time `json:"suspended_at,omitzero"`
	PausedMS    int64     `json:"paused_ms,omitempty"`
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
	// The run's identity as run.json has it (Identify): a runs index
	// rebuild lists an ended run from this file alone. Absent in a
	// result.json written before it was added, or without run.json.
	Run     string `json:"run,omitempty"`
	OwnerID string `json:"ownerId,omitempty"`
	Recipe  string `json:"recipe,omitempty"`
	Tool    string `json:"tool,omitempty"`
}

// Identify copies the run's identity from m (nil: none) and returns r.
func (r *Result) Identify(m *Meta) *Result {
	if m != nil {
		r.Run, r.OwnerID, r.Recipe, r.Tool = m.Run, m.OwnerID, m.Recipe, m.Tool
	}
	return r
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
		return fmt.Errorf("%w: read %s: %w", ErrDamaged, d.Path(name), err)
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
	data, err := os.ReadFile(d.Path(RunFile))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s", ErrNotFound, d)
		}
		return nil, err
	}
	return metaHeadOf(data, d.Path(RunFile))
}

// StartedAt is when the run's current life began: its last resume (a
// restart of an ended run, a workflow resumed on its state dir), else its
// creation.
func (m *Meta) StartedAt() time.Time {
	if m.ResumedAt.After(m.CreatedAt) {
		return m.ResumedAt
	}
	return m.CreatedAt
}

// metaHeadOf decodes the identity fields of run.json's content (path
// names it in errors).
func metaHeadOf(data []byte, path string) (*Meta, error) {
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
	// run.json is written indented from Meta ("run" first), whose
	// identity fields all come before "template": read just that head (a
	// third of the file) when the file has that shape — line by line, or
	// decoded — else decode all of it.
	if i := bytes.Index(data, []byte("\n  \"template\":")); i > 0 && bytes.HasPrefix(data, []byte("{\n  \"run\":")) {
		if m, ok := scanMetaHead(data[:i]); ok {
			return m, nil
		}
		head := append(bytes.TrimSuffix(bytes.TrimRight(data[:i:i], " \t\r\n"), []byte(",")), '}')
		if json.Unmarshal(head, &h) != nil || h.Run == "" {
			h.Run = ""
		}
	}
	if h.Run == "" {
		if err := json.Unmarshal(data, &h); err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
	}
	return &Meta{Run: h.Run, Address: h.Address, StateDir: h.StateDir, CreatedAt: h.CreatedAt, OwnerID: h.OwnerID,
		Pid: h.Pid, PidStart: h.PidStart, Recipe: h.Recipe, Tool: h.Tool}, nil
}

// scanMetaHead reads the identity fields from run.json's head as Meta's
// indented encoding writes it, without reflection (a runs index rebuild
// reads ten thousand of them; see scanFlat). It reports false for
// anything else, and the caller decodes the head with encoding/json.
func scanMetaHead(head []byte) (*Meta, bool) {
	m := &Meta{}
	ok := scanFlat(head, func(key string, val []byte) (err error) {
		switch key {
		case "run":
			m.Run, err = flatString(val)
		case "address":
			m.Address, err = flatString(val)
		case "state_dir":
			m.StateDir, err = flatString(val)
		case "ownerId":
			m.OwnerID, err = flatString(val)
		case "recipe":
			m.Recipe, err = flatString(val)
		case "tool":
			m.Tool, err = flatString(val)
		case "createdAt":
			m.CreatedAt, err = flatTime(val)
		case "pid":
			m.Pid, err = strconv.Atoi(string(val))
		case "pid_start_time":
			m.PidStart, err = strconv.ParseUint(string(val), 10, 64)
		}
		return err
	})
	return m, ok && m.Run != ""
}

// scanResultStatus reads what a runs index entry needs of result.json
// (status, code, reason, completedAt) as Result's indented encoding
// writes it, without reflection; the other fields are left out. It
// reports false for anything else.
func scanResultStatus(data []byte) (*Result, bool) {
	r := &Result{}
	ok := scanFlat(bytes.TrimSuffix(bytes.TrimRight(data, " \t\r\n"), []byte("}")), func(key string, val []byte) (err error) {
		switch key {
		case "status":
			r.Status, err = flatString(val)
		case "reason":
			r.Reason, err = flatString(val)
		case "code":
			r.Code, err = strconv.Atoi(string(val))
		case "completedAt":
			r.CompletedAt, err = flatTime(val)
		case "run":
			r.Run, err = flatString(val)
		case "ownerId":
			r.OwnerID, err = flatString(val)
		case "recipe":
			r.Recipe, err = flatString(val)
		case "tool":
			r.Tool, err = flatString(val)
		}
		return err
	})
	return r, ok && !r.CompletedAt.IsZero()
}

// errFlat is a value scanFlat's callers do not read without encoding/json.
var errFlat = errors.New("not a plain value")

// scanFlat walks a JSON object as the indented encoders write a flat one
// — "{", then one `"key": value` per line, two spaces in — calling fn
// with each key and its raw value; body is the object without its
// closing brace. A line of any other shape, or an error from fn, makes it
// report false. (A JSON string never holds a raw newline, so the lines
// are the members.)
func scanFlat(body []byte, fn func(key string, val []byte) error) bool {
	if len(body) == 0 || body[0] != '{' {
		return false
	}
	for _, line := range bytes.Split(body[1:], []byte("\n")) {
		line = bytes.TrimSuffix(bytes.TrimPrefix(line, []byte("  ")), []byte(","))
		if len(line) == 0 {
			continue
		}
		if line[0] != '"' {
			return false
		}
		k := bytes.IndexByte(line[1:], '"') + 1
		if k <= 0 || !bytes.HasPrefix(line[k:], []byte("\": ")) {
			return false
		}
		if fn(string(line[1:k]), line[k+3:]) != nil {
			return false
		}
	}
	return true
}

// flatString is a JSON string without escapes, unquoted.
func flatString(val []byte) (string, error) {
	if len(val) < 2 || val[0] != '"' || val[len(val)-1] != '"' || bytes.IndexByte(val, '\\') >= 0 || bytes.IndexByte(val[1:len(val)-1], '"') >= 0 {
		return "", errFlat
	}
	return string(val[1 : len(val)-1]), nil
}

// flatTime is a time as encoding/json writes it (RFC 3339).
func flatTime(val []byte) (time.Time, error) {
	s, err := flatString(val)
	if err != nil {
		return time.Time{}, err
	}
	return time.Parse(time.RFC3339Nano, s)
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

// PausedMS is how long the run was suspended with its session so far
// (progress.json paused_ms: its supervisor writes it before the run's
// processes continue), 0 when unknown.
func (d Dir) PausedMS() int64 {
	if p := d.Progress(); p != nil {
		return p.PausedMS
	}
	return 0
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
