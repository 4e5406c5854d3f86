package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/pi-actors/pi-actors/verbs"
)

// Version is set at build time with -ldflags "-X main.Version=…".
var Version = "0.1.0-dev"

func init() {
	localVerbs = append(localVerbs,
		&verb{name: "version", summary: "print version and build info", usage: "pi-actors version [--json]", run: runVersion},
		&verb{name: "help", summary: "show usage, or one verb's usage", usage: "pi-actors help [verb]", run: runHelp},
	)
}

func runVersion(_ context.Context, a *app, r *request) int {
	if extra := append(r.words, r.order...); len(extra) > 0 {
		return a.fail(r, usagef("version takes no words or parameters (got %q)", extra))
	}
	commit := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				commit = s.Value[:12]
			}
		}
	}
	text := fmt.Sprintf("pi-actors version=%s go=%s os=%s/%s", Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if commit != "" {
		text += " commit=" + commit
	}
	return a.ok(r, text, map[string]any{"version": Version, "go": runtime.Version(), "os": runtime.GOOS, "arch": runtime.GOARCH, "commit": commit})
}

func runHelp(_ context.Context, a *app, r *request) int {
	if len(r.words) > 1 || len(r.order) > 0 {
		return a.fail(r, usagef("help takes at most one verb (got %q): pi-actors help <verb>", append(r.words, r.order...)))
	}
	if len(r.words) > 0 {
		name := r.words[0]
		if s := verbs.Find(name); s != nil {
			return a.ok(r, specHelp(s), map[string]any{"verb": s.Name, "usage": s.Usage, "available": true})
		}
		v := findLocal(name)
		if v == nil {
			return a.fail(r, usagef("unknown verb %q; verbs: %s", name, verbNames()))
		}
		return a.ok(r, v.Usage()+"\n", map[string]any{"verb": v.name, "usage": v.Usage(), "available": true})
	}
	return a.ok(r, helpText(), map[string]any{"verbs": allNames(), "available": allNames()})
}

// verbOrder is the order help lists verbs in: the agent tool surface
// first, then the CLI's own.
var verbOrder = []string{"spawn", "message", "inspect", "watch", "exec", "call", "register_tool", "mailbox", "kernel", "knowledge",
	"ps", "ls", "logs", "stop", "kill", "restart", "rm", "top", "completion", "mcp", "schema", "install", "uninstall", "demo", "version", "help"}

// listed returns every listed verb as (name, summary), in help order.
func listed() [][2]string {
	var out [][2]string
	seen := map[string]bool{}
	add := func(name, summary string) {
		if !seen[name] {
			seen[name] = true
			out = append(out, [2]string{name, summary})
		}
	}
	lookup := func(name string) {
		if s := verbs.Find(name); s != nil && !s.Hidden {
			add(s.Name, s.Summary)
		} else if v := findLocal(name); v != nil && !v.hidden {
			add(v.name, v.summary)
		}
	}
	for _, name := range verbOrder {
		lookup(name)
	}
	for _, s := range verbs.All() {
		lookup(s.Name)
	}
	for _, v := range localVerbs {
		lookup(v.name)
	}
	return out
}

func helpText() string {
	var b strings.Builder
	b.WriteString("pi-actors: process supervisor and memory for coding-agent swarms\n\n")
	b.WriteString("usage: pi-actors <verb> [key=value | key:=JSON ...] [--json] [--verbose]\n")
	b.WriteString("       pi-actors <verb> -        (parameters as JSON on stdin; an array or JSON lines is a batch)\n\nverbs:\n")
	for _, v := range listed() {
		fmt.Fprintf(&b, "  %-14s %s\n", v[0], v[1])
	}
	b.WriteString("\nexit codes: 0 ok; exec/call pass the command's status through (124 timeout, 128+n signal);\n")
	b.WriteString("64 usage, 65 invalid data, 66 not found, 69 kernel unavailable, 70 internal, 73 disk full,\n")
	b.WriteString("74 out of file descriptors, 75 busy/conflict, 77 denied, 78 not configured (no [cluster]).\n")
	b.WriteString("agent root: $PI_CODING_AGENT_DIR (default ~/.pi/agent); config: <agent>/pi-actors.toml\n")
	return b.String()
}

// specHelp is a verb's --help: its usage, then its parameters (generated
// from the request type).
func specHelp(s *verbs.Spec) string {
	var b strings.Builder
	b.WriteString(strings.TrimRight(s.Usage, "\n"))
	b.WriteString("\n\nparameters:\n")
	b.WriteString(s.ParamHelp())
	if s.Rest == "" && !s.HasParam("session") {
		b.WriteString("  session  string  your coordinator session (default $PI_ACTORS_SESSION)\n")
	}
	return b.String()
}

func allNames() []string {
	var names []string
	for _, v := range listed() {
		names = append(names, v[0])
	}
	return names
}

func verbNames() string { return strings.Join(allNames(), ", ") }
