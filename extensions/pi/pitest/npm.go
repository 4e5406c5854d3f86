package pitest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ExtensionDir is extensions/pi in this source tree (package.json,
// package-lock.json, index.ts).
func ExtensionDir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("pitest: no caller information")
	}
	return filepath.Dir(filepath.Dir(file))
}

// Node returns the node and npm executables, or skips the test.
func Node(t testing.TB) (node, npm string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not found: " + err.Error() + " (the pi tests need node and npm)")
	}
	npm, err = exec.LookPath("npm")
	if err != nil {
		t.Skip("npm not found: " + err.Error() + " (the pi tests need node and npm)")
	}
	return node, npm
}

// NodeModules returns a node_modules directory holding the packages of
// extensions/pi/package-lock.json (pi, its dependencies, tsc), installing
// them (npm ci) into the user cache the first time. An unreachable
// registry skips the test with a note; any other npm failure fails it.
func NodeModules(t testing.TB) string {
	t.Helper()
	Node(t)
	start := time.Now()
	modules, fresh, err := InstallModules()
	if errors.Is(err, ErrOffline) {
		t.Skip(err.Error())
	}
	if err != nil {
		t.Fatal(err)
	}
	if fresh {
		t.Logf("npm ci into %s took %s (cached for later runs)", modules, time.Since(start).Round(time.Second))
	}
	return modules
}

// ErrOffline marks an npm registry that cannot be reached.
var ErrOffline = errors.New("npm registry unreachable")

// InstallModules is NodeModules for programs (the benchmarks): fresh
// reports an install that just happened; an unreachable registry is
// ErrOffline.
func InstallModules() (modules string, fresh bool, err error) {
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", false, fmt.Errorf("npm not found: %w", err)
	}
	dir := ExtensionDir()
	pkg, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return "", false, err
	}
	lock, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		return "", false, err
	}
	sum := sha256.Sum256(append(append(pkg, 0), lock...))
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	base = filepath.Join(base, "pi-actors", "piext-npm")
	final := filepath.Join(base, hex.EncodeToString(sum[:8]))
	modules = filepath.Join(final, "node_modules")
	if installed(modules) {
		return modules, false, nil
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", false, err
	}
	stage, err := os.MkdirTemp(base, "stage-")
	if err != nil {
		return "", false, err
	}
	defer os.RemoveAll(stage)
	for name, data := range map[string][]byte{"package.json": pkg, "package-lock.json": lock} {
		if err := os.WriteFile(filepath.Join(stage, name), data, 0o644); err != nil {
			return "", false, err
		}
	}
	out, err := runGroup(8*time.Minute, stage, npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error")
	if err != nil {
		if offline.Match(out) {
			return "", false, fmt.Errorf("%w, cannot install the pinned packages (%v):\n%s", ErrOffline, err, tail(out))
		}
		return "", false, fmt.Errorf("npm ci: %v\n%s", err, tail(out))
	}
	if err := os.Rename(stage, final); err != nil && !installed(modules) {
		// Another run installed the same lock first unless it did not.
		return "", false, fmt.Errorf("cache node_modules: %w", err)
	}
	pruneCache(base, filepath.Base(final))
	return modules, true, nil
}

func installed(modules string) bool {
	for _, f := range []string{"typescript/bin/tsc", "@mariozechner/pi-coding-agent/dist/cli.js"} {
		if _, err := os.Stat(filepath.Join(modules, f)); err != nil {
			return false
		}
	}
	return true
}

// CLI is pi's command-line entry point inside modules.
func CLI(modules string) string {
	return filepath.Join(modules, "@mariozechner", "pi-coding-agent", "dist", "cli.js")
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

// runGroup runs npm in its own process group with a deadline and kills the
// group afterwards.
func runGroup(timeout time.Duration, dir, name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if ctx.Err() != nil {
		err = errors.Join(err, ctx.Err())
	}
	return out.Bytes(), err
}

func tail(b []byte) []byte {
	if len(b) > 4000 {
		return b[len(b)-4000:]
	}
	return b
}
