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

// frontOnly are the modules only the front doors need (mcp, schema, top):
// the kernel binary must not link them either — their package
// initialisation and global tables would sit in the kernel's memory for
// its whole life.
var frontOnly = []string{
	"github.com/modelcontextprotocol/go-sdk", "github.com/google/jsonschema-go",
	"charm.land/", "github.com/charmbracelet/",
}

// TestLeanBinary checks with `go list -deps` that neither the pi-actors
// binary nor the verb layer links a heavy dependency (AGENTS.md rule 5),
// and that the kernel binary does not link the front doors' libraries.
func TestLeanBinary(t *testing.T) {
	for _, pkg := range []string{"github.com/pi-actors/pi-actors/cmd/pi-actors", "github.com/pi-actors/pi-actors/verbs"} {
		for _, dep := range linksAny(t, pkg, heavy) {
			t.Errorf("%s links %s (move that verb to pi-actors-front or the kernel)", pkg, dep)
		}
	}
	for _, dep := range linksAny(t, "github.com/pi-actors/pi-actors/cmd/pi-actors-kernel", frontOnly) {
		t.Errorf("pi-actors-kernel links %s (a front door's library: it belongs in pi-actors-front)", dep)
	}
	sup := "github.com/pi-actors/pi-actors/cmd/pi-actors-supervise"
	for _, dep := range linksAny(t, sup, heavy) {
		t.Errorf("pi-actors-supervise links %s", dep)
	}
	for _, dep := range linksAny(t, sup, nil) {
		if cliOnly[dep] {
			t.Errorf("pi-actors-supervise links %s (every run starts one: it links package runs and what runs needs)", dep)
		}
	}
}

// cliOnly are packages of the CLI that a run's supervisor does without:
// their initialisation and pages would be paid by every run's start.
var cliOnly = map[string]bool{
	"github.com/pi-actors/pi-actors/verbs": true, "github.com/pi-actors/pi-actors/recipes": true,
	"github.com/pi-actors/pi-actors/knowledge/api": true, "github.com/pi-actors/pi-actors/rooms": true,
	"github.com/pi-actors/pi-actors/workflows": true, "gopkg.in/yaml.v3": true,
	// The TOML library (its init loads the local time zone) and the uuid
	// package (crypto, network interfaces): runs needs neither.
	"github.com/pi-actors/pi-actors/internal/config": true, "github.com/BurntSushi/toml": true, "github.com/google/uuid": true,
}

// linksAny lists the dependencies of pkg that start with one of prefixes
// (all of them when prefixes is nil).
func linksAny(t *testing.T, pkg string, prefixes []string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
	}
	var found []string
	for _, dep := range strings.Fields(string(out)) {
		if prefixes == nil {
			found = append(found, dep)
		}
		for _, h := range prefixes {
			if strings.HasPrefix(dep, h) {
				found = append(found, dep)
			}
		}
	}
	return found
}
