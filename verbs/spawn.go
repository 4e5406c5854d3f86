package verbs

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/recipes"
	"github.com/pi-actors/pi-actors/recipes/template"
	"github.com/pi-actors/pi-actors/runs"
)

// Spawn starts a detached, supervised run actor.
type Spawn struct {
	As        string         `json:"as,omitempty" jsonschema:"the run's address run:<id> (default: the recipe id, else run-<ms>)"`
	Recipe    string         `json:"recipe,omitempty" jsonschema:"a recipe name: <agent>/recipes first, then the packaged library"`
	File      string         `json:"file,omitempty" jsonschema:"a recipe file path (.json or .md), relative to the working directory"`
	Template  any            `json:"template,omitempty" jsonschema:"an inline command template: a string, an array (a sequence) or an object node"`
	Values    map[string]any `json:"values,omitempty" jsonschema:"placeholder values (name → value)"`
	Artifacts map[string]any `json:"artifacts,omitempty" jsonschema:"named artifact paths (name → path or {path, kind, media_type, required})"`
	StateDir  string         `json:"state_dir,omitempty" jsonschema:"the run's state directory (default <agent>/tmp/pi-actors/runs/<id>)"`
	Restart   any            `json:"restart,omitempty" jsonschema:"restart policy: never|on-failure|on-abnormal|always, or {policy, backoff_ms, max_backoff_ms, jitter, reset_after_ms, burst, window_ms}"`
	RunID     string         `json:"run_id,omitempty" jsonschema:"the run id (as as=run:<id>)"`
	// Where the run starts on a clustered kernel (docs/cluster.md).
	Node      string `json:"node,omitempty" jsonschema:"clustered kernels: the node whose kernel starts and supervises the run (default: this one)"`
	Placement string `json:"placement,omitempty" jsonschema:"clustered kernels: local (default) or spread (the least-loaded member)"`
	// Services (spawn_health.go): probes, memory cap, watched files.
	Ready            string   `json:"ready,omitempty" jsonschema:"readiness probe: http://host:port/path (a 2xx answer), tcp:host:port (a connection), log:<regex> (a line of the run's output) or exec:<command template> (exit 0)"`
	ReadyTimeout     Text     `json:"ready_timeout,omitempty" jsonschema:"how long the readiness probe may take before the run counts as not ready (default 60s; 30s, 500ms, or seconds)"`
	Wait             string   `json:"wait,omitempty" jsonschema:"ready: answer only once the readiness probe passed (exit 75 with the probe's last error after ready_timeout; the run keeps going)"`
	Liveness         string   `json:"liveness,omitempty" jsonschema:"liveness probe (the forms of ready), checked every liveness_every once ready: liveness_failures failures in a row restart the run through its restart policy (on-failure when none is given)"`
	LivenessEvery    Text     `json:"liveness_every,omitempty" jsonschema:"the liveness probe's period (default 10s)"`
	LivenessFailures LooseInt `json:"liveness_failures,omitzero" jsonschema:"liveness failures in a row that make the run unhealthy (default 3)"`
	MaxRSS           Text     `json:"max_rss,omitempty" jsonschema:"restart the run when its whole process tree's RSS passes this (512M, 1.5G, or bytes), through its restart policy (on-failure when none is given)"`
	Watch            Globs    `json:"watch,omitempty" jsonschema:"restart the run when a file matching one of these globs changes (comma-separated or an array; relative to the run's directory; ** matches across directories; .git/ and the state dir are ignored; debounced)"`
	// Template controls merged into an inline template node.
	Args     any `json:"args,omitempty" jsonschema:"inline template: argument declarations"`
	Defaults any `json:"defaults,omitempty" jsonschema:"inline template: placeholder defaults"`
	Parallel any `json:"parallel,omitempty" jsonschema:"inline template: run the sequence in parallel"`
	Label    any `json:"label,omitempty" jsonschema:"inline template: the node's label"`
	When     any `json:"when,omitempty" jsonschema:"inline template: run only when this condition holds"`
	Timeout  any `json:"timeout,omitempty" jsonschema:"inline template: time limit in milliseconds (e.g. 30000)"`
	Delay    any `json:"delay,omitempty" jsonschema:"inline template: wait before starting, in milliseconds (e.g. 2000)"`
	Output   any `json:"output,omitempty" jsonschema:"inline template: the output value or path to select"`
	Retry    any `json:"retry,omitempty" jsonschema:"inline template: attempts including the first (a positive integer, at most 1000)"`
	Failure  any `json:"failure,omitempty" jsonschema:"inline template: failure scope (continue|branch|root)"`
	Recover  any `json:"recover,omitempty" jsonschema:"inline template: a template run when the node fails"`
	Repeat   any `json:"repeat,omitempty" jsonschema:"inline template: repeat count"`
	// A workflow run.
	Workflow any `json:"workflow,omitempty" jsonschema:"a workflow to run: seed 001's DAG {id, model, nodes: [{id, depends_on, metadata: {timeout_ms, retry: {max, backoff_ms}, priority}, context, and one of recipe+values, template, or agent+prompt}], execution_order, policy: {max_concurrency, fail_fast, default_retry}}, or the path of a JSON file holding one; each node runs as a child run <id>-<node> (docs/workflows.md)"`
	// Set by a workflow's scheduler for its nodes' runs.
	WorkflowNode *runs.NodeRef `json:"workflow_node,omitempty" jsonschema:"internal: the workflow node attempt the run carries out"`
	// Set by call for an async recipe tool.
	Tool         string `json:"tool,omitempty" jsonschema:"internal: the tool that launched the run"`
	LaunchSource string `json:"launch_source,omitempty" jsonschema:"internal: spawn or tool"`
	Verbose      Bool   `json:"verbose,omitempty" jsonschema:"accepted for compatibility; spawn output is always compact"`
}

// Controls returns the template controls that were given, by name.
func (s *Spawn) Controls() map[string]any {
	out := map[string]any{}
	for name, v := range map[string]any{"args": s.Args, "defaults": s.Defaults, "parallel": s.Parallel, "label": s.Label,
		"when": s.When, "timeout": s.Timeout, "delay": s.Delay, "output": s.Output, "retry": s.Retry,
		"failure": s.Failure, "recover": s.Recover, "repeat": s.Repeat} {
		if v != nil {
			out[name] = v
		}
	}
	return out
}

// InlineGraph is the graph an inline template= runs: the template (an
// object's own fields win) with the spawn's template controls merged in.
func (s *Spawn) InlineGraph() map[string]any {
	node := map[string]any{"template": s.Template}
	if obj, ok := s.Template.(map[string]any); ok {
		node = maps.Clone(obj)
	}
	for key, v := range s.Controls() {
		if _, set := node[key]; !set {
			node[key] = v
		}
	}
	return node
}

// CheckRecipeValues refuses values a recipe does not take, as call does
// (a misspelt name would otherwise be dropped while its placeholder kept
// the recipe's default); a workflow's recipe nodes are checked so when
// the workflow starts. An inline template replacing the recipe's, and a
// workflow recipe, take what they are given. rec and tool are nil for an
// inline template.
func (s *Spawn) CheckRecipeValues(rec *recipes.Recipe, tool *recipes.Tool) error {
	if rec != nil && rec.Workflow != nil && s.Template == nil {
		return s.CheckWorkflowParams("recipe " + rec.ID + " (a workflow)")
	}
	if tool == nil || s.Template != nil {
		return nil
	}
	vals, err := tool.Values(s.Values)
	if err != nil {
		return err // a name it does not take, a value of the wrong type
	}
	return tool.CheckRequired(vals, "spawn takes them in values, e.g. values:='{\"<name>\":…}'")
}

// checkRecipe is what the kernel would refuse about file=/recipe= (no
// such recipe, a disabled one, a value it does not take), checked here
// before a kernel is started for the spawn: a spawn it would refuse
// starts nothing.
func (s *Spawn) checkRecipe(env *Env) error {
	ref := s.File
	if ref == "" {
		ref = s.Recipe
	}
	if ref == "" {
		return nil
	}
	rec, _, err := FindRecipe(env.AgentDir, env.Cwd, ref)
	if err != nil {
		return err
	}
	tool, err := env.resolver().Tool(rec)
	if err != nil {
		return err
	}
	return s.CheckRecipeValues(rec, tool)
}

// Validate checks the request's shape (and an inline workflow whole).
func (s *Spawn) Validate() error {
	if err := s.validateAs(); err != nil {
		return err
	}
	if s.Workflow != nil {
		return s.validateWorkflow()
	}
	if s.Recipe == "" && s.File == "" && s.Template == nil {
		return Usagef("spawn needs file=<recipe>, recipe=<name>, template=<template> or workflow=<file.json>")
	}
	if s.Recipe != "" && s.File != "" {
		return Usagef("give recipe=<name> or file=<path>, not both (got recipe=%s file=%s)", s.Recipe, s.File)
	}
	if c := s.Controls(); s.Template == nil && len(c) > 0 {
		// They were dropped: the recipe's own graph runs as it is written.
		names := slices.Sorted(maps.Keys(c))
		return &Error{Exit: ExitUsage, Code: "usage", Message: fmt.Sprintf("%s shape an inline template=; a recipe's template runs as the recipe writes it", strings.Join(names, ", ")),
			Hint: "leave them out, or set them on the recipe's template (its file in <agent>/recipes)"}
	}
	if err := checkNumbers("values", s.Values); err != nil {
		return err
	}
	if _, err := s.HealthSpec(); err != nil {
		return err
	}
	// Checked here too, so a bad policy starts no kernel.
	if _, err := runs.ParseRestart(s.Restart); err != nil {
		return &Error{Exit: ExitDataErr, Code: "invalid_data", Message: err.Error(),
			Hint: "restart=never|on-failure|on-abnormal|always, or restart:={\"policy\":\"on-failure\",\"backoff_ms\":1000}"}
	}
	switch strings.TrimSpace(s.Placement) {
	case "", "local", "spread":
	default:
		return Usagef("placement must be local or spread (got %q)", s.Placement)
	}
	if n := strings.TrimSpace(s.Node); n != "" {
		if _, _, err := mailbox.SplitNode("run:x@" + n); err != nil {
			return &Error{Exit: ExitDataErr, Code: "invalid_data", Message: fmt.Sprintf("node must be a node name (letters, digits, '.', '_', '-'; got %q)", s.Node),
				Hint: "pi-actors inspect target=cluster view=nodes lists the members"}
		}
		if strings.TrimSpace(s.Placement) == "spread" {
			return Usagef("give node= or placement=spread, not both")
		}
	}
	return nil
}

// validateAs checks as= (a run address) against run_id=.
func (s *Spawn) validateAs() error {
	if s.As == "" {
		return nil
	}
	a, err := mailbox.Parse(s.As)
	if err == nil && a.Kind != "run" {
		err = fmt.Errorf("got %s", s.As)
	}
	if err != nil {
		return &Error{Exit: ExitDataErr, Code: "invalid_address", Message: fmt.Sprintf("as must be a run:<id> address: %v", err),
			Hint: "as=run:<id>, the id letters, digits, '.', '_' and '-' (or run_id=<id>)"}
	}
	if id := strings.TrimSpace(s.RunID); id != "" && id != a.ID {
		return Usagef("as=%s and run_id=%s name different runs; give one of them", s.As, id)
	}
	return nil
}

// SpawnResult is a started run.
type SpawnResult struct {
	Address     string   `json:"address"`
	DraftRecipe string   `json:"draft_recipe,omitempty"`
	Pid         int      `json:"pid"`
	Recipe      string   `json:"recipe,omitempty"`
	Run         string   `json:"run"`
	StateDir    string   `json:"state_dir"`
	Status      string   `json:"status"`
	Warnings    []string `json:"warnings,omitempty"`
	// Node is the node whose kernel supervises the run (clustered kernels).
	Node string `json:"node,omitempty"`
	// Ready and ReadyAt answer wait=ready.
	Ready   *bool  `json:"ready,omitempty"`
	ReadyAt string `json:"ready_at,omitempty"`
}

// Text is the compact line.
func (r *SpawnResult) Text() string {
	s := "address=" + r.Address
	if r.Node != "" {
		s += " node=" + r.Node
	}
	s += " status=" + r.Status
	if r.Ready != nil {
		s += fmt.Sprintf(" ready=%t ready_at=%s", *r.Ready, r.ReadyAt)
	}
	s += fmt.Sprintf(" pid=%d state_dir=%s", r.Pid, r.StateDir)
	if r.DraftRecipe != "" {
		s += " draft_recipe=" + r.DraftRecipe
	}
	s += fmt.Sprintf(" next=inspect_target=%s_view=status|inspect_target=%s_view=tail|message_to=%s_type=control.kill", r.Address, r.Address, r.Address)
	for _, w := range r.Warnings {
		s += "\nwarning: " + w
	}
	return s
}

func init() {
	Register(&Spec{
		Name:    "spawn",
		Summary: "start a detached, supervised run actor",
		Batch:   true,
		Tool:    &Annotations{},
		Usage: `pi-actors spawn as=run:<id> (recipe=<name> | file=<path> | template=… ) [values:='{…}'] [artifacts:='{…}'] [state_dir=…] [restart:='{…}'] [--json]
pi-actors spawn as=run:<id> workflow=<file.json> | workflow:='{"nodes":[…]}'
pi-actors spawn -        (a JSON array or JSON lines on stdin: a batch, one run per object)

Starts a run under its own supervisor process (it survives the kernel) and
returns its address, pid and state dir once the supervisor is up. The run
belongs to your session ($PI_ACTORS_SESSION or session=). restart is
{policy: never|on-failure|on-abnormal|always, backoff_ms, max_backoff_ms, jitter,
reset_after_ms, burst, window_ms}. On a clustered kernel, node=<name>
starts the run on that node and placement=spread on the least-loaded
member; the run is supervised there and its address is run:<id>@<node>.

A workflow (seed 001's DAG) runs each node as a child run <id>-<node>
under the workflow run, in dependency order, with retries, timeouts,
fail_fast and max_concurrency; it survives kill -9 of its scheduler, its
supervisor or the kernel. See docs/workflows.md; inspect view=dag shows it.

Services: ready=<probe> (http://host:port/path, tcp:host:port, log:<regex>,
exec:<template>) with ready_timeout (60s) and wait=ready (answer once
ready; 75 with the probe's last error after ready_timeout, the run goes
on); liveness=<probe> (liveness_every 10s, liveness_failures 3) and
max_rss=<size> restart an unhealthy run through its restart policy
(on-failure when none is given); watch=<glob,…> restarts it when a
matching file changes. See docs/runs.md.

Examples:
  pi-actors spawn as=run:web template='python3 -m http.server 8000' restart=on-failure
  pi-actors spawn as=run:build node=gpu-1 template='make -j8'  # clustered kernels
  pi-actors spawn as=run:build workflow=plan.json
  pi-actors spawn as=run:web template='python3 -m http.server 8000' ready=http://127.0.0.1:8000/ wait=ready
  pi-actors spawn as=run:api template='go run ./cmd/api' ready=log:'listening on' watch='**/*.go,go.mod'
  pi-actors spawn recipe=utility-git-log values:='{"count":3}'`,
		Internal: []string{"tool", "launch_source", "verbose", "workflow_node"},
		Enums:    map[string][]string{"placement": {"local", "spread"}},
		New:      func() Request { return new(Spawn) },
		Run: func(ctx context.Context, env *Env, req Request) (*Outcome, error) {
			if err := req.(*Spawn).readWorkflow(env.Cwd); err != nil {
				return nil, err
			}
			var res SpawnResult
			check := func() error {
				s := req.(*Spawn)
				if err := CheckOwner("session", env.Session); err != nil {
					return err
				}
				if (strings.TrimSpace(s.Node) != "" || strings.TrimSpace(s.Placement) == "spread") && !env.Config.Cluster.Enabled() {
					return env.notClustered("spawn node=/placement=spread needs a cluster: this kernel has no [cluster] section in pi-actors.toml", "drop node=/placement=, or set up a cluster: docs/cluster.md")
				}
				if sd := strings.TrimSpace(s.StateDir); sd != "" && s.Node == "" && s.Placement == "" {
					// The kernel checks again, with the run id it picks.
					if !filepath.IsAbs(sd) {
						sd = filepath.Join(env.Cwd, sd)
					}
					if err := runs.CheckStateDir(env.AgentDir, s.runID(), sd); err != nil {
						return err
					}
				}
				if s.Template != nil {
					// Its shape and controls (the kernel plans it with
					// the run's values).
					if _, err := template.Parse(s.InlineGraph()); err != nil {
						return err
					}
				}
				return s.checkRecipe(env)
			}
			if err := env.callChecked("spawn", req, &res, check); err != nil {
				return nil, err
			}
			if err := req.(*Spawn).awaitReady(ctx, env, &res); err != nil {
				return nil, err
			}
			return &Outcome{Result: &res, Text: res.Text()}, nil
		},
	})
}

// RunBatch sends a batch of one verb's requests to the kernel at once (the
// batch form of spawn and message) and returns one outcome or error per
// request, in order.
func RunBatch(env *Env, spec *Spec, reqs []Request) ([]*Outcome, []error, error) {
	items := make([]json.RawMessage, len(reqs))
	for i, r := range reqs {
		b, err := json.Marshal(r)
		if err != nil {
			return nil, nil, fmt.Errorf("encode %s item %d: %w", spec.Name, i, err)
		}
		items[i] = b
	}
	resp, err := env.call(spec.Name, nil, items)
	if err != nil {
		return nil, nil, err
	}
	if resp.Error != nil {
		return nil, nil, resp.Error
	}
	outs := make([]*Outcome, len(reqs))
	errs := make([]error, len(reqs))
	for i := range reqs {
		if i >= len(resp.Results) {
			errs[i] = &Error{Exit: ExitSoftware, Code: "internal", Message: fmt.Sprintf("the kernel answered %d of %d items", len(resp.Results), len(reqs))}
			continue
		}
		one := resp.Results[i]
		if m, ok := reqs[i].(*Message); ok && knowledgeAddress(m.To) && one.Error == nil {
			outs[i], errs[i] = knowledgeMessageOutcome(m, one.Result)
			continue
		}
		outs[i], errs[i] = batchOutcome(spec.Name, &one)
	}
	for i, r := range reqs {
		if sp, ok := r.(*Spawn); ok && errs[i] == nil && outs[i] != nil {
			// wait=ready: every run of the batch is already starting.
			res := outs[i].Result.(*SpawnResult)
			if errs[i] = sp.awaitReady(context.Background(), env, res); errs[i] == nil {
				outs[i].Text = res.Text()
			}
		}
	}
	return outs, errs, nil
}

func batchOutcome(verb string, resp interface{ Decode(any) error }) (*Outcome, error) {
	switch verb {
	case "spawn":
		var res SpawnResult
		if err := resp.Decode(&res); err != nil {
			return nil, err
		}
		return &Outcome{Result: &res, Text: res.Text()}, nil
	case "message":
		var res Delivery
		if err := resp.Decode(&res); err != nil {
			return nil, err
		}
		return &Outcome{Result: &res, Text: res.Text()}, nil
	}
	return nil, Usagef("%s takes no batch", verb)
}

// trimmed reports a string parameter as given or "".
func trimmed(s string) string { return strings.TrimSpace(s) }

// checkNumbers refuses a number in v (a decoded JSON value, where) that
// no float64 holds (1e400): run.json could not be read back, so the run
// could never start or be inspected.
func checkNumbers(where string, v any) error {
	switch x := v.(type) {
	case json.Number:
		if _, err := strconv.ParseFloat(string(x), 64); err != nil {
			return Invalidf("%s: the number %s is out of range (at most about 1.8e308); if it is text, give it as a JSON string (\"%s\")", where, x, x)
		}
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return Invalidf("%s: %v is not a JSON number", where, x)
		}
	case map[string]any:
		for k, e := range x {
			if err := checkNumbers(where+"."+k, e); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range x {
			if err := checkNumbers(fmt.Sprintf("%s[%d]", where, i), e); err != nil {
				return err
			}
		}
	}
	return nil
}
