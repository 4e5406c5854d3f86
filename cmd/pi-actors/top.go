package main

import (
	"context"
	"fmt"
	"os"
	"syscall"

	"github.com/pi-actors/pi-actors/verbs"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// `pi-actors top` is the live terminal inspector. It needs the TUI
// libraries, so it lives in the front doors' binary: this lean one execs
// `pi-actors-front top`, passing its flags on.

func init() {
	localVerbs = append(localVerbs, &verb{name: "top", summary: "a live view of the runs: tree, status, CPU, RSS, logs; kill and restart",
		usage: `pi-actors top [--once] [--cluster] [--no-color] [session=<id>]

A live terminal view of the runs (the kernel pushes every change): a tree
of runs with status, elapsed, restarts, CPU, RSS, the last output line and
a stalled marker; enter opens the detail pane (status, stdout and stderr
tails, events, mailbox), l the log full screen (it follows), / filters,
s switches between your session's runs and every session's, c the cluster
scope (clustered kernels: every node's runs with a NODE column, the nodes
not listed named; another node's run is acted on as run:<id>@<node>), f
shows your session's follow-ups (without draining them), K or x kills and
r restarts the selected run after a y/n question, ? lists the keys, q
quits. --once prints one plain frame and exits (so does top when stdout
is not a terminal); --cluster starts in the cluster scope (exit 78
without [cluster]); NO_COLOR or --no-color turns colour off. Agents use
ps --json, logs and inspect instead.`,
		flags: []string{"--once", "--cluster", "--no-color"},
		run:   runTop})
}

func runTop(_ context.Context, a *app, r *request) int {
	if len(r.words) > 0 || len(r.batch) > 0 || r.json {
		return a.fail(r, usagef("top takes --once, --cluster, --no-color and session=<id> (for JSON: pi-actors ps --all --json)"))
	}
	argv := []string{"", "top"}
	for k, v := range r.params {
		s, ok := v.(string)
		if k != "session" || !ok {
			return a.fail(r, usagef("top takes --once, --cluster, --no-color and session=<id> (got %s=)", k))
		}
		argv = append(argv, "session="+s)
	}
	if r.flags["--once"] {
		argv = append(argv, "--once")
	}
	if r.flags["--cluster"] {
		argv = append(argv, "--cluster")
	}
	if r.flags["--no-color"] || a.noColor {
		argv = append(argv, "--no-color")
	}
	bin, err := verbs.FrontBinary()
	if err != nil {
		return a.fail(r, err)
	}
	argv[0] = bin
	env := os.Environ()
	if self, err := os.Executable(); err == nil && os.Getenv("PI_ACTORS_BIN") == "" {
		env = append(env, "PI_ACTORS_BIN="+self)
	}
	err = syscall.Exec(bin, argv, env)
	return a.fail(r, fmt.Errorf("%w: exec %s: %v", wire.ErrUnavailable, bin, err))
}
