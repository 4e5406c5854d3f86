package main

import (
	"context"
	"fmt"
	"os"
	"syscall"

	"github.com/pi-actors/pi-actors/verbs"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// The front doors that need heavy libraries (the MCP SDK, the JSON-schema
// library, the TUI libraries) live in their own binary, pi-actors-front;
// this lean binary execs it for them, so its own start-up (every CLI call,
// every run's supervisor) stays small, and so does the kernel's.

func init() {
	localVerbs = append(localVerbs,
		&verb{name: "mcp", summary: "serve the verbs as MCP tools over stdio",
			usage: `pi-actors mcp

Serves MCP over stdio (the official go-sdk): the tools spawn, message,
inspect, call, register_tool and mailbox — the same parameters, results and
errors as the CLI — the knowledge tools (query_graph, manage_graph,
manage_changelog, search, search_all, smart_search, recall), and one tool
per user and packaged recipe (the list
changes when recipe files do). The connection is one coordinator session
($PI_ACTORS_SESSION, else a new id, named in the server's instructions);
its follow-ups arrive as notifications/message (logger pi-actors.followup),
each once. stdout carries the protocol only; logs go to stderr.
Set-up for common clients: pi-actors install mcp --client=claude|cursor|generic`,
			run: execFull("mcp")},
		&verb{name: "schema", summary: "print the tool catalogue (core verbs and recipe tools) with input schemas",
			usage: `pi-actors schema [--json]

Prints every tool the front doors expose: the core verbs (spawn, message,
inspect, call, register_tool, mailbox), the knowledge tools (query_graph,
manage_graph, manage_changelog, search, search_all, smart_search, recall)
and one tool per recipe, with the
JSON Schema of its parameters and its annotations. --json prints
{"ok":true,"result":{"tools":[{name, description, inputSchema,
annotations, verb | recipe}]}}; the pi extension reads it.`,
			flags: []string{"--text"},
			run:   execFull("schema")},
	)
}

// execFull replaces this process with `pi-actors-front <sub> [flags]`.
func execFull(sub string) func(context.Context, *app, *request) int {
	return func(_ context.Context, a *app, r *request) int {
		if len(r.words) > 0 || len(r.params) > 0 || len(r.batch) > 0 {
			return a.fail(r, usagef("%s takes no parameters (got %q)", sub, append(r.words, r.order...)))
		}
		bin, err := verbs.FrontBinary()
		if err != nil {
			return a.fail(r, err)
		}
		argv := []string{bin, sub}
		if r.json {
			argv = append(argv, "--json")
		}
		env := os.Environ()
		if self, err := os.Executable(); err == nil && os.Getenv("PI_ACTORS_BIN") == "" {
			env = append(env, "PI_ACTORS_BIN="+self)
		}
		err = syscall.Exec(bin, argv, env)
		return a.fail(r, fmt.Errorf("%w: exec %s: %v", wire.ErrUnavailable, bin, err))
	}
}
