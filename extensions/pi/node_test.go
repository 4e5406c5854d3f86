package piext

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/extensions/pi/pitest"
)

// TestExtension type-checks index.ts with tsc against the pinned
// @mariozechner/pi-coding-agent, then runs the node test (test/*.test.mjs)
// on the compiled extension. It needs node and npm; the npm packages are
// installed once per package-lock.json into a cache under
// os.UserCacheDir() and reused.
func TestExtension(t *testing.T) {
	node, _ := pitest.Node(t)
	modules := pitest.NodeModules(t)
	work := t.TempDir()
	sources, _ := filepath.Glob("*.ts")
	tests, _ := filepath.Glob(filepath.Join("test", "*.test.mjs"))
	fakes, _ := filepath.Glob(filepath.Join("testdata", "*"))
	if len(tests) == 0 || len(fakes) == 0 {
		t.Fatalf("no node tests (%v) or fakes (%v)", tests, fakes)
	}
	var runTests []string
	for _, name := range append(append(sources, "tsconfig.json", "package.json"), append(tests, fakes...)...) {
		copyFile(t, name, filepath.Join(work, name))
	}
	for _, name := range tests {
		runTests = append(runTests, filepath.Join(work, name))
	}
	if err := os.Symlink(modules, filepath.Join(work, "node_modules")); err != nil {
		t.Fatal(err)
	}
	ok := t.Run("tsc", func(t *testing.T) {
		tsc := filepath.Join(modules, "typescript", "bin", "tsc")
		if out, err := runGroup(t, 2*time.Minute, work, nil, node, tsc, "-p", filepath.Join(work, "tsconfig.json")); err != nil {
			t.Fatalf("tsc: %v\n%s", err, out)
		}
	})
	if !ok {
		return
	}
	t.Run("node", func(t *testing.T) {
		agent := t.TempDir()
		real := realBinaries(t, agent)
		env := []string{"PIEXT_JS=" + filepath.Join(work, "dist", "index.js"), "PI_CODING_AGENT_DIR=" + agent, "PIEXT_REAL_BIN=" + real,
			"PI_ACTORS_SESSION=", "PI_ACTORS_KERNEL_BIN=", "PI_ACTORS_BIN="}
		args := append([]string{"--test", "--test-reporter=tap"}, runTests...)
		out, err := runGroup(t, 2*time.Minute, work, env, node, args...)
		if err != nil {
			t.Fatalf("node --test: %v\n%s", err, out)
		}
		if !regexp.MustCompile(`(?m)^# pass [1-9]`).Match(out) || !regexp.MustCompile(`(?m)^# fail 0$`).Match(out) {
			t.Fatalf("node --test ran no passing tests:\n%s", out)
		}
		t.Logf("node --test:\n%s", bytes.TrimSpace(tapSummary(out)))
	})
}

// runGroup runs a command in its own process group with a deadline and
// kills the whole group afterwards, so nothing it started (the node test's
// watcher processes included) outlives it.
func runGroup(t *testing.T, timeout time.Duration, dir string, env []string, name string, args ...string) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	if cmd.Process != nil {
		if kerr := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); kerr != nil && !errors.Is(kerr, syscall.ESRCH) {
			t.Errorf("kill process group of %s: %v", name, kerr)
		}
	}
	if ctx.Err() != nil {
		err = errors.Join(err, ctx.Err())
	}
	return out.Bytes(), err
}

// cleanEnv is this process's environment without the variables that would
// point the extension at a real pi-actors.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PI_ACTORS_") {
			env = append(env, kv)
		}
	}
	return env
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func copyFile(t *testing.T, name, to string) {
	t.Helper()
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, readFile(t, name), fi.Mode().Perm()); err != nil {
		t.Fatal(err)
	}
}

// tapSummary keeps the ok/not ok lines and the totals of node's TAP output.
func tapSummary(out []byte) []byte {
	var keep [][]byte
	for _, line := range bytes.Split(out, []byte("\n")) {
		if bytes.HasPrefix(line, []byte("ok ")) || bytes.HasPrefix(line, []byte("not ok ")) || bytes.HasPrefix(line, []byte("# ")) {
			keep = append(keep, line)
		}
	}
	return bytes.Join(keep, []byte("\n"))
}

// realBinaries builds the real pi-actors, pi-actors-kernel, pi-actors-front and pi-actors-supervise for the
// node test that drives the extension against them; the kernel it starts
// (for agent) is stopped afterwards.
func realBinaries(t *testing.T, agent string) string {
	t.Helper()
	dir := binaries(t) // built once per test process, shared with the real-pi tests
	t.Cleanup(func() {
		stop := exec.Command(filepath.Join(dir, "pi-actors"), "kernel", "stop")
		stop.Env = append(os.Environ(), "PI_CODING_AGENT_DIR="+agent)
		stop.Run()
	})
	return dir
}
