package recipes

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// agentWith returns an agent dir whose recipes root holds files.
func agentWith(t testing.TB, files map[string]string) (agent, root string) {
	t.Helper()
	agent = t.TempDir()
	root = UserRoot(agent)
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		writeFile(t, filepath.Join(root, name), body)
	}
	return agent, root
}

func discover(t testing.TB, agent string, adhoc ...string) *Registry {
	t.Helper()
	g, err := Discover(agent, adhoc...)
	if err != nil {
		t.Fatalf("discover: %v", err)
	}
	return g
}

func TestDiscoverPackagedOnly(t *testing.T) {
	g := discover(t, filepath.Join(t.TempDir(), "no-agent-yet"))
	for _, id := range []string{"subagent-prompt", "utility-git-log", "utility-git-status"} {
		e := g.Active[id]
		if e == nil {
			t.Fatalf("packaged %s not discovered", id)
		}
		if e.Layer != LayerPackaged || e.Path != "pkg:"+id+".json" || e.Tool() || e.Invalid() {
			t.Errorf("%s: layer=%v path=%s tool=%v invalid=%v", id, e.Layer, e.Path, e.Tool(), e.Invalid())
		}
	}
	if len(g.Diagnostics) != 0 {
		t.Errorf("a clean library has no diagnostics: %q", g.Diagnostics)
	}
}

func TestDiscoverLayerPriority(t *testing.T) {
	adhocDir := t.TempDir()
	adhoc := writeFile(t, filepath.Join(adhocDir, "utility-git-log.json"), `{"description": "adhoc", "template": "echo adhoc"}`)
	adhocOnly := writeFile(t, filepath.Join(adhocDir, "utility-git-status.json"), `{"description": "adhoc status", "template": "echo adhoc"}`)

	// packaged < ad hoc
	agent, root := agentWith(t, nil)
	g := discover(t, agent, adhoc, adhocOnly)
	e := g.Active["utility-git-log"]
	if e.Layer != LayerAdHoc || e.Path != adhoc || e.Recipe.Description != "adhoc" {
		t.Errorf("ad hoc must beat packaged: %+v", e)
	}
	if e.Tool() {
		t.Errorf("ad hoc recipes are components, not tools")
	}
	if len(e.Shadows) != 1 || e.Shadows[0] != "pkg:utility-git-log.json" {
		t.Errorf("shadows = %q", e.Shadows)
	}

	// ad hoc < user
	user := writeFile(t, filepath.Join(root, "utility-git-log.json"), `{"description": "user", "template": "echo user"}`)
	g = discover(t, agent, adhoc, adhocOnly)
	e = g.Active["utility-git-log"]
	if e.Layer != LayerUser || e.Path != user || !e.Tool() {
		t.Errorf("user must beat ad hoc: %+v", e)
	}
	if strings.Join(e.Shadows, ",") != adhoc+",pkg:utility-git-log.json" {
		t.Errorf("shadows = %q, want ad hoc then packaged", e.Shadows)
	}
	var shadowed []*Entry
	for _, x := range g.Entries {
		if x.ID == "utility-git-log" && !x.Active {
			shadowed = append(shadowed, x)
			if x.ShadowedBy != user {
				t.Errorf("%s shadowed by %q, want %s", x.Path, x.ShadowedBy, user)
			}
		}
	}
	if len(shadowed) != 2 {
		t.Errorf("want 2 shadowed entries, got %d", len(shadowed))
	}
	if !hasLine(g.Diagnostics, "Recipe utility-git-log shadows 2 lower-priority recipe(s)") {
		t.Errorf("diagnostics = %q", g.Diagnostics)
	}
	if g.Active["utility-git-status"].Path != adhocOnly {
		t.Errorf("ad hoc status should still win over packaged")
	}
	// Only same-id files compete.
	if g.Active["utility-jsonl-tail"].Layer != LayerPackaged {
		t.Errorf("unrelated packaged recipes stay active")
	}
}

func TestDiscoverJSONBeatsMarkdownInOneLayer(t *testing.T) {
	agent, root := agentWith(t, map[string]string{
		"dup.json": `{"description": "json", "template": "echo json"}`,
		"dup.md":   "---\ndescription: md\ntemplate: echo md\n---\n",
	})
	g := discover(t, agent)
	e := g.Active["dup"]
	if e == nil || e.Path != filepath.Join(root, "dup.json") || e.Recipe.Description != "json" {
		t.Fatalf("winner = %+v", e)
	}
	md, js := filepath.Join(root, "dup.md"), filepath.Join(root, "dup.json")
	want := "Markdown recipe " + md + " is shadowed by JSON recipe " + js
	if !hasLine(g.Diagnostics, want) {
		t.Errorf("diagnostics %q miss %q", g.Diagnostics, want)
	}
	if len(e.Shadows) != 1 || e.Shadows[0] != md {
		t.Errorf("shadows = %q", e.Shadows)
	}
}

func TestDiscoverMarkdownAloneIsActive(t *testing.T) {
	agent, _ := agentWith(t, map[string]string{"only.md": "---\ndescription: md\n---\n```template\necho {x}\n```\n"})
	g := discover(t, agent)
	if e := g.Active["only"]; e == nil || !e.Tool() || e.Recipe.Format != "md" {
		t.Errorf("md recipe should be an active tool: %+v", e)
	}
}

// BugDiscoverTieBreakByPath: PARITY A2 "Shadowing": per id the winner is
// sorted by source priority, then path (with .md compared as .json), then
// JSON before MD. Two ad hoc files with one id in different directories
// are decided by path, whatever their format.
func TestBugDiscoverTieBreakByPath(t *testing.T) {
	base := t.TempDir()
	md := writeFile(t, filepath.Join(base, "a", "same.md"), "---\ntemplate: echo a\n---\n")
	js := writeFile(t, filepath.Join(base, "b", "same.json"), `{"template": "echo b"}`)
	g := discover(t, t.TempDir(), js, md)
	if got := g.Active["same"].Path; got != md {
		t.Errorf("observed winner %s; expected %s (path order before format, PARITY A2 Shadowing)", got, md)
	}
}

func TestDiscoverInvalidWinnerBlocksFallback(t *testing.T) {
	agent, root := agentWith(t, map[string]string{"utility-git-log.json": `{"description": "broken", "template": `})
	g := discover(t, agent)
	e := g.Active["utility-git-log"]
	if e == nil || !e.Invalid() || e.Layer != LayerUser || e.Tool() {
		t.Fatalf("the invalid user file must win its id: %+v", e)
	}
	path := filepath.Join(root, "utility-git-log.json")
	for _, want := range []string{
		"Recipe utility-git-log is invalid and blocks lower-priority recipes",
		"Invalid recipe: " + path + ": ",
		"Recipe utility-git-log shadows 1 lower-priority recipe(s)",
	} {
		if !hasLine(g.Diagnostics, want) {
			t.Errorf("diagnostics %q miss %q", g.Diagnostics, want)
		}
	}
	_, err := g.Lookup("utility-git-log")
	var le *LaunchError
	if !errors.As(err, &le) {
		t.Fatalf("Lookup err = %v, want a *LaunchError", err)
	}
	if le.Reason != "shadowed_invalid" || le.ActivePath != path || le.BlockedFallback != "pkg:utility-git-log.json" {
		t.Errorf("launch error = %+v", le)
	}
	want := " reason=shadowed_invalid active_path=" + path + " blocked_fallback=pkg:utility-git-log.json hint=inspect_recipes_doctor"
	if !strings.HasSuffix(err.Error(), want) {
		t.Errorf("message %q does not end with %q", err, want)
	}
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("the original error must stay reachable: %v", err)
	}
}

func TestDiscoverDisabledWinnerBlocksFallback(t *testing.T) {
	agent, root := agentWith(t, map[string]string{"utility-git-status.json": `{"disabled": true, "template": "echo off"}`})
	g := discover(t, agent)
	e := g.Active["utility-git-status"]
	if e == nil || !e.Disabled() || e.Tool() || e.Invalid() {
		t.Fatalf("the disabled file must win its id: %+v", e)
	}
	if !hasLine(g.Diagnostics, "Recipe utility-git-status is disabled and blocks lower-priority recipes") {
		t.Errorf("diagnostics = %q", g.Diagnostics)
	}
	_, err := g.Lookup("utility-git-status")
	var le *LaunchError
	if !errors.As(err, &le) {
		t.Fatalf("Lookup err = %v", err)
	}
	path := filepath.Join(root, "utility-git-status.json")
	if le.Reason != "shadowed_disabled" || le.ActivePath != path || le.BlockedFallback != "pkg:utility-git-status.json" {
		t.Errorf("launch error = %+v", le)
	}
	if !errors.Is(err, ErrDisabled) || !strings.Contains(err.Error(), "disabled: "+path) {
		t.Errorf("err = %v", err)
	}
	if !strings.HasSuffix(err.Error(), "reason=shadowed_disabled active_path="+path+" blocked_fallback=pkg:utility-git-status.json hint=inspect_recipes_doctor") {
		t.Errorf("err = %v", err)
	}
}

func TestDiscoverInvalidOrDisabledWithoutShadows(t *testing.T) {
	agent, _ := agentWith(t, map[string]string{
		"broken.json": `{"no": "template"}`,
		"off.json":    `{"disabled": true, "template": "echo"}`,
	})
	g := discover(t, agent)
	for id, reason := range map[string]string{"broken": "invalid", "off": "disabled"} {
		_, err := g.Lookup(id)
		var le *LaunchError
		if !errors.As(err, &le) || le.Reason != reason || le.BlockedFallback != "" {
			t.Errorf("%s: %v (%+v)", id, err, le)
			continue
		}
		if strings.Contains(err.Error(), "reason=") || strings.Contains(err.Error(), "blocked_fallback") {
			t.Errorf("%s: no fallback is blocked, the message must not claim one: %v", id, err)
		}
	}
	if hasLine(g.Diagnostics, "blocks lower-priority") {
		t.Errorf("nothing is blocked: %q", g.Diagnostics)
	}
	if !hasLine(g.Diagnostics, "recipe must define template") {
		t.Errorf("diagnostics %q miss the invalid reason", g.Diagnostics)
	}
}

func TestDiscoverLookupFallsBackToPackaged(t *testing.T) {
	agent, root := agentWith(t, map[string]string{"mine.json": `{"template": "echo mine"}`})
	g := discover(t, agent)
	e, err := g.Lookup("utility-git-log")
	if err != nil || e.Path != "pkg:utility-git-log.json" {
		t.Errorf("bare name must fall back to packaged: %v %+v", err, e)
	}
	e, err = g.Lookup("mine")
	if err != nil || e.Path != filepath.Join(root, "mine.json") {
		t.Errorf("user recipe: %v %+v", err, e)
	}
	_, err = g.Lookup("nope")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "nope") {
		t.Errorf("missing: %v", err)
	}
}

func TestDiscoverDraftsNeverActive(t *testing.T) {
	agent, root := agentWith(t, map[string]string{
		"drafts/captured.json":        `{"async": true, "description": "Draft recipe captured from spawn run run-42", "template": ["echo a", "echo b"]}`,
		"drafts/broken.md":            "no frontmatter",
		"drafts/utility-git-log.json": `{"template": "echo draft"}`,
	})
	g := discover(t, agent)
	if _, ok := g.Active["captured"]; ok {
		t.Errorf("a draft must not be listed as active")
	}
	if g.Active["utility-git-log"].Layer != LayerPackaged {
		t.Errorf("a draft must not shadow anything")
	}
	for _, e := range g.Entries {
		if strings.Contains(e.Path, "drafts") {
			t.Errorf("draft in entries: %s", e.Path)
		}
	}
	drafts := g.ListDrafts()
	if len(drafts) != 3 {
		t.Fatalf("drafts = %d, want 3", len(drafts))
	}
	byID := map[string]*Draft{}
	for _, d := range drafts {
		byID[d.ID] = d
	}
	c := byID["captured"]
	if c == nil || !c.Valid || !c.Async || c.SourceRun != "run-42" || c.Path != filepath.Join(root, "drafts", "captured.json") || len(c.SHA256) != 64 || c.Size == 0 {
		t.Errorf("captured draft = %+v", c)
	}
	if c != nil && c.TemplatePreview != `["echo a","echo b"]` {
		t.Errorf("preview = %q", c.TemplatePreview)
	}
	if b := byID["broken"]; b == nil || b.Valid || len(b.Diagnostics) == 0 {
		t.Errorf("broken draft = %+v", b)
	}
}

func TestDiscoverDraftPreviewTruncated(t *testing.T) {
	long := strings.Repeat("a", 200)
	agent, _ := agentWith(t, map[string]string{"drafts/long.json": `{"template": "echo ` + long + `"}`})
	g := discover(t, agent)
	p := g.ListDrafts()[0].TemplatePreview
	if len(p) != 120 || !strings.HasSuffix(p, "...") || !strings.HasPrefix(p, "echo aaa") {
		t.Errorf("preview %q (len %d): want the first 117 chars + ...", p, len(p))
	}
}

func TestDiscoverRootPermissionDiagnostics(t *testing.T) {
	for _, c := range []struct {
		mode        os.FileMode
		world, grou bool
	}{{0o777, true, true}, {0o775, false, true}, {0o757, true, false}, {0o755, false, false}} {
		agent, root := agentWith(t, map[string]string{"x.json": `{"template": "echo"}`})
		if err := os.Chmod(root, c.mode); err != nil {
			t.Fatal(err)
		}
		g := discover(t, agent)
		if got := hasLine(g.Diagnostics, "Recipe root is world-writable; review permissions: "+root); got != c.world {
			t.Errorf("mode %o: world-writable diagnostic = %v, want %v (%q)", c.mode, got, c.world, g.Diagnostics)
		}
		if got := hasLine(g.Diagnostics, "Recipe root is group-writable; review ownership and permissions: "+root); got != c.grou {
			t.Errorf("mode %o: group-writable diagnostic = %v, want %v", c.mode, got, c.grou)
		}
		os.Chmod(root, 0o755)
	}
}

func TestDiscoverNonRecursive(t *testing.T) {
	agent, root := agentWith(t, map[string]string{
		"top.json":           `{"template": "echo top"}`,
		"sub/nested.json":    `{"template": "echo nested"}`,
		"sub/deeper/x.md":    "---\ntemplate: echo x\n---\n",
		"notes.txt":          "not a recipe",
		"data.yaml":          "template: echo",
		"archive/old.json":   `{"template": "echo old"}`,
		"README":             "hello",
		"utility-jsonl-tail": `{"template": "echo no extension"}`,
		"linked-dir.json/x":  "a directory named like a recipe",
	})
	g := discover(t, agent)
	for _, e := range g.Entries {
		if e.Layer == LayerUser && e.Path != filepath.Join(root, "top.json") {
			t.Errorf("unexpected user entry %s", e.Path)
		}
	}
	if g.Active["top"] == nil {
		t.Errorf("top.json not found")
	}
	if g.Active["utility-jsonl-tail"].Layer != LayerPackaged {
		t.Errorf("a file without extension must not shadow")
	}
}

func TestDiscoverEntryMetadata(t *testing.T) {
	body := `{"template": "echo meta"}`
	agent, _ := agentWith(t, map[string]string{"meta.json": body})
	g := discover(t, agent)
	e := g.Active["meta"]
	if e.Size != int64(len(body)) || len(e.SHA256()) != 64 {
		t.Errorf("size=%d sha=%q", e.Size, e.SHA256())
	}
	sum := sha256.Sum256([]byte(body))
	if e.SHA256() != hex.EncodeToString(sum[:]) {
		t.Errorf("sha256 = %s", e.SHA256())
	}
	// Entries are sorted by id, winner first.
	for i := 1; i < len(g.Entries); i++ {
		if g.Entries[i-1].ID > g.Entries[i].ID {
			t.Errorf("entries not sorted by id: %s before %s", g.Entries[i-1].ID, g.Entries[i].ID)
		}
	}
}

func TestDiscoverUnreadableRootIsError(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads any directory")
	}
	agent, root := agentWith(t, map[string]string{"x.json": `{"template": "echo"}`})
	os.Chmod(root, 0o000)
	defer os.Chmod(root, 0o755)
	if _, err := Discover(agent); err == nil {
		t.Errorf("an unreadable recipe root must be an error")
	}
}

// BugDiscoverUnresolvableWinnerBlocksFallback: PARITY A2 "Template
// validity" and "Invalid blocks fallback": a recipe whose template is
// invalid (an item that is not a node, an object without template) or
// whose imports fail (missing, cyclic) is invalid ("Failed to load recipe
// …" for thrown errors), still wins its id, and a bare-name launch explains
// reason=shadowed_invalid with the blocked fallback.
func TestBugDiscoverUnresolvableWinnerBlocksFallback(t *testing.T) {
	for name, body := range map[string]string{
		"bad item":       `{"template": ["echo ok", 3]}`,
		"no template":    `{"template": {"label": "nothing to run"}}`,
		"missing import": `{"imports": {"g": "no-such-recipe"}, "template": {"name": "g"}}`,
		"cycle":          `{"imports": {"me": "utility-git-log"}, "template": {"name": "me"}}`,
	} {
		agent, root := agentWith(t, map[string]string{"utility-git-log.json": body})
		g := discover(t, agent)
		e := g.Active["utility-git-log"]
		if !e.Invalid() || e.Tool() {
			t.Errorf("%s: observed invalid=%v tool=%v; expected an invalid, non-tool winner", name, e.Invalid(), e.Tool())
		}
		_, err := g.Lookup("utility-git-log")
		var le *LaunchError
		if !errors.As(err, &le) || le.Reason != "shadowed_invalid" || le.ActivePath != filepath.Join(root, "utility-git-log.json") || le.BlockedFallback != "pkg:utility-git-log.json" {
			t.Errorf("%s: observed Lookup err=%v; expected a shadowed_invalid LaunchError blocking pkg:utility-git-log.json", name, err)
		}
	}
}
