// Command pi-actors-kernel is the kernel binary: one per agent root, it
// hosts the proto.actor system (run actors, session queues), serves the
// unix socket the `pi-actors` CLI talks to, and starts a lean `pi-actors
// supervise` process per run. It is a separate binary so the CLI and the
// per-run supervisors do not carry the weight of the actor system and
// SQLite; the front doors with heavy libraries of their own (mcp, schema,
// top) are a third binary, pi-actors-front, so the kernel does not carry
// those. Users do not run it by hand: `pi-actors kernel start` (and any
// verb that needs the kernel) starts it.
package main

import (
	"fmt"
	"os"
	"syscall"

	"github.com/pi-actors/pi-actors/actors"
	"github.com/pi-actors/pi-actors/verbs"
)

// Version is set at build time with -ldflags "-X main.Version=…".
var Version = "0.1.0-dev"

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "mcp", "schema", "top":
			// The front doors moved to pi-actors-front; a set-up that
			// still runs them through this binary keeps working.
			bin, err := verbs.FrontBinary()
			if err == nil {
				err = syscall.Exec(bin, append([]string{bin}, os.Args[1:]...), os.Environ())
			}
			fmt.Fprintf(os.Stderr, "pi-actors-kernel: %s is served by pi-actors-front: %v\n", os.Args[1], err)
			os.Exit(69)
		}
	}
	os.Exit(actors.Main(Version))
}
