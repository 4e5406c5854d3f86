// Command pi-actors-kernel is the full pi-actors binary. Without arguments
// it is the kernel: one per agent root, it hosts the proto.actor system
// (run actors, session queues), serves the unix socket the `pi-actors` CLI
// talks to, and starts a lean `pi-actors supervise` process per run. With
// `mcp` it serves the verbs as MCP tools over stdio; with `schema` it
// prints the tool catalogue. It is a separate binary so the CLI and the
// per-run supervisors do not carry the weight of the actor system, the MCP
// SDK or the JSON-schema library. Users do not run it by hand: `pi-actors
// kernel start`, `pi-actors mcp` and `pi-actors schema` start it.
package main

import (
	"os"

	"github.com/pi-actors/pi-actors/actors"
	"github.com/pi-actors/pi-actors/verbs/mcpserver"
)

// Version is set at build time with -ldflags "-X main.Version=…".
var Version = "0.1.0-dev"

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "mcp":
			os.Exit(mcpserver.Main(Version))
		case "schema":
			os.Exit(mcpserver.SchemaMain(os.Args[2:], os.Stdout))
		}
	}
	os.Exit(actors.Main(Version))
}
