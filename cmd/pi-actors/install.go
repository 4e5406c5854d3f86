package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	piext "github.com/pi-actors/pi-actors/extensions/pi"
	"github.com/pi-actors/pi-actors/internal/config"
	"github.com/pi-actors/pi-actors/internal/fsutil"
	"github.com/pi-actors/pi-actors/verbs"
)

// installTarget installs (or removes) one integration.
type installTarget struct {
	summary string
	// params are the parameters the target takes (--client= is client);
	// write: install takes --write.
	params    []string
	write     bool
	install   func(a *app, r *request) int
	uninstall func(a *app, r *request) int
}

// installTargets are what `install` and `uninstall` know (the help lists
// them: every target is here, none added later in an init).
var installTargets = map[string]*installTarget{
	"systemd": systemdTarget,
	"mcp":     {summary: "print (or with --write merge into the client's config) the MCP server entry: --client=claude|cursor|generic [--config=PATH] (uninstall takes it out of the config)", params: []string{"client", "config"}, write: true, install: installMCP, uninstall: uninstallMCP},
	"pi":      {summary: "write the pi extension into <agent>/extensions/pi-actors/ (uninstall removes it)", install: installPi, uninstall: uninstallPi},
}

func init() {
	localVerbs = append(localVerbs,
		&verb{name: "install", summary: "set up an integration: mcp (an MCP client's config), pi (the pi extension), systemd (a user unit keeping the kernel up)",
			usageFn: func() string { return installUsage("install") }, flags: []string{"--write", "--client=", "--config="}, run: runInstall(true)},
		&verb{name: "uninstall", summary: "remove an integration set up by install",
			usageFn: func() string { return installUsage("uninstall") }, flags: []string{"--client=", "--config="}, run: runInstall(false)},
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
		if err := t.check(verb, r.words[0], r); err != nil {
			return a.fail(r, err)
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

// check refuses a parameter or flag the target does not take (install pi
// --client=claude would otherwise be taken as meant).
func (t *installTarget) check(verb, name string, r *request) error {
	for _, k := range r.order {
		if !slices.Contains(t.params, k) {
			if len(t.params) == 0 {
				return usagef("%s %s takes no parameters (got %s)", verb, name, k)
			}
			return usagef("%s %s: unknown parameter %s (it takes --%s)", verb, name, k, strings.Join(t.params, "=, --")+"=")
		}
	}
	if r.flags["--write"] && (verb != "install" || !t.write) {
		return usagef("%s %s does not take --write (only install mcp does)", verb, name)
	}
	return nil
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

// mcpConfig is the client install mcp is for and its config file (""
// for generic without --config).
func mcpConfig(verb string, r *request) (client, path string, err error) {
	client, _ = r.params["client"].(string)
	if client == "" {
		client = "generic"
	}
	rel, known := mcpClients[client]
	if !known {
		return "", "", usagef("%s mcp: --client must be claude, cursor or generic (got %q)", verb, client)
	}
	path, _ = r.params["config"].(string)
	if path == "" && rel != "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", "", err
		}
		path = filepath.Join(home, rel)
	}
	return client, path, nil
}

func installMCP(a *app, r *request) int {
	client, path, err := mcpConfig("install", r)
	if err != nil {
		return a.fail(r, err)
	}
	self, err := os.Executable()
	if err != nil {
		return a.fail(r, fmt.Errorf("install mcp: find this binary: %w", err))
	}
	entry := map[string]any{"command": self, "args": []string{"mcp"}, "env": map[string]string{"PI_CODING_AGENT_DIR": a.agentDir}}
	if client == "claude" {
		entry["type"] = "stdio"
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
	if _, err := editMCPConfig("install", path, func(servers map[string]any) bool { servers["pi-actors"] = entry; return true }); err != nil {
		return a.fail(r, err)
	}
	return a.ok(r, fmt.Sprintf("installed=mcp client=%s config=%s server=pi-actors", client, path), map[string]any{"installed": "mcp", "client": client, "config": path})
}

// uninstallMCP takes the pi-actors entry out of a client's config.
func uninstallMCP(a *app, r *request) int {
	client, path, err := mcpConfig("uninstall", r)
	if err != nil {
		return a.fail(r, err)
	}
	if path == "" {
		return a.fail(r, usagef("uninstall mcp --client=generic needs --config=PATH (the client's config file)"))
	}
	removed, err := editMCPConfig("uninstall", path, func(servers map[string]any) bool {
		_, ok := servers["pi-actors"]
		delete(servers, "pi-actors")
		return ok
	})
	if err != nil {
		return a.fail(r, err)
	}
	text := fmt.Sprintf("uninstalled=mcp client=%s config=%s removed=%t", client, path, removed)
	if !removed {
		text += " (it has no pi-actors entry)"
	}
	return a.ok(r, text, map[string]any{"uninstalled": "mcp", "client": client, "config": path, "removed": removed})
}

// editMCPConfig changes a client's JSON config in place through edit,
// keeping everything else as it was: numbers as written (a large id is
// not rounded), the file's mode, and a symbolic link (the file it leads
// to is replaced, atomically). A file that is not a JSON object is
// refused untouched. edit reports whether it changed anything; nothing
// is written when it did not.
func editMCPConfig(verb, path string, edit func(servers map[string]any) bool) (changed bool, err error) {
	doc := map[string]any{}
	perm := os.FileMode(0o600)
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		if st, err := os.Stat(path); err == nil {
			perm = st.Mode().Perm()
		}
		if len(strings.TrimSpace(string(data))) > 0 {
			dec := json.NewDecoder(strings.NewReader(string(data)))
			dec.UseNumber()
			if err := dec.Decode(&doc); err != nil || dec.More() {
				if err == nil {
					err = errors.New("more than one JSON value")
				}
				return false, configError(verb, path, fmt.Sprintf("is not a JSON object (%v)", err))
			}
		}
	case !errors.Is(err, os.ErrNotExist):
		return false, fmt.Errorf("%s mcp: %w", verb, err) // err names the path
	}
	servers, _ := doc["mcpServers"].(map[string]any)
	if servers == nil {
		if _, exists := doc["mcpServers"]; exists {
			return false, configError(verb, path, "has an mcpServers that is not an object")
		}
		servers = map[string]any{}
	}
	if !edit(servers) {
		return false, nil
	}
	doc["mcpServers"] = servers
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return false, fmt.Errorf("%s mcp: %w", verb, err)
	}
	b, err := fsutil.MarshalIndent(doc)
	if err != nil {
		return false, err
	}
	return true, fsutil.WriteFile(path, b, perm)
}

// configError is a client config install mcp cannot edit.
func configError(verb, path, what string) error {
	return &cliError{Exit: verbs.ExitDataErr, Code: "invalid_data", Message: fmt.Sprintf("%s mcp: %s %s; it was left untouched", verb, path, what),
		Hint: "fix the file (or move it away), then run " + verb + " mcp again"}
}
