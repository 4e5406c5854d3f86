package actors

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/pi-actors/pi-actors/internal/config"
)

// Main is the body of the pi-actors-kernel binary: it reads the agent root
// and config, finds the pi-actors binary that runs supervisors, and runs
// the kernel until SIGTERM/SIGINT or a stop request. It returns the exit
// code (75 when another kernel owns the agent root).
func Main(version string) int { return MainWith(version, nil) }

// MainWith is Main with a cluster side (the pi-actors-cluster binary's
// body); it is started when pi-actors.toml has [cluster].
func MainWith(version string, cl Cluster) int {
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
	err = Run(ctx, Config{AgentDir: agent, Supervisor: sup, Version: version, Settings: cfg, Cluster: cl})
	switch {
	case errors.Is(err, ErrRunning):
		fmt.Fprintln(os.Stderr, "pi-actors-kernel:", err)
		return 75
	case err != nil:
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
