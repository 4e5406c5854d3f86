package stage

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestValidatePassedAndFailed(t *testing.T) {
	env := testEnv(t)
	out, _, err := run(t, env, "", "validate", "label=unit tests", "--", "sh", "-c", "echo ok; echo warn >&2")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## unit tests: passed\n", "command: sh -c 'echo ok; echo warn >&2'\n", "dir: " + env.Cwd + "\n",
		"exit: 0\n", "output: 2 lines (also in ", "```\nok\nwarn\n```\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	// A failing command is reported, and the stage succeeds unless strict.
	out, _, err = run(t, env, "", "validate", "lines=2", "--", "sh", "-c", "for i in 1 2 3 4; do echo line$i; done; exit 3")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## validation: failed\n", "exit: 3\n", "output: 4 lines, the last 2 below (all of it: ", "```\nline3\nline4\n```\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	log := regexp.MustCompile(`all of it: (\S+)\)`).FindStringSubmatch(out)
	if b, err := os.ReadFile(log[1]); err != nil || string(b) != "line1\nline2\nline3\nline4\n" {
		t.Errorf("full output file %s: %q %v", log[1], b, err)
	}
	out, _, err = run(t, env, "", "validate", "strict=true", "--", "sh", "-c", "exit 3")
	if exitOf(err) != 3 || !strings.Contains(out, "## validation: failed") {
		t.Errorf("strict: exit %d %v\n%s", exitOf(err), err, out)
	}
	out, _, err = run(t, env, "", "validate", "--", "no-such-command-xyz")
	if err != nil || !strings.Contains(out, "exit: 127\n") {
		t.Errorf("not found: %v\n%s", err, out)
	}
	_, _, err = run(t, env, "", "validate", "dir=missing", "--", "true")
	if exitOf(err) != 66 {
		t.Errorf("missing dir: %v", err)
	}
}

// TestValidateTimeoutKillsTheGroup: on timeout the command and a
// grandchild that ignores SIGTERM are gone, and the exit is 124.
func TestValidateTimeoutKillsTheGroup(t *testing.T) {
	env := testEnv(t)
	os.WriteFile(filepath.Join(env.AgentDir, "pi-actors.toml"), []byte("[exec]\nkill_grace_ms = 200\n"), 0o644)
	if err := env.LoadConfig(); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(env.Cwd, "child.pid")
	start := time.Now()
	out, _, err := run(t, env, "", "validate", "timeout_ms=300", "--", "sh", "-c",
		"sh -c 'trap \"\" TERM; echo $$ > "+pidFile+"; exec sleep 60' & wait")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "## validation: timed out\n") || !strings.Contains(out, "exit: 124\n") {
		t.Errorf("report:\n%s", out)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("took %s", took)
	}
	b, _ := os.ReadFile(pidFile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if pid <= 0 {
		t.Fatalf("no grandchild pid: %q", b)
	}
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("grandchild %d survived the timeout", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestValidateStopped: a cancelled stage (SIGTERM to the leaf) stops the
// command's group and reports 143.
func TestValidateStopped(t *testing.T) {
	env := testEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := Run(ctx, env, "validate", []string{"--", "sleep", "30"}, IO{In: strings.NewReader(""), Out: &strings.Builder{}, Err: &strings.Builder{}})
	if exitOf(err) != 143 {
		t.Errorf("stopped: %v (exit %d)", err, exitOf(err))
	}
}

func TestValidateSkip(t *testing.T) {
	env := testEnv(t)
	out, _, err := run(t, env, "", "validate", "skip=true", "label=checks", "--", "bash", "-c")
	if err != nil || out != "## checks: not run\nno command was given (skip=true)\n" {
		t.Errorf("skip: %q %v", out, err)
	}
}
