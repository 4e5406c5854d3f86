package stage

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/pi-actors/pi-actors/internal/config"
	"github.com/pi-actors/pi-actors/verbs"
)

// check is one validation command's outcome.
type check struct {
	label, dir, log string
	argv            []string
	code            int
	timedOut        bool
	took            time.Duration
}

// validate runs the command after -- and prints a bounded report.
func validate(ctx context.Context, env *verbs.Env, a *Args, io IO) error {
	const name = "validate"
	timeout, err := a.Int(name, "timeout_ms", 300000)
	if err != nil {
		return err
	}
	strict, err := a.Bool(name, "strict", false)
	if err != nil {
		return err
	}
	lines, err := a.Int(name, "lines", 80)
	if err != nil {
		return err
	}
	skip, err := a.Bool(name, "skip", false)
	if err != nil {
		return err
	}
	c := &check{label: a.Get("label", "validation"), dir: resolvePath(env, a.Get("dir", ".")), argv: a.Argv}
	if skip {
		_, err := fmt.Fprintf(io.Out, "## %s: not run\nno command was given (skip=true)\n", c.label)
		return err
	}
	if st, err := os.Stat(c.dir); err != nil || !st.IsDir() {
		return &verbs.Error{Exit: verbs.ExitNoInput, Code: "not_found", Message: "stage validate: dir= is not a directory: " + c.dir, Hint: "dir= is where the command runs (the recipes' scope)"}
	}
	logDir := envValue(env, "PI_ACTORS_STATE_DIR")
	if logDir == "" {
		logDir = filepath.Join(config.TmpDir(env.AgentDir), "outputs")
	}
	if err := os.MkdirAll(logDir, 0o700); err != nil {
		return &verbs.Error{Exit: exitCantCreate, Code: "cant_create", Message: "stage validate: " + err.Error()}
	}
	f, err := os.CreateTemp(logDir, "validation-*.log")
	if err != nil {
		return &verbs.Error{Exit: exitCantCreate, Code: "cant_create", Message: "stage validate: " + err.Error()}
	}
	c.log = f.Name()
	runErr := c.run(ctx, env, f, time.Duration(timeout)*time.Millisecond)
	f.Close()
	if runErr != nil {
		return runErr
	}
	if err := c.report(io.Out, lines); err != nil {
		return err
	}
	if strict && c.code != 0 {
		return &verbs.Error{Exit: c.code, Code: "validation_failed", Message: fmt.Sprintf("stage validate: %s %s (exit %d); output: %s", c.label, c.status(), c.code, c.log)}
	}
	return nil
}

// run starts the command in its own process group with its output in
// out, and stops the group on timeout or when ctx ends (SIGTERM, the kill
// grace, SIGKILL); leftovers of the group are killed when it exits.
func (c *check) run(ctx context.Context, env *verbs.Env, out *os.File, timeout time.Duration) error {
	cmd := exec.Command(c.argv[0], c.argv[1:]...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = c.dir, env.Environ, out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		c.code = 126
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			c.code = 127
		}
		fmt.Fprintf(out, "%s: %v\n", c.argv[0], err)
		return nil
	}
	pgid := cmd.Process.Pid
	defer syscall.Kill(-pgid, syscall.SIGKILL)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var expire <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expire = t.C
	}
	grace := max(env.Config.KillGrace(), time.Millisecond)
	select {
	case <-done:
	case <-expire:
		c.timedOut = true
		stopGroup(pgid, grace, done)
	case <-ctx.Done():
		stopGroup(pgid, grace, done)
		return &verbs.Error{Exit: 128 + int(syscall.SIGTERM), Code: "stopped", Message: "stage validate: stopped"}
	}
	c.took = time.Since(start)
	c.code = exitCode(cmd.ProcessState)
	if c.timedOut {
		c.code = 124
	}
	return nil
}

// stopGroup sends SIGTERM to the group, waits up to grace for the leader,
// then sends SIGKILL.
func stopGroup(pgid int, grace time.Duration, done <-chan error) {
	syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(grace):
		syscall.Kill(-pgid, syscall.SIGKILL)
		<-done
	}
}

func exitCode(ps *os.ProcessState) int {
	if ps == nil {
		return 1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

func (c *check) status() string {
	switch {
	case c.timedOut:
		return "timed out"
	case c.code == 0:
		return "passed"
	}
	return "failed"
}

// report prints the status lines and the last lines of the output.
func (c *check) report(w io.Writer, keep int) error {
	tail, total, err := lastLines(c.log, keep)
	if err != nil {
		return &verbs.Error{Exit: exitIOErr, Code: "io", Message: "stage validate: " + err.Error()}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## %s: %s\ncommand: %s\ndir: %s\nexit: %d\nduration: %s\n", c.label, c.status(), quoteArgv(c.argv), c.dir, c.code, c.took.Round(time.Millisecond))
	switch {
	case total == 0:
		b.WriteString("output: none\n")
	case len(tail) < total:
		fmt.Fprintf(&b, "output: %d lines, the last %d below (all of it: %s)\n", total, len(tail), c.log)
	default:
		fmt.Fprintf(&b, "output: %d lines (also in %s)\n", total, c.log)
	}
	if len(tail) > 0 {
		b.WriteString("```\n" + strings.Join(tail, "\n") + "\n```\n")
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// lastLines returns the last n lines of a file (each cut at 1000 bytes)
// and how many there are.
func lastLines(path string, n int) ([]string, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	var ring []string
	total := 0
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadString('\n')
		if line != "" {
			total++
			line = strings.TrimRight(line, "\r\n")
			if len(line) > 1000 {
				line = line[:1000] + "…"
			}
			if n > 0 {
				ring = append(ring, line)
				if len(ring) > n {
					ring = ring[1:]
				}
			}
		}
		if err == io.EOF {
			return ring, total, nil
		}
		if err != nil {
			return nil, 0, err
		}
	}
}

// quoteArgv shows an argv as a shell would read it back.
func quoteArgv(argv []string) string {
	out := make([]string, len(argv))
	for i, w := range argv {
		if w != "" && strings.IndexFunc(w, func(r rune) bool {
			return !(r == '-' || r == '_' || r == '.' || r == '/' || r == '=' || r == ',' || r == ':' || r == '+' ||
				(r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z'))
		}) < 0 {
			out[i] = w
			continue
		}
		out[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}
