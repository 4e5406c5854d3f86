// Command pi-actors-front is the binary of the front doors that need heavy
// libraries: `mcp` serves the verbs as MCP tools over stdio and `schema`
// prints the tool catalogue (verbs/mcpserver: the MCP SDK, the JSON-schema
// library); `top` is the live terminal inspector (verbs/top: Bubble Tea,
// Lip Gloss). It is apart from the lean pi-actors binary (every CLI call,
// every run's supervisor) and from the kernel (one long-lived process per
// agent root), so neither carries those libraries' code, package
// initialisation or global tables. Users do not run it by hand:
// `pi-actors mcp`, `pi-actors schema` and `pi-actors top` exec it.
package main

import (
	"fmt"
	"os"

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
	fmt.Fprintln(os.Stderr, "usage: pi-actors-front mcp|schema|top … (started by pi-actors mcp, schema and top)")
	os.Exit(64)
}
