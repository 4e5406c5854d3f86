package main

import (
	"context"
	"fmt"
	"os/signal"
	"syscall"

	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs"
)

// The hidden `workflow run <state_dir>` verb is the scheduler of a
// workflow run: the kernel starts every workflow run with it as its leaf
// (spawn workflow=…), under the run's own supervisor.
func init() {
	localVerbs = append(localVerbs, &verb{
		name:    "workflow",
		summary: "a workflow run's scheduler (started by spawn workflow=…)",
		usage: `pi-actors workflow run <state_dir>   (the leaf of a workflow run; started by the kernel)

Schedules the workflow in <state_dir>/run.json: each node becomes a child
run <run>-<node>; workflow.json records every node. See docs/workflows.md.`,
		hidden: true,
		run:    runWorkflow,
	})
}

func runWorkflow(ctx context.Context, a *app, r *request) int {
	if len(r.words) != 2 || r.words[0] != "run" {
		return a.fail(r, usagef("usage: pi-actors workflow run <state_dir> (started by the kernel for spawn workflow=…)"))
	}
	// The scheduler stops its workflow on SIGTERM (its supervisor's stop)
	// and SIGINT, never on SIGHUP: that comes when its supervisor died
	// while the session was suspended (its process group orphaned with
	// stopped members), and the kernel resumes the workflow then — its
	// nodes run on under their own supervisors.
	signal.Ignore(syscall.SIGHUP)
	env, err := verbs.NewEnv()
	if err != nil {
		return a.fail(r, err)
	}
	if err := env.LoadConfig(); err != nil {
		return a.fail(r, err)
	}
	code, err := verbs.RunWorkflow(ctx, env, runs.Dir(r.words[1]), a.io.out, a.io.err)
	if err != nil {
		fmt.Fprintf(a.io.err, "pi-actors workflow: %v\n", err)
	}
	return code
}
