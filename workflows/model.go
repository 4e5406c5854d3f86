package workflows

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalid marks a workflow that cannot run; errors.As gives *Error.
var ErrInvalid = errors.New("invalid workflow")

// Error is invalid workflow input: the node (empty for the workflow
// itself), the field, and what is wrong and how to fix it.
type Error struct {
	Node  string
	Field string
	Msg   string
}

func (e *Error) Error() string {
	where := "workflow"
	if e.Node != "" {
		where = "workflow node " + e.Node
	}
	if e.Field != "" {
		where += ": " + e.Field
	}
	return where + ": " + e.Msg
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *Error) Is(target error) bool { return target == ErrInvalid }

func invalid(node, field, format string, args ...any) *Error {
	return &Error{Node: node, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Dependency conditions. A dependency given as a plain id waits for done.
const (
	CondDone    = "done"    // the dependency ended successfully
	CondStarted = "started" // the dependency's run is up
	// CondReady: the dependency's run is ready — its readiness probe
	// passed in its current attempt (a run without a probe is ready while
	// it runs) — or it ended done.
	CondReady = "ready"
)

// conditions are the conditions depends_on accepts.
var conditions = []string{CondStarted, CondReady, CondDone}

// Priorities, most urgent first; ready nodes start in this order.
var priorities = []string{"critical", "high", "normal", "low"}

// Limits of a workflow.
const (
	MaxNodes       = 1000
	MaxRetries     = 100
	MaxBackoffMS   = 3_600_000
	MaxTimeoutMS   = 7 * 24 * 3_600_000
	MaxConcurrency = 1000
	// DefaultConcurrency is max_concurrency when the policy sets none.
	DefaultConcurrency = 4
)

// Workflow is a parsed, checked DAG.
type Workflow struct {
	// ID is the DAG's own id (seed 001's "id"); the run id is the
	// workflow's address.
	ID     string
	Model  string // the model agent nodes run with
	Nodes  []*Node
	Layers [][]string // execution_order, or computed from depends_on
	Policy Policy
	byID   map[string]*Node
}

// Node is one node of a workflow.
type Node struct {
	ID    string
	Index int // position in nodes[]
	Deps  []Dep
	// Service nodes keep running while their dependents run and are
	// stopped once every non-service node has ended.
	Service bool
	// Agent nodes run Prompt through the packaged subagent-prompt recipe.
	Agent, Prompt, Model string
	Context              any
	Priority             string
	TimeoutMS            int
	Retry                Retry // metadata.retry, else the policy's default_retry
	// Spawn holds the node's spawn parameters as given (recipe, file,
	// template, values, restart, …): its child run's spawn request.
	Spawn map[string]any
	Layer int
}

// Dep is one entry of depends_on.
type Dep struct {
	Node      string `json:"node"`
	Condition string `json:"condition"`
}

// Retry is a retry policy: at most Max more attempts after the first,
// waiting BackoffMS before the first retry and twice as long before each
// next one.
type Retry struct {
	Max       int `json:"max"`
	BackoffMS int `json:"backoff_ms"`
}

// Policy is the workflow's policy.
type Policy struct {
	MaxConcurrency int   `json:"max_concurrency"`
	FailFast       bool  `json:"fail_fast"`
	DefaultRetry   Retry `json:"default_retry"`
}

// Node returns the node with id, or nil.
func (w *Workflow) Node(id string) *Node { return w.byID[id] }

// Kind says what a node runs: recipe, template or agent.
func (n *Node) Kind() string {
	switch {
	case n.Agent != "":
		return "agent"
	case n.Spawn["template"] != nil:
		return "template"
	}
	return "recipe"
}

// ChildRun is the run id of a node's child run.
func ChildRun(workflowRun, node string) string { return workflowRun + "-" + node }

func oneOf(list []string) string {
	if len(list) == 2 {
		return list[0] + " or " + list[1]
	}
	return strings.Join(list[:len(list)-1], ", ") + " or " + list[len(list)-1]
}
