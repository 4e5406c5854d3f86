package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/pi-actors/pi-actors/internal/config"
	"github.com/pi-actors/pi-actors/recipes/template"
)

func init() {
	verbs = append(verbs, &verb{
		name:      "exec",
		summary:   "run an inline command template in the foreground",
		firstWord: true,
		flags:     []string{"--dry-run", "--stdin"},
		usage: `pi-actors exec 'TEMPLATE' [name=value | name:=JSON ...] [--dry-run] [--stdin] [--json]
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
		run: runExec,
	})
}

// execInput returns the template graph and the values of an exec request.
func execInput(r *request) (*template.Node, template.Values, error) {
	values := template.Values{}
	for k, v := range r.params {
		if k != "template" {
			values[k] = v
		}
	}
	raw, fromParam := r.params["template"]
	switch {
	case len(r.words) > 1:
		return nil, nil, usagef("exec takes the template as one word; got extra word %q — quote the whole template, e.g. exec 'echo hello' name=value", r.words[1])
	case len(r.words) == 1 && fromParam:
		return nil, nil, usagef("exec got both a template word and template=…; give one")
	case len(r.words) == 1:
		raw = r.words[0]
	case !fromParam:
		return nil, nil, usagef("exec needs a template: pi-actors exec 'echo hello {name}' name=world")
	}
	node, err := template.Parse(raw)
	if err != nil {
		return nil, nil, err
	}
	return node, values, nil
}

func runExec(ctx context.Context, a *app, r *request) int {
	cfg, err := a.config()
	if err != nil {
		return a.fail(r, err)
	}
	node, values, err := execInput(r)
	if err != nil {
		return a.fail(r, err)
	}
	cwd, err := os.Getwd()
	if err != nil {
		return a.fail(r, fmt.Errorf("working directory: %w", err))
	}
	plan, err := template.NewPlan(node, values, template.Options{
		Dir:         cwd,
		MaxParallel: cfg.Exec.MaxParallelBranches,
		MaxLeaves:   cfg.Exec.MaxLeaves,
		CallerStdin: r.stdin,
	})
	if err != nil {
		return a.fail(r, err)
	}
	if r.dryRun {
		if r.json {
			return a.ok(r, "", map[string]any{"plan": plan.Root, "leaves": plan.Leaves, "risk_labels": nonNil(plan.RiskLabels), "warnings": nonNil(plan.Warnings)})
		}
		plan.WriteText(a.io.out)
		return exitOK
	}
	return a.runPlan(ctx, r, cfg, plan, "exec", nil)
}

// runPlan executes a plan in the foreground and reports it: the output
// byte for byte in text mode, a bounded tail in --json.
func (a *app) runPlan(ctx context.Context, r *request, cfg config.Config, plan *template.Plan, tool string, hook func(*template.Step, []string) []string) int {
	tmp := config.TmpDir(a.agentDir)
	spill := filepath.Join(tmp, "spill")
	if err := os.MkdirAll(spill, 0o700); err != nil {
		return a.fail(r, fmt.Errorf("create %s: %w", spill, err))
	}
	runner := &template.Runner{KillGrace: max(cfg.KillGrace(), time.Nanosecond), TempDir: spill, Hook: hook}
	if !r.json {
		runner.Stderr = a.io.err
	}
	var in *template.Buffer
	if r.stdin {
		in = template.NewBuffer(spill, 0)
		if _, err := io.Copy(in, a.io.in); err != nil {
			in.Close()
			return a.fail(r, fmt.Errorf("read stdin: %w", err))
		}
		defer in.Close()
	}
	res := runner.Run(ctx, plan, in)
	defer res.Stdout.Close()
	if r.json {
		return a.reportJSON(r, cfg, plan, res, filepath.Join(tmp, "outputs"), tool)
	}
	if _, err := io.Copy(a.io.out, res.Stdout.Reader()); err != nil {
		return a.fail(r, fmt.Errorf("write output: %w", err))
	}
	for _, f := range res.NonCritical {
		fmt.Fprintf(a.io.err, "pi-actors %s: non-critical failure: exit %d%s from %s (at %s)\n", r.verb, f.Code, killedNote(f.Killed), f.Command, f.Path)
	}
	if res.Failure != nil {
		fmt.Fprintf(a.io.err, "pi-actors %s: exit %d%s from %s (at %s)\n", r.verb, res.Failure.Code, killedNote(res.Failure.Killed), res.Failure.Command, res.Failure.Path)
	}
	return res.Code
}

func killedNote(k bool) string {
	if k {
		return " (killed)"
	}
	return ""
}

func (a *app) reportJSON(r *request, cfg config.Config, plan *template.Plan, res *template.Result, outputs, tool string) int {
	tail := template.TailOf(res.Stdout, cfg.Output.MaxLines, cfg.Output.MaxBytes)
	result := map[string]any{
		"code":        res.Code,
		"output":      tail.Text,
		"truncated":   tail.Truncated,
		"total_lines": tail.TotalLines,
		"total_bytes": tail.TotalBytes,
		"command":     joinCommands(res.Commands),
		"killed":      res.Killed,
		"risk_labels": nonNil(plan.RiskLabels),
		"warnings":    nonNil(plan.Warnings),
	}
	if res.Skipped {
		result["skipped"] = true
	}
	if tail.Truncated {
		path, err := template.SaveOutput(res.Stdout, outputs, tool, "stdout")
		if err == nil {
			result["full_output_path"] = path
		}
		result["notice"] = tail.Notice(path)
	}
	if len(res.NonCritical) > 0 {
		result["non_critical_failures"] = res.NonCritical
	}
	if len(res.Joins) > 0 {
		outer := res.Joins[0]
		for _, j := range res.Joins[1:] {
			if len(j.Path) < len(outer.Path) {
				outer = j
			}
		}
		result["branches"] = outer.Branches
		result["soft_quorum"] = outer.SoftQuorum
		result["joins"] = res.Joins
	}
	if res.Failure == nil {
		return a.ok(r, "", result)
	}
	result["failure"] = res.Failure
	msg := fmt.Sprintf("exit %d%s from %s (at %s)", res.Failure.Code, killedNote(res.Failure.Killed), res.Failure.Command, res.Failure.Path)
	a.writeJSON(envelope{Error: &errorBody{Code: "command_failed", Message: msg, Hint: "the command's stderr is in details.failure.stderr; its stdout tail in details.output", Details: result}})
	return res.Code
}

func joinCommands(cmds []string) string {
	out := ""
	for i, c := range cmds {
		if i > 0 {
			out += " && "
		}
		out += c
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
