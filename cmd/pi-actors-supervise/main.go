// Command pi-actors-supervise is the per-run supervisor the kernel starts
// for every run: `pi-actors-supervise <state_dir>`, its own session, fd 3
// its readiness pipe (package runs, Main and Supervise). It is the hidden
// `pi-actors supervise` verb in a binary of its own that links nothing but
// package runs and what runs needs, so each run's start pays for no CLI
// code: no package initialisation, global tables or pages of the verbs,
// recipes, knowledge or YAML packages. The kernel falls back to `pi-actors
// supervise` when this binary is not installed beside it.
package main

import (
	"os"

	"github.com/pi-actors/pi-actors/runs"
)

func main() { os.Exit(runs.Main("pi-actors-supervise", os.Args[1:])) }
