package main

import (
	"github.com/pi-actors/pi-actors/runs"
)

// superviseMain is the hidden `pi-actors supervise <state_dir>` entry: the
// per-run supervisor, when pi-actors-supervise is not installed beside
// the kernel (fd 3 is its readiness pipe).
func superviseMain(args []string) int { return runs.Main("pi-actors supervise", args) }
