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
	"github.com/pi-actors/pi-actors/verbs"
)

// Main is the body of the pi-actors-kernel binary: it reads the agent root
// and config, finds the binaries that run supervisors, and runs
// the kernel until SIGTERM/SIGINT or a stop request. It returns the exit
// code (75 when another kernel owns the agent root).
func Main(version string) int { return MainWith(version, nil) }

// MainWith is Main with a cluster side (the pi-actors-cluster binary's
// body); it is started when pi-actors.toml has [cluster].
func MainWith(version string, cl Cluster) int {
	if len(os.Args) > 1 {
		return kernelArgs(os.Args[1:], version)
	}
	verbs.RestoreKernelEnv()
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
	sup, cli, err := supervisorCommand()
	if err != nil {
		fmt.Fprintln(os.Stderr, "pi-actors-kernel:", err)
		return 69
	}
	err = Run(ctx, Config{AgentDir: agent, Supervisor: sup, CLI: cli, Version: version, Settings: cfg, Cluster: cl})
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

// kernelArgs answers a kernel binary given arguments: it takes none (the
// CLI starts it), so only version and help are answered; anything else is
// a usage error (64) and no kernel starts.
func kernelArgs(args []string, version string) int {
	prog := filepath.Base(os.Args[0])
	switch args[0] {
	case "version", "--version":
		fmt.Println(prog, version)
		return 0
	case "help", "--help", "-h":
		fmt.Printf("usage: %s (no arguments)\nThe pi-actors kernel of the agent root ($PI_CODING_AGENT_DIR, default ~/.pi/agent). Start it with `pi-actors kernel start`, or let any verb that needs it start it.\n", prog)
		return 0
	}
	fmt.Fprintf(os.Stderr, "%s: unexpected argument %q: the kernel takes no arguments; start it with `pi-actors kernel start` (see `pi-actors help kernel`)\n", prog, args[0])
	return 64
}

// supervisorCommand finds the pi-actors CLI (what templates get as
// {pi_actors}: $PI_ACTORS_BIN, else the pi-actors next to this binary,
// else PATH) and the argv prefix that starts a run's supervisor:
// $PI_ACTORS_SUPERVISE_BIN, else the pi-actors-supervise next to that CLI
// or next to this binary (the same installation, so the same version),
// else the CLI's hidden `supervise` verb.
func supervisorCommand() (sup []string, cli string, err error) {
	cli = os.Getenv("PI_ACTORS_BIN")
	self, selfErr := os.Executable()
	if cli == "" && selfErr == nil {
		if sib := filepath.Join(filepath.Dir(self), "pi-actors"); isFile(sib) {
			cli = sib
		}
	}
	if cli == "" {
		if p, err := exec.LookPath("pi-actors"); err == nil {
			cli = p
		}
	}
	if cli == "" {
		return nil, "", errors.New("cannot find the pi-actors binary to run supervisors: install it next to pi-actors-kernel or set PI_ACTORS_BIN")
	}
	if b := os.Getenv("PI_ACTORS_SUPERVISE_BIN"); b != "" {
		return []string{b}, cli, nil
	}
	near := []string{filepath.Dir(cli)}
	if selfErr == nil {
		near = append(near, filepath.Dir(self))
	}
	for _, dir := range near {
		if sib := filepath.Join(dir, "pi-actors-supervise"); isFile(sib) {
			return []string{sib}, cli, nil
		}
	}
	return []string{cli, "supervise"}, cli, nil
}

func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir()
}
