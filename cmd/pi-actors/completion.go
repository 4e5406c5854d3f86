package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/pi-actors/pi-actors/internal/config"
	"github.com/pi-actors/pi-actors/knowledge/api"
	"github.com/pi-actors/pi-actors/recipes"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// Shell completion: `completion bash|zsh|fish` prints a script that asks
// the hidden `__complete` verb for candidates, so the candidates come
// from this binary (verbs, each verb's parameters from the verb layer, run
// ids, recipe names, session ids) and never go stale.

func init() {
	localVerbs = append(localVerbs,
		&verb{name: "completion", summary: "print a shell completion script: bash, zsh or fish",
			usage: `pi-actors completion bash|zsh|fish

Prints a completion script for the shell. It completes verbs, each verb's
parameters (key=) and flags, run ids (logs, stop, kill, restart, rm,
to=run:, target=run:), recipe names (call, recipe=), session ids
(session=, target=session:), inspect views and message control types.
Install:
  bash  pi-actors completion bash > ~/.local/share/bash-completion/completions/pi-actors
  zsh   pi-actors completion zsh > "${fpath[1]}/_pi-actors"    (then compinit)
  fish  pi-actors completion fish > ~/.config/fish/completions/pi-actors.fish`,
			run: runCompletion},
	)
}

func runCompletion(_ context.Context, a *app, r *request) int {
	if len(r.words) != 1 || len(r.params) > 0 {
		return a.fail(r, usagef("completion takes one shell: bash, zsh or fish"))
	}
	script, ok := completionScripts[r.words[0]]
	if !ok {
		return a.fail(r, usagef("completion: unknown shell %q (bash, zsh or fish)", r.words[0]))
	}
	if r.json {
		return a.ok(r, script, map[string]any{"shell": r.words[0], "script": script})
	}
	_, err := fmt.Fprint(a.io.out, script)
	a.wrote(err)
	return exitOK
}

// completeMain is the hidden `__complete [--] <verb> [word ...] <current
// word>` the scripts call: it prints the candidates for the last word, one
// per line. It reads the raw arguments (run calls it before any parsing:
// a half-typed flag is no error here).
func completeMain(args []string, io streams) int {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	for _, c := range complete(args) {
		fmt.Fprintln(io.out, c)
	}
	return exitOK
}

// complete returns the candidates for words[len-1].
func complete(words []string) []string {
	if len(words) == 0 {
		words = []string{""}
	}
	cur := words[len(words)-1]
	if len(words) == 1 {
		return withPrefix(allNames(), cur)
	}
	verb, before := words[0], words[1:len(words)-1]
	if verb == "knowledge" && len(before) > 0 {
		// knowledge <operation> (project create|list): the operation's
		// parameters, as the verb's.
		switch op := before[0]; {
		case op == "project" && len(before) == 1:
			return withPrefix([]string{"create", "list"}, cur)
		case op == "project":
			verb, before = "project_"+before[1], before[2:]
		default:
			verb, before = op, before[1:]
		}
		if verbs.Find(verb) == nil {
			return nil
		}
	}
	if strings.HasPrefix(cur, "-") {
		return withPrefix(flagsOf(verb), cur)
	}
	if key, val, ok := strings.Cut(cur, "="); ok {
		json := strings.HasSuffix(key, ":")
		key = strings.TrimSuffix(key, ":")
		if json {
			return nil
		}
		var out []string
		for _, v := range valuesIn(verb, key, val, before) {
			out = append(out, key+"="+v)
		}
		return out
	}
	var out []string
	if firstWord(verb, before) {
		out = append(out, withPrefix(wordsOf(verb), cur)...)
	}
	for _, p := range paramsOf(verb) {
		if strings.HasPrefix(p+"=", cur) {
			out = append(out, p+"=")
		}
	}
	return out
}

// firstWord reports whether the word being completed is the verb's first
// word (no word typed before it), or any word of a verb that takes several
// (stop web worker).
func firstWord(verb string, before []string) bool {
	if s := verbs.Find(verb); s != nil && s.Words {
		return true
	}
	for _, w := range before {
		if !strings.HasPrefix(w, "-") && !strings.Contains(w, "=") {
			return false
		}
	}
	return true
}

func withPrefix(list []string, prefix string) []string {
	var out []string
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			out = append(out, s)
		}
	}
	return out
}

// flagsOf lists a verb's flags with the common ones (every verb takes
// --verbose and --help; all but top --json).
func flagsOf(verb string) []string {
	flags := []string{"--json", "--help", "--no-color", "--verbose"}
	if s := verbs.Find(verb); s != nil {
		flags = append(flags, specFlags(s)...)
	} else if v := findLocal(verb); v != nil {
		flags = append(flags, v.flags...)
	}
	flags = slices.DeleteFunc(flags, func(f string) bool {
		return f == "--text" || f == "-h" || f == "--json" && verb == "top"
	})
	sort.Strings(flags)
	return slices.Compact(flags)
}

// paramsOf lists a verb's parameter names (the verb layer's request
// type), session included where the CLI takes it.
func paramsOf(verb string) []string {
	switch verb {
	case "top":
		return []string{"session"}
	case "demo":
		return []string{"keep"}
	case "cluster":
		return []string{"ca", "dir", "hosts", "name", "node", "out"}
	}
	s := verbs.Find(verb)
	if s == nil {
		return nil
	}
	ps := s.Params()
	if s.Rest == "" && !slices.Contains(ps, "session") {
		ps = append(ps, "session")
	}
	return ps
}

// wordsOf lists what a verb's first word can be.
func wordsOf(verb string) []string {
	switch verb {
	case "logs":
		return runIDs()
	case "stop", "kill", "restart", "rm":
		return append(runIDs(), "all")
	case "call":
		return recipeNames()
	case "kernel":
		return []string{"start", "status", "stop"}
	case "mailbox":
		return []string{"claim", "done", "renew"}
	case "session":
		return []string{"list", "resume", "suspend"}
	case "help":
		return allNames()
	case "completion":
		return []string{"bash", "fish", "zsh"}
	case "cluster":
		return []string{"ca", "cert"}
	case "knowledge":
		ops := []string{"project"}
		for _, op := range api.Ops {
			if !strings.HasPrefix(op, "project_") {
				ops = append(ops, op)
			}
		}
		sort.Strings(ops)
		return ops
	case "install", "uninstall":
		return targetNames(verb == "install")
	}
	return nil
}

// valuesIn lists the values of parameter key that start with prefix,
// given the words typed before (inspect's views follow its target=).
func valuesIn(verb, key, prefix string, before []string) []string {
	switch {
	case verb == "inspect" && key == "view":
		target := ""
		for _, w := range before {
			if t, ok := strings.CutPrefix(w, "target="); ok {
				target = t
			}
		}
		return withPrefix(verbs.InspectViews(target), prefix)
	case verb == "watch" && key == "target":
		var list []string
		for _, id := range runIDs() {
			list = append(list, "room:"+id)
		}
		return withPrefix(list, prefix)
	case verb == "watch" && key == "acks":
		return withPrefix([]string{"stdin"}, prefix)
	case verb == "mailbox" && key == "status":
		return withPrefix([]string{"failed", "handled"}, prefix)
	}
	return valuesOf(verb, key, prefix)
}

// valuesOf lists the values of parameter key that start with prefix.
func valuesOf(verb, key, prefix string) []string {
	var list []string
	switch key {
	case "to", "target":
		for _, id := range runIDs() {
			list = append(list, "run:"+id)
		}
		if key == "to" {
			list = append(list, "coordinator")
		} else {
			list = append(list, "recipes", "coordinator", "session:all", "tool:pi-actors", "knowledge", "cluster")
			for _, id := range runIDs() {
				list = append(list, "room:"+id)
			}
			for _, r := range recipeNames() {
				list = append(list, "tool:"+r)
			}
		}
		for _, s := range sessionIDs() {
			list = append(list, "session:"+s)
		}
	case "run":
		list = runIDs()
	case "as":
		for _, id := range runIDs() {
			list = append(list, "run:"+id)
		}
	case "recipe", "name":
		list = recipeNames()
	case "session":
		list = sessionIDs()
	case "view":
		list = verbs.InspectViews("")
	case "type":
		if verb == "message" {
			list = []string{"control.kill", "control.cancel", "control.restart", "control.archive", "control.prune"}
		}
	case "status":
		list = strings.Split(strings.ReplaceAll(verbs.StatusFilters, " ", ""), ",")
	case "verbose", "dry_run", "follow", "all", "stdout", "stderr", "prune", "async", "update":
		list = []string{"true", "false"}
	}
	return withPrefix(list, prefix)
}

// completionAgent is the agent root, "" when it cannot be found.
func completionAgent() string {
	dir, err := config.AgentDir()
	if err != nil {
		return ""
	}
	return dir
}

// runIDs lists the indexed runs' ids, sorted, without repeats.
func runIDs() []string {
	agent := completionAgent()
	if agent == "" {
		return nil
	}
	entries, err := runs.NewIndex(agent).Entries()
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, e := range entries {
		if !seen[e.Run] {
			seen[e.Run] = true
			out = append(out, e.Run)
		}
	}
	sort.Strings(out)
	return out
}

// recipeNames lists the recipe ids discovery finds (packaged and user).
func recipeNames() []string {
	agent := completionAgent()
	if agent == "" {
		return nil
	}
	g, err := recipes.Discover(agent)
	if err != nil {
		return nil
	}
	return slices.Sorted(maps.Keys(g.Active))
}

// sessionIDs lists the sessions that own runs or have a follow-up queue.
func sessionIDs() []string {
	agent := completionAgent()
	if agent == "" {
		return nil
	}
	set := map[string]bool{}
	if entries, err := runs.NewIndex(agent).Entries(); err == nil {
		for _, e := range entries {
			if e.OwnerID != "" {
				set[e.OwnerID] = true
			}
		}
	}
	if files, err := os.ReadDir(filepath.Join(wire.TmpDir(agent), "sessions")); err == nil {
		for _, f := range files {
			if name, ok := strings.CutSuffix(f.Name(), ".jsonl"); ok {
				set[name] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(set))
}
