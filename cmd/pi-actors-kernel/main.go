// Command pi-actors-kernel is the full pi-actors binary. Without arguments
// it is the kernel: one per agent root, it hosts the proto.actor system
// (run actors, session queues), serves the unix socket the `pi-actors` CLI
// talks to, and starts a lean `pi-actors supervise` process per run. With
// `mcp` it serves the verbs as MCP tools over stdio; with `schema` it
// prints the tool catalogue; with `top` it is the live terminal inspector.
// It is a separate binary so the CLI and the per-run supervisors do not
// carry the weight of the actor system, the MCP SDK, the JSON-schema
// library or the TUI libraries. Users do not run it by hand: `pi-actors
// kernel start`, `pi-actors mcp`, `pi-actors schema` and `pi-actors top`
// start it.
package main

import (
	"os"

	"github.com/pi-actors/pi-actors/actors"
	"github.com/pi-actors/pi-actors/verbs/mcpserver"
	"github.com/pi-actors/pi-actors/verbs/top"
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
		case "top":
			os.Exit(top.Main(os.Args[2:], os.Stdout, os.Stderr))
		}
	}
	os.Exit(actors.Main(Version))
}
