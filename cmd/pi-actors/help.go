package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Version is set at build time with -ldflags "-X main.Version=…".
var Version = "0.1.0-dev"

func init() {
	verbs = append(verbs,
		&verb{name: "version", summary: "print version and build info", usage: "pi-actors version [--json]", run: runVersion},
		&verb{name: "help", summary: "show usage, or one verb's usage", usage: "pi-actors help [verb]", run: runHelp},
	)
	for _, p := range []struct{ name, summary string }{
		{"knowledge", "the knowledge actor's operations"},
		{"mcp", "serve the verbs as MCP tools over stdio"},
	} {
		verbs = append(verbs, &verb{name: p.name, summary: p.summary, pending: true, usage: "pi-actors " + p.name + " (not yet available in this build)"})
	}
}

func runVersion(_ context.Context, a *app, r *request) int {
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
	if len(r.words) > 0 {
		v := findVerb(r.words[0])
		if v == nil {
			return a.fail(r, usagef("unknown verb %q; verbs: %s", r.words[0], verbNames()))
		}
		return a.ok(r, verbHelp(v), map[string]any{"verb": v.name, "usage": v.usage, "available": !v.pending})
	}
	names := make([]string, 0, len(verbs))
	for _, v := range verbs {
		names = append(names, v.name)
	}
	return a.ok(r, helpText(), map[string]any{"verbs": names, "available": strings.Split(availableNames(), ", ")})
}

func helpText() string {
	var b strings.Builder
	b.WriteString("pi-actors: process supervisor and memory for coding-agent swarms\n\n")
	b.WriteString("usage: pi-actors <verb> [key=value | key:=JSON ...] [--json] [--verbose]\n")
	b.WriteString("       pi-actors <verb> -        (parameters as JSON on stdin; an array or JSON lines is a batch)\n\nverbs:\n")
	for _, v := range verbs {
		note := ""
		if v.pending {
			note = " (not yet available)"
		}
		fmt.Fprintf(&b, "  %-14s %s%s\n", v.name, v.summary, note)
	}
	b.WriteString("\nexit codes: 0 ok; exec/call pass the command's status through (124 timeout, 128+n signal);\n")
	b.WriteString("64 usage, 65 invalid data, 66 not found, 69 kernel unavailable, 75 busy/conflict, 77 denied.\n")
	b.WriteString("agent root: $PI_CODING_AGENT_DIR (default ~/.pi/agent); config: <agent>/pi-actors.toml\n")
	return b.String()
}

func verbHelp(v *verb) string {
	return v.usage + "\n"
}

func verbNames() string {
	names := make([]string, len(verbs))
	for i, v := range verbs {
		names[i] = v.name
	}
	return strings.Join(names, ", ")
}

func availableNames() string {
	var names []string
	for _, v := range verbs {
		if !v.pending {
			names = append(names, v.name)
		}
	}
	return strings.Join(names, ", ")
}
