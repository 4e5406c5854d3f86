package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pi-actors/pi-actors/recipes"
	"github.com/pi-actors/pi-actors/recipes/template"
)

func init() {
	verbs = append(verbs, &verb{
		name:      "call",
		summary:   "invoke a recipe like the agent tool would",
		firstWord: true,
		flags:     []string{"--dry-run", "--stdin"},
		usage: `pi-actors call <recipe|path> [name=value | name:=JSON ...] [--dry-run] [--stdin] [--json]

Invokes a recipe exactly as its agent tool would: arguments are checked
against the recipe's schema (bad calls print the expected call shape), the
recipe's imports are expanded, and the template runs in the foreground.
A bare name is looked up in <agent>/recipes, then the packaged library;
a path (with / or ending in .json/.md) is loaded directly.

Examples:
  pi-actors call utility-git-log repo=. count:=5
  pi-actors call ./my-recipe.json --dry-run`,
		run: runCall,
	})
}

// isRecipePath reports whether a recipe reference is a path rather than a
// bare name.
func isRecipePath(ref string) bool {
	return strings.Contains(ref, "/") || strings.HasPrefix(ref, "~") || strings.HasSuffix(ref, ".json") || strings.HasSuffix(ref, ".md")
}

// findRecipe loads a recipe by bare name (user root, then packaged) or by
// path (relative to the working directory).
func (a *app) findRecipe(ref string) (*recipes.Recipe, *recipes.Entry, error) {
	if isRecipePath(ref) {
		path := ref
		if strings.HasPrefix(path, "~/") {
			home, _ := os.UserHomeDir()
			path = filepath.Join(home, path[2:])
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, nil, err
		}
		r, err := recipes.Load(abs)
		if err != nil {
			return nil, nil, err
		}
		if r.Disabled {
			return nil, nil, fmt.Errorf("%w: template recipe is disabled: %s", recipes.ErrDisabled, abs)
		}
		return r, nil, nil
	}
	g, err := recipes.Discover(a.agentDir)
	if err != nil {
		return nil, nil, err
	}
	e, err := g.Lookup(ref)
	if err != nil {
		return nil, nil, err
	}
	return e.Recipe, e, nil
}

func (a *app) resolver() *recipes.Resolver {
	home, _ := os.UserHomeDir()
	return &recipes.Resolver{AgentDir: a.agentDir, Home: home}
}

func runCall(ctx context.Context, a *app, r *request) int {
	cfg, err := a.config()
	if err != nil {
		return a.fail(r, err)
	}
	if len(r.words) != 1 {
		return a.fail(r, usagef("call needs one recipe name or path, then its arguments: pi-actors call utility-git-log repo=. count:=5"))
	}
	rec, entry, err := a.findRecipe(r.words[0])
	if err != nil {
		return a.fail(r, err)
	}
	tool, err := a.resolver().Tool(rec)
	if err != nil {
		return a.fail(r, err)
	}
	vals, err := tool.Values(r.params)
	if err != nil {
		return a.fail(r, err)
	}
	if rec.Async {
		return a.callAsync(r, rec, entry, vals)
	}
	if entry != nil && entry.Layer == recipes.LayerUser && !r.dryRun {
		if err := recipes.RecordUsage(entry.Path, "tool"); err != nil {
			fmt.Fprintf(a.io.err, "pi-actors call: warning: usage not recorded: %v\n", err)
		}
	}
	cwd, err := os.Getwd()
	if err != nil {
		return a.fail(r, err)
	}
	plan, err := template.NewPlan(tool.Node, vals, template.Options{
		Dir: cwd, MaxParallel: cfg.Exec.MaxParallelBranches, MaxLeaves: cfg.Exec.MaxLeaves,
		Types: tool.Types(), CallerStdin: r.stdin,
	})
	if err != nil {
		return a.fail(r, tool.ArgError(err))
	}
	if r.dryRun {
		if r.json {
			return a.ok(r, "", map[string]any{"recipe": rec.ID, "path": rec.Path, "plan": plan.Root, "leaves": plan.Leaves, "risk_labels": nonNil(plan.RiskLabels), "warnings": nonNil(plan.Warnings)})
		}
		fmt.Fprintf(a.io.out, "recipe=%s path=%s\n", rec.ID, rec.Path)
		plan.WriteText(a.io.out)
		return exitOK
	}
	return a.runPlan(ctx, r, cfg, plan, rec.ID, tool.Resolved.ContextHook())
}

// callAsync starts an async recipe as a detached run (the agent tool's
// behaviour): run_id names it, else <recipe>-<ms>; the call returns the
// run's status.
func (a *app) callAsync(r *request, rec *recipes.Recipe, entry *recipes.Entry, vals template.Values) int {
	params := map[string]any{"values": map[string]any(vals), "tool": rec.ID, "launch_source": "tool"}
	if entry != nil {
		params["recipe"] = rec.ID
	} else {
		params["file"] = rec.Path
	}
	if id, ok := r.params["run_id"].(string); ok && id != "" {
		params["run_id"] = id
	}
	if r.dryRun {
		return a.ok(r, fmt.Sprintf("recipe=%s async=true would spawn with values=%s", rec.ID, template.CompactJSON(vals)), params)
	}
	one := &request{verb: r.verb, params: params, json: r.json}
	if s := r.session(); s != "" {
		one.params["session"] = s
	}
	resp, err := a.call(one, "spawn", nil)
	if err != nil {
		return a.fail(r, err)
	}
	return a.reply(r, *resp, spawnText)
}
