package main

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/pi-actors/pi-actors/swarm"
	"github.com/pi-actors/pi-actors/verbs"
)

// The hidden `swarm` verb runs the packaged actors that need no LLM
// (package swarm) inside a run: the recipes actor-worker, locker
// and room-swarm launch it as {pi_actors} swarm <role> key=value….
func init() {
	localVerbs = append(localVerbs, &verb{
		name:    "swarm",
		summary: "packaged actors: actor-worker, locker, room-swarm coordinator",
		usage: `pi-actors swarm worker|locker|coordinate key=value…   (inside a run; launched by the packaged recipes)

  worker      room=<run> branch=<b> [locker=<run>] [poll_ms=1000] [wait_ms=30000] [stale_claim_ms=0]
              [artifact_dir=…] [write_artifacts=true] [notify_coordinator=true]
  locker      [lease_ms=600000]
  coordinate  [tasks=30] [workers=3] [lease_ms=600000] [poll_ms=200] [timeout_s=120] [task_file=…]

See docs/messages.md.`,
		hidden: true,
		run:    runSwarm,
	})
}

var swarmRoles = map[string]func(context.Context, *verbs.Env, swarm.Options) error{
	"worker": swarm.Worker, "locker": swarm.Locker, "coordinate": swarm.Coordinate,
}

func runSwarm(ctx context.Context, a *app, r *request) int {
	if len(r.words) != 1 || swarmRoles[r.words[0]] == nil {
		roles := make([]string, 0, len(swarmRoles))
		for k := range swarmRoles {
			roles = append(roles, k)
		}
		sort.Strings(roles)
		return a.fail(r, usagef("swarm takes one role (%v), then key=value parameters", roles))
	}
	env, err := verbs.NewEnv()
	if err != nil {
		return a.fail(r, err)
	}
	if err := env.LoadConfig(); err != nil {
		return a.fail(r, err)
	}
	opts := swarm.Options{}
	for k, v := range r.params {
		opts[k] = fmt.Sprint(v)
	}
	if err := swarmRoles[r.words[0]](ctx, env, opts); err != nil {
		if errors.Is(err, swarm.ErrUsage) {
			return a.fail(r, usagef("%v", err))
		}
		fmt.Fprintf(a.io.err, "pi-actors swarm %s: %v\n", r.words[0], err)
		return 1
	}
	return exitOK
}
