package verbs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pi-actors/pi-actors/internal/config"
	"github.com/pi-actors/pi-actors/internal/fsutil"
	"github.com/pi-actors/pi-actors/recipes"
	"github.com/pi-actors/pi-actors/recipes/template"
	"github.com/pi-actors/pi-actors/runs"
)

// Exec runs an inline command template in the foreground.
type Exec struct {
	Template any            `json:"template" jsonschema:"the command template: a string, or a JSON graph (array or object)"`
	Values   map[string]any `json:"values,omitempty" jsonschema:"placeholder values"`
	DryRun   Bool           `json:"dry_run,omitempty" jsonschema:"print the resolved plan and run nothing"`
	Stdin    Bool           `json:"stdin,omitempty" jsonschema:"give the caller's stdin to the first step (default: empty)"`
}

// Validate checks that there is a template.
func (e *Exec) Validate() error {
	if e.Template == nil {
		return Usagef("exec needs a template: pi-actors exec 'echo hello {name}' name=world")
	}
	return nil
}

// Call invokes a recipe like its agent tool would.
type Call struct {
	Recipe string         `json:"recipe" jsonschema:"a recipe or tool name (user recipes, then the packaged library) or a recipe file path"`
	Args   map[string]any `json:"args,omitempty" jsonschema:"the recipe's arguments"`
	RunID  string         `json:"run_id,omitempty" jsonschema:"for an async recipe: the id of the run it starts"`
	DryRun Bool           `json:"dry_run,omitempty" jsonschema:"print the resolved plan and run nothing"`
	Stdin  Bool           `json:"stdin,omitempty" jsonschema:"give the caller's stdin to the first step (default: empty)"`
}

// Validate checks that a recipe is named.
func (c *Call) Validate() error {
	if strings.TrimSpace(c.Recipe) == "" {
		return Usagef("call needs one recipe name or path, then its arguments: pi-actors call utility-git-log repo=. count:=5")
	}
	return nil
}

var flagsRun = map[string]string{"--dry-run": "dry_run", "--stdin": "stdin"}

func init() {
	Register(&Spec{
		Name:     "exec",
		Summary:  "run an inline command template in the foreground",
		Word:     "template",
		Rest:     "values",
		Flags:    flagsRun,
		Terminal: []string{"stdin"},
		Usage: `pi-actors exec 'TEMPLATE' [name=value | name:=JSON ...] [--dry-run] [--stdin] [--json]
pi-actors exec template:='JSON graph' [name=value ...]

Runs a command template in this process: no shell, each leaf in its own
process group. stdout is the composition's output, byte for byte; the exit
status is the failing command's own (124 timeout, 128+n signal).
  --dry-run  print the resolved plan (argv, stdin, controls, risk labels); run nothing
  --stdin    give the caller's stdin to the first step (default: empty)
  --json     one {"ok":…} object with a bounded output tail

Examples:
  pi-actors exec 'echo hello {name}' name=world
  pi-actors exec template:='{"parallel":true,"repeat":3,"template":"echo {index}"}'`,
		New: func() Request { return new(Exec) },
		Run: runExec,
	})
	Register(&Spec{
		Name:     "call",
		Summary:  "invoke a recipe like the agent tool would",
		Word:     "recipe",
		Rest:     "args",
		Flags:    flagsRun,
		Terminal: []string{"stdin"},
		Tool:     &Annotations{},
		Usage: `pi-actors call <recipe|path> [name=value | name:=JSON ...] [--dry-run] [--stdin] [--json]

Invokes a recipe exactly as its agent tool would: arguments are checked
against the recipe's schema (bad calls print the expected call shape), the
recipe's imports are expanded, and the template runs in the foreground.
A bare name is looked up in <agent>/recipes, then the packaged library;
a path (with / or ending in .json/.md) is loaded directly. An argument
named like a parameter of call (recipe, args, stdin, dry_run, run_id) goes
inside args:='{"stdin":"…"}'.

Examples:
  pi-actors call utility-git-log repo=. count:=5
  pi-actors call ./my-recipe.json --dry-run`,
		New: func() Request { return new(Call) },
		Run: runCall,
	})
}

func runExec(ctx context.Context, env *Env, req Request) (*Outcome, error) {
	e := req.(*Exec)
	node, err := template.Parse(e.Template)
	if err != nil {
		return nil, err
	}
	plan, err := template.NewPlan(node, withCLI(template.Values(e.Values)), env.planOptions(nil, bool(e.Stdin)))
	if err != nil {
		return nil, err
	}
	if e.DryRun {
		return env.planOutcome(plan, nil, "exec"), nil
	}
	return env.runPlan(ctx, plan, "exec", bool(e.Stdin), nil)
}

// A --dry-run answer is bounded: the text keeps its first planHeadLines
// and last planTailLines lines, the JSON plan planChildren children of
// each step; the whole plan is saved (text and JSON) and its path given.
const (
	planHeadLines = 150
	planTailLines = 30
	planChildren  = 50
)

// planOutcome is a --dry-run result: the plan as text, and as JSON.
func (env *Env) planOutcome(plan *template.Plan, head map[string]any, tool string) *Outcome {
	var b strings.Builder
	result := map[string]any{"plan": plan.Root, "leaves": plan.Leaves, "risk_labels": nonNil(plan.RiskLabels), "warnings": nonNil(plan.Warnings)}
	if head != nil {
		fmt.Fprintf(&b, "recipe=%s path=%s\n", head["recipe"], head["path"])
		for k, v := range head {
			result[k] = v
		}
	}
	plan.WriteText(&b)
	text := b.String()
	lines := strings.SplitAfter(strings.TrimSuffix(text, "\n"), "\n")
	cut, cutAny := plan.Root.Cut(planChildren)
	if len(lines) <= planHeadLines+planTailLines && !cutAny {
		return &Outcome{Result: result, Text: text}
	}
	var dir string
	full, err := json.Marshal(result)
	if err == nil {
		dir, err = savePlan(filepath.Join(config.TmpDir(env.AgentDir), "outputs"), tool, text, full)
	}
	note := "the whole plan could not be saved: " + fmt.Sprint(err)
	if err == nil {
		note = "the whole plan: " + filepath.Join(dir, "plan.txt") + " (JSON: plan.json beside it)"
		result["plan_path"] = filepath.Join(dir, "plan.json")
	}
	result["plan"], result["plan_cut"] = cut, true
	if len(lines) > planHeadLines+planTailLines {
		text = strings.Join(lines[:planHeadLines], "") + fmt.Sprintf("… %d lines not shown; %s\n", len(lines)-planHeadLines-planTailLines, note) + strings.Join(lines[len(lines)-planTailLines:], "") + "\n"
	}
	return &Outcome{Result: result, Text: text}
}

// savePlan writes a whole plan (text and JSON) into a new directory under
// outputs and returns it.
func savePlan(outputs, tool, text string, js []byte) (string, error) {
	if err := os.MkdirAll(outputs, 0o700); err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp(outputs, "plan-"+template.SafeName(tool)+"-")
	if err != nil {
		return "", err
	}
	if err := fsutil.WriteFile(filepath.Join(dir, "plan.txt"), []byte(text), 0o600); err != nil {
		return "", err
	}
	return dir, fsutil.WriteFile(filepath.Join(dir, "plan.json"), js, 0o600)
}

// FindRecipe resolves a recipe reference, as call, spawn and the kernel
// all do: pkg:<file> (the packaged recipe, whatever the user root holds
// of that name), a path (~/ is the home directory, relative to cwd; its
// discovery entry when it is the active recipe of its id), or a bare name
// (user root, then packaged).
func FindRecipe(agentDir, cwd, ref string) (*recipes.Recipe, *recipes.Entry, error) {
	if recipes.IsPackaged(ref) {
		r, err := recipes.Load(ref)
		return r, nil, err
	}
	if IsRecipePath(ref) {
		path := ref
		if strings.HasPrefix(path, "~/") {
			home, _ := os.UserHomeDir()
			path = filepath.Join(home, path[2:])
		}
		if !filepath.IsAbs(path) {
			path = filepath.Join(cwd, path)
		}
		r, err := recipes.Load(path)
		if err != nil {
			return nil, nil, err
		}
		if r.Disabled {
			return nil, nil, fmt.Errorf("%w: template recipe is disabled: %s", recipes.ErrDisabled, r.Path)
		}
		var entry *recipes.Entry
		if g, _ := recipes.Discover(agentDir); g != nil {
			if e, ok := g.Active[r.ID]; ok && e.Path == r.Path {
				entry = e
			}
		}
		return r, entry, nil
	}
	g, err := recipes.Discover(agentDir)
	if err != nil {
		return nil, nil, err
	}
	e, err := g.Lookup(ref)
	if err != nil {
		return nil, nil, err
	}
	return e.Recipe, e, nil
}

// IsRecipePath reports whether a recipe reference is a path rather than a
// bare name.
func IsRecipePath(ref string) bool {
	return strings.Contains(ref, "/") || strings.HasPrefix(ref, "~") || strings.HasSuffix(ref, ".json") || strings.HasSuffix(ref, ".md")
}

func (env *Env) resolver() *recipes.Resolver {
	home, _ := os.UserHomeDir()
	return &recipes.Resolver{AgentDir: env.AgentDir, Home: home}
}

// callGives says, in a missing-argument error, how a call gives values.
const callGives = "give each one a value (as <name>=<value>, or in args:='{…}')"

func runCall(ctx context.Context, env *Env, req Request) (*Outcome, error) {
	c := req.(*Call)
	rec, entry, err := FindRecipe(env.AgentDir, env.Cwd, c.Recipe)
	if err != nil {
		return nil, err
	}
	tool, err := env.resolver().Tool(rec)
	if err != nil {
		return nil, err
	}
	args := c.Args
	if args == nil {
		args = map[string]any{}
	}
	vals, err := tool.Values(args)
	if err != nil {
		return nil, err
	}
	if rec.Async {
		return env.callAsync(c, rec, entry, tool, vals)
	}
	if strings.TrimSpace(c.RunID) != "" {
		return nil, &Error{Exit: ExitUsage, Code: "usage", Message: fmt.Sprintf("run_id names the run an async recipe starts; %s runs in the foreground and starts none", rec.ID),
			Hint: "drop run_id=, or spawn it as a run: pi-actors spawn recipe=" + rec.ID + " as=run:" + strings.TrimSpace(c.RunID)}
	}
	plan, err := template.NewPlan(tool.Node, withCLI(vals), env.planOptions(tool.Types(), bool(c.Stdin)))
	if err != nil {
		return nil, callPlanErr(tool, vals, err)
	}
	if err := tool.CheckRequired(vals, callGives); err != nil {
		return nil, err // one the template does not name itself (a default's placeholder)
	}
	if entry != nil && entry.Layer == recipes.LayerUser && !c.DryRun {
		// Counted once the call is sure to run: a refused call is no use.
		if err := recipes.RecordUsage(entry.Path, "tool"); err != nil && env.Stderr != nil {
			fmt.Fprintf(env.Stderr, "pi-actors call: warning: usage not recorded: %v\n", err)
		}
	}
	// The recipe's own warnings (an unknown field is ignored: a misspelt
	// control does nothing) reach the caller, not only doctor.
	for _, w := range rec.Warnings {
		w = rec.Path + ": " + w
		plan.Warnings = append(plan.Warnings, w)
		if env.Stderr != nil && !env.JSON {
			fmt.Fprintf(env.Stderr, "pi-actors call: warning: %s\n", w)
		}
	}
	if c.DryRun {
		return env.planOutcome(plan, map[string]any{"recipe": rec.ID, "path": rec.Path}, rec.ID), nil
	}
	return env.runPlan(ctx, plan, rec.ID, bool(c.Stdin), tool.Resolved.ContextHook())
}

// planOptions are the plan options of a template run for this caller:
// its directory, the configured limits, the argument types, whether the
// caller's stdin goes to the first step.
func (env *Env) planOptions(types map[string]template.Type, stdin bool) template.Options {
	cfg := env.Config
	return template.Options{Dir: env.Cwd, MaxParallel: cfg.Exec.MaxParallelBranches, MaxLeaves: cfg.Exec.MaxLeaves,
		Types: types, CallerStdin: stdin}
}

// callAsync starts an async recipe as a detached run (the agent tool's
// behaviour): run_id names it, else <recipe>-<ms>; the call returns the
// run's status.
func (env *Env) callAsync(c *Call, rec *recipes.Recipe, entry *recipes.Entry, tool *recipes.Tool, vals template.Values) (*Outcome, error) {
	sp := &Spawn{Values: map[string]any(vals), Tool: rec.ID, LaunchSource: "tool", RunID: c.RunID}
	if entry != nil {
		sp.Recipe = rec.ID
	} else {
		sp.File = rec.Path
	}
	if c.Stdin {
		// A detached run has no caller: its first step's stdin is empty.
		return nil, &Error{Exit: ExitUsage, Code: "usage", Message: fmt.Sprintf("%s is async: it starts a detached run, which cannot read this call's stdin (--stdin)", rec.ID),
			Hint: "give the text as an argument (pi-actors call " + rec.ID + " --dry-run shows them), or save it to a file the recipe reads"}
	}
	// The plan the kernel will build, checked here first: a missing or
	// bad argument is this call's error (65, with the call shape) and
	// nothing is sent; --dry-run shows it.
	id := strings.TrimSpace(c.RunID)
	if id != "" {
		if err := runs.ValidID(id); err != nil {
			return nil, Invalidf("run_id: %v", err)
		}
	}
	planID := id
	if planID == "" {
		planID = fmt.Sprintf("%s-%d", rec.ID, time.Now().UnixMilli()) // as the kernel names it
	}
	values := template.Values{}
	maps.Copy(values, vals)
	maps.Copy(values, recipes.InjectedValues(planID, string(runs.StateDirFor(env.AgentDir, planID)), cliBinary()))
	plan, err := template.NewPlan(tool.Node, values, env.planOptions(tool.Types(), false))
	if err != nil {
		return nil, callPlanErr(tool, vals, err)
	}
	if err := tool.CheckRequired(vals, callGives); err != nil {
		return nil, err
	}
	if c.DryRun {
		out := env.planOutcome(plan, map[string]any{"recipe": rec.ID, "path": rec.Path, "async": true, "run_id": planID, "spawn": sp}, rec.ID)
		out.Text = fmt.Sprintf("async=true run_id=%s: a detached run; nothing was started\n", planID) + out.Text
		return out, nil
	}
	var res SpawnResult
	if err := env.Call("spawn", sp, &res); err != nil {
		return nil, err
	}
	return &Outcome{Result: &res, Text: res.Text()}, nil
}

// callPlanErr is a call's error for a plan that could not be built: a
// missing value with the call shape; another error (a repeat over an
// array not given) is the missing required argument's, when one is.
func callPlanErr(tool *recipes.Tool, vals template.Values, err error) error {
	ae := tool.ArgError(err)
	var shaped *recipes.ArgError
	if !errors.As(ae, &shaped) {
		if rerr := tool.CheckRequired(vals, callGives); rerr != nil {
			return rerr
		}
	}
	return ae
}

// calls numbers this process's foreground calls (callMark).
var calls atomic.Uint64

// callMark names one foreground call uniquely on this machine: this
// process, its start and the call's number.
func callMark() string {
	return strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(runs.StartTime(os.Getpid()), 10) + "-" + strconv.FormatUint(calls.Add(1), 10)
}

// runPlan executes a plan in the foreground: the output byte for byte to
// env.Stream, or a bounded tail in the result.
func (env *Env) runPlan(ctx context.Context, plan *template.Plan, tool string, stdin bool, hook func(*template.Step, []string) []string) (*Outcome, error) {
	cfg := env.Config
	tmp := config.TmpDir(env.AgentDir)
	spill := filepath.Join(tmp, "spill")
	if err := os.MkdirAll(spill, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", spill, err)
	}
	// The caller's directory and environment: in a long-lived front door
	// (the kernel, MCP) they are not this process's.
	runner := &template.Runner{Dir: env.Cwd, Env: env.Environ, KillGrace: max(cfg.KillGrace(), time.Nanosecond), TempDir: spill, Hook: hook,
		DieWithParent: true} // a SIGKILLed exec or call leaves nothing running
	var stderr *template.Buffer // every command's stderr, for a bounded answer
	if env.Stream != nil {
		runner.Stderr = env.Stderr
	} else {
		// No live stderr: the error message shows the end of the failing
		// command's; a success's answer, the end of all of it.
		runner.KeepStderr = true
		stderr = template.NewBuffer(spill, 0)
		defer stderr.Close()
		runner.Stderr = stderr
	}
	var in *template.Buffer
	if stdin && env.Stdin != nil {
		in = template.NewBuffer(spill, 0)
		if _, err := io.Copy(in, env.Stdin); err != nil {
			in.Close()
			return nil, fmt.Errorf("read stdin: %w", err)
		}
		defer in.Close()
	}
	// A process that leaves the leaf's group (setsid) is still ours to
	// stop when the composition ends: the CLI adopts it (a subreaper);
	// a front door, running calls side by side, marks this call's
	// processes and stops the marked ones.
	if env.Reaper {
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err == nil {
			defer runs.StopDescendants(runner.KillGrace)
		}
	} else {
		mark := runs.CallEnv + "=" + callMark()
		base := runner.Env
		if base == nil {
			base = os.Environ()
		}
		runner.Env = append(withoutEnv(base, runs.CallEnv), mark) // one mark: this call's
		defer runs.StopMarked(mark, runner.KillGrace)
	}
	res := runner.Run(ctx, plan, in)
	defer res.Stdout.Close()
	if res.Stderr != nil {
		defer res.Stderr.Close()
	}
	if env.Stream == nil {
		return boundedOutcome(cfg, plan, res, stderr, filepath.Join(tmp, "outputs"), tool), nil
	}
	if _, err := io.Copy(env.Stream, res.Stdout.Reader()); err != nil {
		// The command ran; its output did not reach stdout (74, as any
		// answer that could not be written, not the disk's 73).
		return nil, &Error{Exit: ExitIOErr, Code: "output_failed", Message: fmt.Sprintf("writing the command's output to stdout: %v", err),
			Hint: "the command ran (exit " + strconv.Itoa(res.Code) + "); stdout did not take its output (a full disk, a closed reader): run it again once it can, or use --json for a bounded answer"}
	}
	if env.Stderr != nil {
		for _, f := range res.NonCritical {
			fmt.Fprintf(env.Stderr, "pi-actors %s: non-critical failure: exit %d%s from %s (at %s)\n", verbOf(tool), f.Code, killedNote(f.Killed), cutLine(f.Command, messageCommandChars), f.Path)
		}
		if res.Failure != nil {
			fmt.Fprintf(env.Stderr, "pi-actors %s: exit %d%s from %s (at %s)\n", verbOf(tool), res.Failure.Code, killedNote(res.Failure.Killed), cutLine(res.Failure.Command, messageCommandChars), res.Failure.Path)
		}
	}
	return &Outcome{Exit: res.Code, Streamed: true}, nil
}

// commandChars bounds a command line in a run's result and errors (an
// argument may be megabytes; --dry-run shows the whole plan).
const commandChars = 2000

func verbOf(tool string) string {
	if tool == "exec" {
		return "exec"
	}
	return "call"
}

func killedNote(k bool) string {
	if k {
		return " (killed)"
	}
	return ""
}

// boundedOutcome is the result of a foreground run for JSON clients: the
// exit code, a bounded tail of stdout (the whole output saved to a file
// when cut), the failure, or for a success the end of its stderr.
func boundedOutcome(cfg config.Config, plan *template.Plan, res *template.Result, stderr *template.Buffer, outputs, tool string) *Outcome {
	tail := template.TailOf(res.Stdout, cfg.Output.MaxLines, cfg.Output.MaxBytes)
	result := map[string]any{
		"code":        res.Code,
		"output":      tail.Text,
		"truncated":   tail.Truncated,
		"total_lines": tail.TotalLines,
		"total_bytes": tail.TotalBytes,
		"command":     cutLine(strings.Join(res.Commands, " && "), commandChars),
		"killed":      res.Killed,
		"risk_labels": nonNil(plan.RiskLabels),
		"warnings":    nonNil(plan.Warnings),
	}
	if res.Skipped {
		result["skipped"] = true
	}
	var notice string
	if tail.Truncated {
		path, err := template.SaveOutput(res.Stdout, outputs, tool, "stdout")
		if err == nil {
			result["full_output_path"] = path
		}
		notice = tail.Notice(path)
		result["notice"] = notice
	}
	if len(res.NonCritical) > 0 {
		nc := slices.Clone(res.NonCritical)
		for i := range nc {
			nc[i].Command = cutLine(nc[i].Command, commandChars)
		}
		result["non_critical_failures"] = nc
	}
	if len(res.Joins) > 0 {
		outer := res.Joins[0]
		for _, j := range res.Joins[1:] {
			if len(j.Path) < len(outer.Path) {
				outer = j
			}
		}
		joins := slices.Clone(res.Joins)
		for i := range joins {
			joins[i].Branches = slices.Clone(joins[i].Branches)
			for k := range joins[i].Branches {
				joins[i].Branches[k].Command = cutLine(joins[i].Branches[k].Command, commandChars)
			}
			if joins[i].Path == outer.Path {
				outer = joins[i]
			}
		}
		result["branches"] = outer.Branches
		result["soft_quorum"] = outer.SoftQuorum
		result["joins"] = joins
	}
	text := withNotice(tail.Text, notice)
	for _, f := range res.NonCritical {
		// What a terminal user reads on stderr, a JSON client (MCP, pi)
		// reads after the output: the text is all a model sees.
		line := fmt.Sprintf("pi-actors %s: non-critical failure: exit %d%s from %s (at %s)", verbOf(tool), f.Code, killedNote(f.Killed), cutLine(f.Command, messageCommandChars), f.Path)
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		text += line
	}
	out := &Outcome{Result: result, Exit: res.Code, Text: text}
	if res.Failure == nil {
		// A success's stderr (warnings, progress) is the answer's too: its
		// end, the whole saved beside the outputs when cut.
		if text, t := stderrTail(stderr); text != "" {
			result["stderr"] = text
			if t.Truncated {
				if path, err := template.SaveOutput(stderr, outputs, tool, "stderr"); err == nil {
					result["full_stderr_path"] = path
				}
			}
		}
		return out
	}
	failure := *res.Failure
	failure.Command = cutLine(failure.Command, commandChars)
	result["failure"] = failure
	// The end of the failing command's stderr is the message's (an agent
	// reads code, message and hint); cut, the whole is saved beside the
	// outputs.
	text, t := stderrTail(res.Stderr)
	var whole string
	if text != "" && t.Truncated {
		if path, err := template.SaveOutput(res.Stderr, outputs, tool, "stderr"); err == nil {
			whole = path
			result["full_stderr_path"] = path
		}
	}
	hint := "the command wrote nothing to stderr; the call's output (its text; details.output) is the stdout tail, details.failure names the command"
	if text != "" {
		hint = "the message ends with the end of the command's stderr; the call's output (its text; details.output) is the stdout tail, details.failure has the command at more length"
	}
	out.Fail = &Error{Code: "command_failed", Message: failureMessage(res.Failure, text, t, whole), Hint: hint, Details: result, Exit: res.Code}
	return out
}

// withNotice is the text an agent reads of a cut tail: the tail, then the
// notice saying how much was cut and where the whole output is (the
// result's notice; the text is all a model sees).
func withNotice(text, notice string) string {
	if notice == "" {
		return text
	}
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return text + notice
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Resolver is the recipe resolver of an environment's agent root.
func Resolver(env *Env) *recipes.Resolver { return env.resolver() }
