package main

import (
	"context"
	"errors"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/pi-actors/pi-actors/recipes"
)

func init() {
	v := &verb{
		name:    "register_tool",
		summary: "create, update, list, delete or promote user recipes",
		flags:   []string{"--dry-run"},
		usage: `pi-actors register_tool [name=<tool> ...] [--dry-run] [--json]

Writes <agent>/recipes/<name>.json — a recipe that is an agent tool by
location — after validating it in full; the write is atomic, and a bad
request writes nothing.

  (no parameters)              list the registered tools
  name=<n> template=<t>        register; t is a command template string,
                               template:=<JSON> for a graph, or the name or
                               .json/.md path of an existing recipe (an
                               import-wrapper is written for it)
  description=<text>           required for new tools (a wrapper defaults to
                               the wrapped recipe's description)
  args=<a,b:int=3>             argument declarations (or args:='[...]');
                               name=default entries become defaults
  defaults:=<obj> values:=<obj> async=true state_dir=<dir>
  update=true                  overwrite an existing tool; fields not given
                               are kept
  name=<n> template=           delete <agent>/recipes/<n>.json (or template:=null)
  name=<n> draft=<path>        promote a draft from <agent>/recipes/drafts

Names are normalised ("My Tool!" → my_tool, 123abc → tool_123abc).
--dry-run validates and prints the file without writing it.

Examples:
  pi-actors register_tool name=git_status template=utility-git-status
  pi-actors register_tool name=greet description="Say hello" template='echo hello {who=world}'
  pi-actors register_tool name=greet template=`,
		run: runRegister,
	}
	verbs = append(verbs, v)
}

func runRegister(_ context.Context, a *app, r *request) int {
	if _, err := a.config(); err != nil {
		return a.fail(r, err)
	}
	if len(r.words) > 0 {
		return a.fail(r, usagef("unexpected word %q: register_tool takes key=value parameters, e.g. name=%s template='…'", r.words[0], r.words[0]))
	}
	var unknown []string
	for k := range r.params {
		if !slices.Contains(recipes.RegisterParams, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return a.fail(r, usagef("unknown parameter(s) %s; register_tool takes: %s", strings.Join(unknown, ", "), strings.Join(recipes.RegisterParams, ", ")))
	}
	home, _ := os.UserHomeDir()
	cwd, err := os.Getwd()
	if err != nil {
		return a.fail(r, err)
	}
	rg := &recipes.Registrar{AgentDir: a.agentDir, Home: home, Cwd: cwd}
	if len(r.params) == 0 {
		names, err := rg.List()
		if err != nil {
			return a.fail(r, err)
		}
		text := "No registered tools."
		if len(names) > 0 {
			text = "Registered tools:\n- " + strings.Join(names, "\n- ")
		}
		return a.ok(r, text, map[string]any{"tools": names})
	}
	req, err := recipes.ParseRegistration(r.params)
	if err != nil {
		return a.fail(r, err)
	}
	req.DryRun = r.dryRun
	out, err := rg.Register(req)
	if err != nil {
		return a.fail(r, err)
	}
	text := out.Message()
	if out.DryRun {
		text += "\n" + string(out.Document)
	}
	return a.ok(r, text, out.Result())
}

// registerError maps a register_tool error to its exit code: 75 for a
// conflict, 66 for a missing draft or recipe, 65 otherwise.
func registerError(re *recipes.RegisterError) *cliError {
	ce := &cliError{exit: exitDataErr, code: "invalid_registration", msg: re.Error(), hint: re.Hint,
		details: map[string]any{"field": re.Field}}
	switch {
	case errors.Is(re, recipes.ErrConflict):
		ce.exit, ce.code = exitTempFail, "conflict"
	case errors.Is(re, recipes.ErrNotFound):
		ce.exit, ce.code = exitNoInput, "not_found"
	}
	return ce
}
