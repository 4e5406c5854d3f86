package piext

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestExtension type-checks index.ts with tsc against the pinned
// @mariozechner/pi-coding-agent, then runs the node test (test/*.test.mjs)
// on the compiled extension. It needs node and npm; the npm packages are
// installed once per package-lock.json into a cache under
// os.UserCacheDir() and reused.
func TestExtension(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not found: " + err.Error() + " (the pi extension's tsc and node tests need node and npm)")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm not found: " + err.Error() + " (the pi extension's tsc and node tests need node and npm)")
	}
	modules := nodeModules(t, npm)
	work := t.TempDir()
	tests, _ := filepath.Glob(filepath.Join("test", "*.test.mjs"))
	fakes, _ := filepath.Glob(filepath.Join("testdata", "*"))
	if len(tests) == 0 || len(fakes) == 0 {
		t.Fatalf("no node tests (%v) or fakes (%v)", tests, fakes)
	}
	var runTests []string
	for _, name := range append([]string{"index.ts", "tsconfig.json", "package.json"}, append(tests, fakes...)...) {
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

// nodeModules returns a node_modules directory holding the packages of
// package-lock.json, installing them (npm ci) into the user cache the first
// time. An unreachable registry skips the test; any other npm failure fails it.
func nodeModules(t *testing.T, npm string) string {
	t.Helper()
	pkg := readFile(t, "package.json")
	lock := readFile(t, "package-lock.json")
	sum := sha256.Sum256(append(append(pkg, 0), lock...))
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	base = filepath.Join(base, "pi-actors", "piext-npm")
	final := filepath.Join(base, hex.EncodeToString(sum[:8]))
	modules := filepath.Join(final, "node_modules")
	if _, err := os.Stat(filepath.Join(modules, "typescript", "bin", "tsc")); err == nil {
		return modules
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		t.Fatal(err)
	}
	stage, err := os.MkdirTemp(base, "stage-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(stage)
	for name, data := range map[string][]byte{"package.json": pkg, "package-lock.json": lock} {
		if err := os.WriteFile(filepath.Join(stage, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	out, err := runGroup(t, 8*time.Minute, stage, nil, npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error")
	if err != nil {
		if offline.Match(out) {
			t.Skipf("npm registry unreachable, cannot install the pinned packages (%v):\n%s", err, tail(out))
		}
		t.Fatalf("npm ci: %v\n%s", err, tail(out))
	}
	t.Logf("npm ci into %s took %s (cached for later runs)", final, time.Since(start).Round(time.Second))
	if err := os.Rename(stage, final); err != nil {
		// Another run installed the same lock first: use its copy.
		if _, serr := os.Stat(filepath.Join(modules, "typescript", "bin", "tsc")); serr != nil {
			t.Fatalf("cache node_modules: %v", err)
		}
	}
	pruneCache(base, filepath.Base(final))
	return modules
}

// pruneCache removes the installs of earlier lock files (a few hundred MB
// each) and stages older than an hour. Best effort.
func pruneCache(base, keep string) {
	entries, _ := os.ReadDir(base)
	for _, e := range entries {
		info, err := e.Info()
		if e.Name() == keep || err != nil {
			continue
		}
		if !strings.HasPrefix(e.Name(), "stage-") || time.Since(info.ModTime()) > time.Hour {
			os.RemoveAll(filepath.Join(base, e.Name()))
		}
	}
}

// offline matches npm's output when the registry cannot be reached.
var offline = regexp.MustCompile(`ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|network`)

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

func tail(b []byte) []byte {
	if len(b) > 4000 {
		return b[len(b)-4000:]
	}
	return b
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

// realBinaries builds the real pi-actors and pi-actors-kernel for the
// node test that drives the extension against them; the kernel it starts
// (for agent) is stopped afterwards.
func realBinaries(t *testing.T, agent string) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("go", "build", "-o", dir+"/", "github.com/pi-actors/pi-actors/cmd/pi-actors", "github.com/pi-actors/pi-actors/cmd/pi-actors-kernel")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the binaries: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		stop := exec.Command(filepath.Join(dir, "pi-actors"), "kernel", "stop")
		stop.Env = append(os.Environ(), "PI_CODING_AGENT_DIR="+agent)
		stop.Run()
	})
	return dir
}
