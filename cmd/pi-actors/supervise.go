package main

import (
	"context"
	"fmt"
	"os"

	"github.com/pi-actors/pi-actors/runs"
)

// superviseMain is the hidden `pi-actors supervise <state_dir>` entry: the
// per-run supervisor the kernel starts (fd 3 is its readiness pipe).
func superviseMain(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: pi-actors supervise <state_dir> (started by the kernel)")
		return exitUsage
	}
	ready := os.NewFile(3, "ready")
	if err := runs.Supervise(context.Background(), runs.Dir(args[0]), os.Stdin, ready); err != nil {
		fmt.Fprintln(os.Stderr, "pi-actors supervise:", err)
		return exitSoftware
	}
	return exitOK
}
