// Command pi-actors-kernel is the pi-actors kernel: one per agent root, it
// hosts the proto.actor system (run actors, session queues), serves the
// unix socket the `pi-actors` CLI talks to, and starts a lean
// `pi-actors supervise` process per run. It is a separate binary so the CLI
// and the per-run supervisors do not carry the actor system's weight.
// Users do not run it by hand: `pi-actors kernel start` (or any verb that
// needs the kernel) starts it.
package main

import (
	"os"

	"github.com/pi-actors/pi-actors/actors"
)

// Version is set at build time with -ldflags "-X main.Version=…".
var Version = "0.1.0-dev"

func main() { os.Exit(actors.Main(Version)) }
