// Command pi-actors-kernel is the pi-actors kernel: one per agent root, it
// hosts the proto.actor system (run actors, session queues), serves the
// unix socket the `pi-actors` CLI talks to, and starts a lean
// `pi-actors supervise` process per run. It is a separate binary so the CLI
// and the per-run supervisors do not carry the actor system's weight.
// Users do not run it by hand: `pi-actors kernel start` (or any verb that
// needs the kernel) starts it.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/pi-actors/pi-actors/actors"
	"github.com/pi-actors/pi-actors/internal/config"
)

// Version is set at build time with -ldflags "-X main.Version=…".
var Version = "0.1.0-dev"

func main() {
	os.Exit(run())
}

func run() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	agent, err := config.AgentDir()
	if err != nil {
		fmt.Fprintln(os.Stderr, "pi-actors-kernel:", err)
		return 69
	}
	cfg, err := config.Load(agent)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pi-actors-kernel:", err)
		return 65
	}
	sup, err := supervisorCommand()
	if err != nil {
		fmt.Fprintln(os.Stderr, "pi-actors-kernel:", err)
		return 69
	}
	err = actors.Run(ctx, actors.Config{AgentDir: agent, Supervisor: sup, Version: Version, Settings: cfg})
	if errors.Is(err, actors.ErrRunning) {
		fmt.Fprintln(os.Stderr, "pi-actors-kernel:", err)
		return 75
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pi-actors-kernel:", err)
		return 70
	}
	return 0
}

// supervisorCommand finds the pi-actors binary that runs supervisors:
// $PI_ACTORS_BIN, else the pi-actors next to this binary, else PATH.
func supervisorCommand() ([]string, error) {
	if b := os.Getenv("PI_ACTORS_BIN"); b != "" {
		return []string{b, "supervise"}, nil
	}
	if self, err := os.Executable(); err == nil {
		sib := filepath.Join(filepath.Dir(self), "pi-actors")
		if st, err := os.Stat(sib); err == nil && !st.IsDir() {
			return []string{sib, "supervise"}, nil
		}
	}
	if p, err := exec.LookPath("pi-actors"); err == nil {
		return []string{p, "supervise"}, nil
	}
	return nil, errors.New("cannot find the pi-actors binary to run supervisors: install it next to pi-actors-kernel or set PI_ACTORS_BIN")
}
