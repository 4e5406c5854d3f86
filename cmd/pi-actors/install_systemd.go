package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pi-actors/pi-actors/internal/fsutil"
	"github.com/pi-actors/pi-actors/verbs"
)

// `install systemd` writes a systemd user unit that keeps the kernel up
// (started at login, restarted when it ends); `uninstall systemd` removes
// it. Neither runs systemctl: they print the commands to run.

var systemdTarget = &installTarget{
	summary:   "write a systemd user unit that keeps the kernel up (~/.config/systemd/user/pi-actors.service)",
	install:   installSystemd,
	uninstall: uninstallSystemd,
}

// unitName is the unit install systemd writes.
const unitName = "pi-actors.service"

// unitMarker is the unit's first line: uninstall removes only a unit that
// carries it.
const unitMarker = "# Written by `pi-actors install systemd`; `pi-actors uninstall systemd` removes it."

// unitDir is the systemd user unit directory: $XDG_CONFIG_HOME/systemd/user,
// else ~/.config/systemd/user.
func unitDir() (string, error) {
	if x := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "systemd", "user"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("install systemd: find the home directory: %w", err)
	}
	return filepath.Join(home, ".config", "systemd", "user"), nil
}

// unitQuote writes s as one systemd word: double-quoted, with \ and "
// escaped and % doubled (a specifier otherwise).
func unitQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "%", "%%", "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

// unitText is the unit for an agent root, its kernel and its CLI.
func unitText(agentDir, kernel, cli string) string {
	var b strings.Builder
	b.WriteString(unitMarker + "\n")
	b.WriteString(`# It keeps the pi-actors kernel of one agent root running. Runs do not
# depend on it: each has its own supervisor process and survives the
# kernel; KillMode=process keeps them alive when this unit stops or
# restarts (they live in its cgroup once it started them).
[Unit]
Description=pi-actors kernel
Documentation=https://github.com/pi-actors/pi-actors/blob/main/docs/cli.md
# Never give up: another kernel serving the agent root (started by a CLI
# call) makes this one exit 75 until that one ends.
StartLimitIntervalSec=0

[Service]
Type=simple
`)
	fmt.Fprintf(&b, "ExecStart=%s\n", unitQuote(kernel))
	fmt.Fprintf(&b, "Environment=%s\n", unitQuote("PI_CODING_AGENT_DIR="+agentDir))
	fmt.Fprintf(&b, "Environment=%s\n", unitQuote("PI_ACTORS_BIN="+cli))
	b.WriteString(`KillMode=process
Restart=always
RestartSec=5

[Install]
WantedBy=default.target
`)
	return b.String()
}

// systemdNext are the commands install systemd leaves to the user.
var systemdNext = []string{"systemctl --user daemon-reload", "systemctl --user enable --now pi-actors"}

func installSystemd(a *app, r *request) int {
	dir, err := unitDir()
	if err != nil {
		return a.fail(r, err)
	}
	cfg, cerr := a.config()
	if cerr != nil {
		// The unit's kernel would exit 65 at every start, restarted in a
		// loop: the file is fixed first.
		return a.fail(r, cerr)
	}
	kernel, err := verbs.KernelBinary()
	if cfg.Cluster.Enabled() {
		kernel, err = verbs.ClusterBinary() // [cluster]: the kernel with its cluster side
	}
	if err != nil {
		return a.fail(r, err)
	}
	if abs, err := filepath.Abs(kernel); err == nil {
		kernel = abs
	}
	cli, err := os.Executable()
	if err != nil {
		return a.fail(r, fmt.Errorf("install systemd: find this binary: %w", err))
	}
	path := filepath.Join(dir, unitName)
	want := []byte(unitText(a.agentDir, kernel, cli))
	old, err := os.ReadFile(path)
	switch {
	case err == nil && !bytes.HasPrefix(old, []byte(unitMarker)):
		return a.fail(r, foreignUnit(path))
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return a.fail(r, fmt.Errorf("install systemd: %w", err)) // err names the path
	}
	changed := !bytes.Equal(old, want)
	if changed {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return a.fail(r, fmt.Errorf("install systemd: %w", err))
		}
		if err := fsutil.WriteFile(path, want, 0o644); err != nil {
			return a.fail(r, fmt.Errorf("install systemd: %w", err))
		}
	}
	text := fmt.Sprintf("installed=systemd unit=%s changed=%t agent_dir=%s next=%s", path, changed, a.agentDir,
		strings.ReplaceAll(strings.Join(systemdNext, "_&&_"), " ", "_"))
	return a.ok(r, text, map[string]any{"installed": "systemd", "unit": path, "changed": changed, "agent_dir": a.agentDir,
		"kernel": kernel, "next_actions": systemdNext})
}

func uninstallSystemd(a *app, r *request) int {
	dir, err := unitDir()
	if err != nil {
		return a.fail(r, err)
	}
	path := filepath.Join(dir, unitName)
	old, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return a.ok(r, fmt.Sprintf("uninstalled=systemd unit=%s existed=false", path), map[string]any{"uninstalled": "systemd", "unit": path, "existed": false})
	}
	if err != nil {
		return a.fail(r, fmt.Errorf("uninstall systemd: %w", err))
	}
	if !bytes.HasPrefix(old, []byte(unitMarker)) {
		return a.fail(r, foreignUnit(path))
	}
	// What `systemctl --user disable` removes: the unit's enablement link.
	wants := filepath.Join(dir, "default.target.wants", unitName)
	if target, err := os.Readlink(wants); err == nil && (target == path || filepath.Base(target) == unitName) {
		os.Remove(wants)
	}
	if err := os.Remove(path); err != nil {
		return a.fail(r, fmt.Errorf("uninstall systemd: %w", err))
	}
	next := []string{"systemctl --user daemon-reload", "systemctl --user stop pi-actors"}
	text := fmt.Sprintf("uninstalled=systemd unit=%s existed=true next=%s (runs keep running either way)", path,
		strings.ReplaceAll(strings.Join(next, "_&&_"), " ", "_"))
	return a.ok(r, text, map[string]any{"uninstalled": "systemd", "unit": path, "existed": true, "next_actions": next})
}

func foreignUnit(path string) error {
	return &cliError{Exit: verbs.ExitTempFail, Code: "conflict", Message: path + " was not written by pi-actors install systemd",
		Hint: "move it away by hand if it should be replaced"}
}
