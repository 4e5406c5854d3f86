package main

import (
	"os/exec"
	"strings"
	"testing"
)

// heavy are the modules the lean binary (every CLI call and every run's
// supervisor) must not link: the actor system, SQLite, gopsutil, the MCP
// SDK, the JSON-schema library, the TUI libraries.
var heavy = []string{
	"github.com/asynkron/protoactor-go", "modernc.org/sqlite", "github.com/shirou/gopsutil",
	"github.com/modelcontextprotocol/go-sdk", "github.com/google/jsonschema-go",
	"charm.land/", "github.com/charmbracelet/",
}

// TestLeanBinary checks with `go list -deps` that neither the pi-actors
// binary nor the verb layer links a heavy dependency (AGENTS.md rule 5).
func TestLeanBinary(t *testing.T) {
	for _, pkg := range []string{"github.com/pi-actors/pi-actors/cmd/pi-actors", "github.com/pi-actors/pi-actors/verbs"} {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, h := range heavy {
				if strings.HasPrefix(dep, h) {
					t.Errorf("%s links %s (move that verb to the full binary, pi-actors-kernel)", pkg, dep)
				}
			}
		}
	}
}
