package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	piext "github.com/pi-actors/pi-actors/extensions/pi"
	"github.com/pi-actors/pi-actors/internal/config"
	"github.com/pi-actors/pi-actors/internal/fsutil"
	"github.com/pi-actors/pi-actors/verbs"
)

// installTarget installs (or removes) one integration.
type installTarget struct {
	summary   string
	install   func(a *app, r *request) int
	uninstall func(a *app, r *request) int
}

// installTargets are what `install` and `uninstall` know (the help lists
// them: every target is here, none added later in an init).
var installTargets = map[string]*installTarget{
	"systemd": systemdTarget,
	"mcp":     {summary: "print (or with --write merge into the client's config) the MCP server entry: --client=claude|cursor|generic [--config=PATH]", install: installMCP},
	"pi":      {summary: "write the pi extension into <agent>/extensions/pi-actors/ (uninstall removes it)", install: installPi, uninstall: uninstallPi},
}

func init() {
	localVerbs = append(localVerbs,
		&verb{name: "install", summary: "set up an integration: mcp (an MCP client's config), pi (the pi extension), systemd (a user unit keeping the kernel up)",
			usageFn: func() string { return installUsage("install") }, flags: []string{"--write", "--client=", "--config="}, run: runInstall(true)},
		&verb{name: "uninstall", summary: "remove an integration set up by install",
			usageFn: func() string { return installUsage("uninstall") }, run: runInstall(false)},
	)
}

func installUsage(verb string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "pi-actors %s <target> [flags]\n\ntargets:\n", verb)
	names := make([]string, 0, len(installTargets))
	for n := range installTargets {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "  %-8s %s\n", n, installTargets[n].summary)
	}
	b.WriteString("\nExamples:\n  pi-actors install mcp --client=claude --write\n  pi-actors install pi\n  pi-actors uninstall pi\n  pi-actors install systemd && systemctl --user daemon-reload && systemctl --user enable --now pi-actors")
	return b.String()
}

func runInstall(install bool) func(context.Context, *app, *request) int {
	return func(_ context.Context, a *app, r *request) int {
		verb := map[bool]string{true: "install", false: "uninstall"}[install]
		if len(r.words) != 1 {
			return a.fail(r, usagef("%s takes one target: %s", verb, strings.Join(targetNames(install), ", ")))
		}
		t := installTargets[r.words[0]]
		if t == nil || (!install && t.uninstall == nil) {
			return a.fail(r, usagef("%s: unknown target %q (targets: %s)", verb, r.words[0], strings.Join(targetNames(install), ", ")))
		}
		if _, err := a.config(); err != nil && !errors.Is(err, config.ErrInvalid) {
			return a.fail(r, err)
		}
		if a.agentDir == "" {
			dir, err := config.AgentDir()
			if err != nil {
				return a.fail(r, err)
			}
			a.agentDir = dir
		}
		if install {
			return t.install(a, r)
		}
		return t.uninstall(a, r)
	}
}

func targetNames(install bool) []string {
	var names []string
	for n, t := range installTargets {
		if install || t.uninstall != nil {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

func installPi(a *app, r *request) int {
	dir, err := piext.Install(a.agentDir)
	if err != nil {
		return a.fail(r, installError(err, "move it away by hand if it should be replaced"))
	}
	return a.ok(r, fmt.Sprintf("installed=pi dir=%s next=restart_pi_(it_loads_extensions_at_start)", dir), map[string]any{"installed": "pi", "dir": dir})
}

func uninstallPi(a *app, r *request) int {
	dir := piext.Dir(a.agentDir)
	removed, err := piext.Uninstall(a.agentDir)
	if err != nil {
		return a.fail(r, installError(err, "remove it by hand if it should go"))
	}
	if !removed {
		return a.ok(r, "uninstalled=pi dir="+dir+" removed=false (nothing was installed there)", map[string]any{"uninstalled": "pi", "dir": dir, "removed": false})
	}
	return a.ok(r, "uninstalled=pi dir="+dir+" removed=true", map[string]any{"uninstalled": "pi", "dir": dir, "removed": true})
}

// installError is err as the CLI reports it; fix says what to do with a
// directory install did not write.
func installError(err error, fix string) error {
	if errors.Is(err, piext.ErrForeign) {
		return &cliError{Exit: verbs.ExitTempFail, Code: "conflict", Message: err.Error(),
			Hint: "that directory was not written by pi-actors install: " + fix}
	}
	return err
}

// mcpClients are the MCP clients install mcp knows, with the config file
// --write merges into (relative to $HOME).
var mcpClients = map[string]string{
	"claude":  ".claude.json",
	"cursor":  filepath.Join(".cursor", "mcp.json"),
	"generic": "",
}

func installMCP(a *app, r *request) int {
	client, _ := r.params["client"].(string)
	if client == "" {
		client = "generic"
	}
	rel, known := mcpClients[client]
	if !known {
		return a.fail(r, usagef("install mcp: --client must be claude, cursor or generic (got %q)", client))
	}
	self, err := os.Executable()
	if err != nil {
		return a.fail(r, fmt.Errorf("install mcp: find this binary: %w", err))
	}
	entry := map[string]any{"command": self, "args": []string{"mcp"}, "env": map[string]string{"PI_CODING_AGENT_DIR": a.agentDir}}
	if client == "claude" {
		entry["type"] = "stdio"
	}
	path, _ := r.params["config"].(string)
	if path == "" && rel != "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return a.fail(r, err)
		}
		path = filepath.Join(home, rel)
	}
	snippet := map[string]any{"mcpServers": map[string]any{"pi-actors": entry}}
	if !r.flags["--write"] {
		b, _ := json.MarshalIndent(snippet, "", "  ")
		text := string(b)
		if path != "" {
			text += fmt.Sprintf("\n# merge into %s, or run: pi-actors install mcp --client=%s --write", path, client)
		}
		return a.ok(r, text, map[string]any{"client": client, "config": path, "entry": snippet})
	}
	if path == "" {
		return a.fail(r, usagef("install mcp --client=generic --write needs --config=PATH (the client's config file)"))
	}
	if err := mergeMCPConfig(path, entry); err != nil {
		return a.fail(r, err)
	}
	return a.ok(r, fmt.Sprintf("installed=mcp client=%s config=%s server=pi-actors", client, path), map[string]any{"installed": "mcp", "client": client, "config": path})
}

// mergeMCPConfig sets mcpServers["pi-actors"] in a client's JSON config,
// keeping everything else; the file is replaced atomically, and a file
// that is not a JSON object is refused untouched.
func mergeMCPConfig(path string, entry map[string]any) error {
	doc := map[string]any{}
	data, err := os.ReadFile(path)
	switch {
	case err == nil && len(strings.TrimSpace(string(data))) > 0:
		if err := json.Unmarshal(data, &doc); err != nil {
			return verbs.Invalidf("install mcp: %s is not a JSON object (%v); fix or move it, then run again", path, err)
		}
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("install mcp: read %s: %w", path, err)
	}
	servers, _ := doc["mcpServers"].(map[string]any)
	if servers == nil {
		if _, exists := doc["mcpServers"]; exists {
			return verbs.Invalidf("install mcp: %s: mcpServers is not an object; fix it, then run again", path)
		}
		servers = map[string]any{}
	}
	servers["pi-actors"] = entry
	doc["mcpServers"] = servers
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("install mcp: %w", err)
	}
	b, err := fsutil.MarshalIndent(doc)
	if err != nil {
		return err
	}
	return fsutil.WriteFile(path, b, 0o600)
}
