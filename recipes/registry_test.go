package recipes

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// newRegistrar returns a Registrar over a fresh agent root (no recipes
// directory yet), with its own home and working directory.
func newRegistrar(t testing.TB) *Registrar {
	t.Helper()
	base := t.TempDir()
	rg := &Registrar{AgentDir: filepath.Join(base, "agent"), Home: filepath.Join(base, "home"), Cwd: filepath.Join(base, "cwd")}
	for _, d := range []string{rg.Home, rg.Cwd} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return rg
}

// regPut writes a file (creating its directory) and returns its path.
func regPut(t testing.TB, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// register parses params and registers them.
func register(t testing.TB, rg *Registrar, params map[string]any) (*Registered, error) {
	t.Helper()
	req, err := ParseRegistration(params)
	if err != nil {
		return nil, err
	}
	return rg.Register(req)
}

func mustRegister(t testing.TB, rg *Registrar, params map[string]any) *Registered {
	t.Helper()
	out, err := register(t, rg, params)
	if err != nil {
		t.Fatalf("register %v: %v", params, err)
	}
	return out
}

func readText(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// wantRegErr checks err is a *RegisterError for field wrapping kind.
func wantRegErr(t testing.TB, err error, field string, kind error, parts ...string) {
	t.Helper()
	var re *RegisterError
	if !errors.As(err, &re) {
		t.Fatalf("want a *RegisterError for %s, got %v", field, err)
	}
	if re.Field != field {
		t.Errorf("field = %q, want %q (%v)", re.Field, field, err)
	}
	if !errors.Is(err, kind) {
		t.Errorf("error %q does not wrap %v", err, kind)
	}
	if re.Hint == "" {
		t.Errorf("error %q has no hint", err)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not mention %q", err, p)
		}
	}
}

func TestNormalizeName(t *testing.T) {
	for in, want := range map[string]string{
		"My Tool!":                    "my_tool",
		"123abc":                      "tool_123abc",
		"docs-review":                 "docs_review",
		"  Docs--Review__2  ":         "docs_review_2",
		"__x__":                       "x",
		"a.b/c":                       "a_b_c",
		"Ünïcode":                     "n_code",
		"!!!":                         "",
		"":                            "",
		strings.Repeat("ab", 40):      strings.Repeat("ab", 32),
		"9" + strings.Repeat("x", 70): "tool_9" + strings.Repeat("x", 58),
	} {
		if got := NormalizeName(in); got != want {
			t.Errorf("NormalizeName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestToolNameRefusesEmptyAndReserved(t *testing.T) {
	for _, n := range []string{"", "  ", "!!", "---"} {
		_, err := ToolName(n)
		wantRegErr(t, err, "name", ErrInvalid, "invalid tool name")
	}
	for _, n := range []string{"read", "write", "edit", "bash", "find", "grep", "ls", "register_tool", "message", "spawn", "inspect", "call", "exec", "pi-actors", "PI_Actors", " Bash "} {
		_, err := ToolName(n)
		wantRegErr(t, err, "name", ErrInvalid, "reserved tool name")
	}
	if n, err := ToolName("Docs Review"); err != nil || n != "docs_review" {
		t.Errorf("ToolName(Docs Review) = %q, %v", n, err)
	}
}

func TestParseRegistration(t *testing.T) {
	req, err := ParseRegistration(map[string]any{
		"name": " x ", "description": "d", "template": nil, "args": "a, n:int=3",
		"defaults": map[string]any{}, "async": "yes", "update": "true", "state_dir": "s",
	})
	if err != nil {
		t.Fatal(err)
	}
	if req.Name != "x" || *req.Description != "d" || !req.HasTemplate || req.Template != nil || !*req.Async || !req.Update || *req.StateDir != "s" {
		t.Errorf("decoded %+v", req)
	}
	if len(req.Args) != 2 || req.Args[1].Canonical() != "n:int" || req.Defaults == nil || req.Values != nil {
		t.Errorf("args/defaults/values decoded as %+v %v %v", req.Args, req.Defaults, req.Values)
	}
	req, err = ParseRegistration(map[string]any{"args": []any{"a", "b:path=."}})
	if err != nil || len(req.Args) != 2 {
		t.Errorf("list args: %+v, %v", req, err)
	}
	for _, c := range []struct {
		params map[string]any
		field  string
	}{
		{map[string]any{"async": "maybe"}, "async"},
		{map[string]any{"update": 3}, "update"},
		{map[string]any{"defaults": "a=1"}, "defaults"},
		{map[string]any{"values": []any{}}, "values"},
		{map[string]any{"args": "n:int=x"}, "args"},
		{map[string]any{"args": "a, a"}, "args"},
		{map[string]any{"name": true}, "name"},
		{map[string]any{"bogus": 1}, "bogus"},
	} {
		_, err := ParseRegistration(c.params)
		wantRegErr(t, err, c.field, ErrInvalid, c.field)
	}
}

func TestRegisterWritesKeyOrderExactly(t *testing.T) {
	rg := newRegistrar(t)
	out := mustRegister(t, rg, map[string]any{
		"name": "Deploy Check", "description": "Check a deploy", "template": "check {target} --n {n} {mode}",
		"args": "target:path=., n:int=3, mode", "defaults": map[string]any{"mode": "fast"},
		"values": map[string]any{"z": "1", "a": "2"}, "async": true, "state_dir": "/tmp/state",
	})
	want := `{
  "description": "Check a deploy",
  "async": true,
  "state_dir": "/tmp/state",
  "args": [
    "target:path",
    "n:int",
    "mode"
  ],
  "defaults": {
    "target": ".",
    "n": "3",
    "mode": "fast"
  },
  "values": {
    "a": "2",
    "z": "1"
  },
  "template": "check {target} --n {n} {mode}"
}
`
	path := filepath.Join(UserRoot(rg.AgentDir), "deploy_check.json")
	if got := readText(t, path); got != want {
		t.Errorf("file:\n%s\nwant:\n%s", got, want)
	}
	if out.Action != "created" || out.Tool != "deploy_check" || out.Path != path || !slices.Equal(out.Args, []string{"target", "n", "mode"}) {
		t.Errorf("outcome %+v", out)
	}
	if msg := out.Message(); msg != `Registered tool "deploy_check" (args: target, n, mode).` {
		t.Errorf("message %q", msg)
	}
	// The directory holds the file and the lock, no temporary file.
	ents, _ := os.ReadDir(UserRoot(rg.AgentDir))
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{LockName, "deploy_check.json"}) {
		t.Errorf("user root holds %v", names)
	}
	// The written file is a tool that discovery accepts.
	g, err := Discover(rg.AgentDir)
	if err != nil || g.Active["deploy_check"] == nil || !g.Active["deploy_check"].Tool() {
		t.Errorf("deploy_check is not a discovered tool: %v", err)
	}
}

func TestRegisterObjectAndArrayTemplates(t *testing.T) {
	rg := newRegistrar(t)
	out := mustRegister(t, rg, map[string]any{"name": "seq", "description": "d", "template": []any{"echo {a}", map[string]any{"template": "cat", "label": "c"}}})
	if !slices.Equal(out.Args, []string{"a"}) || out.Message() != `Registered tool "seq" (args: a).` {
		t.Errorf("outcome %+v", out)
	}
	out = mustRegister(t, rg, map[string]any{"name": "obj", "description": "d", "template": map[string]any{"repeat": "{n}", "template": "echo {index}"}})
	if !slices.Equal(out.Args, []string{"n"}) {
		t.Errorf("args %v", out.Args)
	}
	out = mustRegister(t, rg, map[string]any{"name": "plain", "description": "d", "template": "date"})
	if out.Message() != `Registered tool "plain" (args: none).` {
		t.Errorf("message %q", out.Message())
	}
}

func TestRegisterBadInputsWriteNothing(t *testing.T) {
	rg := newRegistrar(t)
	cases := []struct {
		params map[string]any
		field  string
		kind   error
		part   string
	}{
		{map[string]any{"name": "x", "description": "d"}, "template", ErrInvalid, "template is required for new registrations"},
		{map[string]any{"name": "x", "template": "echo"}, "description", ErrInvalid, "description is required unless deleting"},
		{map[string]any{"name": "x", "description": "d", "template": 3}, "template", ErrInvalid, "template must be a string, object, or sequence"},
		{map[string]any{"name": "x", "description": "d", "template": []any{}}, "template", ErrInvalid, "template sequence is empty"},
		{map[string]any{"name": "x", "description": "d", "template": "   "}, "template", ErrInvalid, "blank"},
		{map[string]any{"name": "x", "description": "d", "template": map[string]any{"repeat": 0, "template": "echo"}}, "template", ErrInvalid, "repeat"},
		{map[string]any{"name": "x", "description": "d", "template": map[string]any{"bogus": 1, "template": "echo"}}, "template", ErrInvalid, "bogus"},
		{map[string]any{"name": "x", "description": "d", "template": "echo 'open"}, "template", ErrInvalid, "template is invalid"},
		{map[string]any{"name": "x", "description": "d", "template": "echo {n}", "args": "n:int", "defaults": map[string]any{"n": "many"}}, "defaults", ErrInvalid, "defaults.n"},
		{map[string]any{"name": "x", "description": "d", "template": "echo {n:int}", "values": map[string]any{"n": "many"}}, "values", ErrInvalid, "values.n"},
		{map[string]any{"name": "x", "description": "d", "template": "nope.json"}, "template", ErrNotFound, "does not exist"},
		{map[string]any{"name": "ls", "description": "d", "template": "echo"}, "name", ErrInvalid, "reserved"},
		{map[string]any{"description": "d", "template": "echo"}, "name", ErrInvalid, "name is required"},
	}
	for _, c := range cases {
		_, err := register(t, rg, c.params)
		wantRegErr(t, err, c.field, c.kind, c.part)
	}
	if _, err := os.Stat(UserRoot(rg.AgentDir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("bad requests created the user root: %v", err)
	}
}

// An update of a recipe that is a symlink writes where it points; the
// link stays.
func TestRegisterUpdateThroughSymlink(t *testing.T) {
	rg := newRegistrar(t)
	root := UserRoot(rg.AgentDir)
	target := regPut(t, filepath.Join(t.TempDir(), "dotfiles", "tool.json"), `{"description": "d", "template": "echo old"}`+"\n")
	if err := os.MkdirAll(root, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "tool.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	mustRegister(t, rg, map[string]any{"name": "tool", "update": true, "template": "echo new"})
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the recipe is no longer a link: %v %v", fi, err)
	}
	if got := readText(t, target); !strings.Contains(got, "echo new") {
		t.Errorf("the link's target = %q, want the update", got)
	}
}

func TestRegisterConflictUpdateKeepsFields(t *testing.T) {
	rg := newRegistrar(t)
	root := UserRoot(rg.AgentDir)
	path := regPut(t, filepath.Join(root, "tool.json"), `{
  "mailbox": {"accepts": ["ping"]},
  "description": "old description",
  "args": ["who=world"],
  "usage": {"calls": 4},
  "template": "echo {who}"
}
`)
	before := readText(t, path)
	_, err := register(t, rg, map[string]any{"name": "tool", "template": "echo new", "description": "d"})
	wantRegErr(t, err, "name", ErrConflict, `tool "tool" already registered; use update=true to overwrite`)
	if readText(t, path) != before {
		t.Fatal("a conflict changed the file")
	}
	// An update without template keeps the template, args and the
	// description; fields register_tool does not manage stay.
	out := mustRegister(t, rg, map[string]any{"name": "tool", "update": true, "async": "true"})
	want := `{
  "description": "old description",
  "async": true,
  "args": [
    "who"
  ],
  "defaults": {
    "who": "world"
  },
  "mailbox": {
    "accepts": [
      "ping"
    ]
  },
  "usage": {
    "calls": 4
  },
  "template": "echo {who}"
}
`
	if got := readText(t, path); got != want {
		t.Errorf("updated file:\n%s\nwant:\n%s", got, want)
	}
	if out.Action != "updated" || !strings.HasPrefix(out.Message(), `Updated tool "tool" (args: who)`) {
		t.Errorf("outcome %+v", out)
	}
	// A new template keeps the args and defaults of the names it still
	// uses...
	mustRegister(t, rg, map[string]any{"name": "tool", "update": true, "template": "echo {who} again"})
	if got := readText(t, path); !strings.Contains(got, `"args": [
    "who"
  ]`) || !strings.Contains(got, `"who": "world"`) || !strings.Contains(got, `"template": "echo {who} again"`) {
		t.Errorf("after a new template using the same names:\n%s", got)
	}
	// ...and drops those of names it no longer has.
	mustRegister(t, rg, map[string]any{"name": "tool", "update": true, "template": "echo {x}", "async": false})
	got := readText(t, path)
	if strings.Contains(got, `"who"`) || strings.Contains(got, `"async"`) || !strings.Contains(got, `"description": "old description"`) || !strings.Contains(got, `"template": "echo {x}"`) {
		t.Errorf("after a new template:\n%s", got)
	}
}

func TestRegisterMarkdownToolCountsAsExisting(t *testing.T) {
	rg := newRegistrar(t)
	root := UserRoot(rg.AgentDir)
	regPut(t, filepath.Join(root, "md.md"), "---\ndescription: from md\n---\n```command\necho md\n```\n")
	_, err := register(t, rg, map[string]any{"name": "md", "template": "echo json", "description": "d"})
	wantRegErr(t, err, "name", ErrConflict)
	out := mustRegister(t, rg, map[string]any{"name": "md", "template": "echo json", "update": true})
	if !strings.Contains(readText(t, out.Path), `"description": "from md"`) {
		t.Errorf("update did not keep the Markdown description")
	}
	if len(out.Warnings) != 1 || !strings.Contains(out.Warnings[0], "shadowed") {
		t.Errorf("warnings %q", out.Warnings)
	}
}

func TestRegisterDelete(t *testing.T) {
	rg := newRegistrar(t)
	mustRegister(t, rg, map[string]any{"name": "gone", "description": "d", "template": "echo"})
	for _, tmpl := range []any{"", nil} {
		out := mustRegister(t, rg, map[string]any{"name": "gone", "template": tmpl})
		if tmpl == "" {
			if out.Action != "deleted" || !strings.HasPrefix(out.Message(), `Deleted tool "gone"`) || out.Result()["deleted"] != true {
				t.Errorf("delete outcome %+v", out)
			}
			if _, err := os.Stat(out.Path); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("file still there: %v", err)
			}
		} else if out.Action != "not_found" || out.Message() != `Tool "gone" not found; nothing to delete.` || out.Result()["deleted"] != false {
			t.Errorf("second delete outcome %+v %q", out, out.Message())
		}
	}
}

func TestRegisterWarnings(t *testing.T) {
	rg := newRegistrar(t)
	out := mustRegister(t, rg, map[string]any{"name": "risky", "description": "d", "template": []any{
		"bash -c {script}", map[string]any{"label": "cleanup", "template": "rm -rf {dir}"}, "bash -c {script}",
	}})
	if len(out.Warnings) != 2 || !strings.HasPrefix(out.Warnings[0], "bash: invokes bash; shell command strings") || !strings.HasPrefix(out.Warnings[1], "cleanup: removes filesystem paths") {
		t.Errorf("warnings %q", out.Warnings)
	}
	if !strings.Contains(out.Message(), "\nWarnings:\n- bash: invokes bash") {
		t.Errorf("message %q", out.Message())
	}
}

func TestWrapperDetection(t *testing.T) {
	rg := newRegistrar(t)
	root := UserRoot(rg.AgentDir)
	regPut(t, filepath.Join(root, "mine.json"), `{"description": "mine", "async": true, "template": "echo mine {m}"}`)
	regPut(t, filepath.Join(rg.Cwd, "sub", "rel.json"), `{"description": "rel", "template": "echo rel"}`)
	regPut(t, filepath.Join(rg.Home, "lib", "home.md"), "---\ndescription: home md\n---\n```command\necho home\n```\n")
	regPut(t, filepath.Join(rg.AgentDir, "skills", "s", "recipes", "sk.json"), `{"description": "skill", "template": "echo skill"}`)
	for _, c := range []struct {
		template, from, path, alias string
	}{
		{"utility-git-status", "utility-git-status", "pkg:utility-git-status.json", "utility-git-status"},
		{" utility-git-status.json ", "utility-git-status.json", "pkg:utility-git-status.json", "utility-git-status"},
		{"mine", "mine", filepath.Join(root, "mine.json"), "mine"},
		{"sub/rel.json", filepath.Join(rg.Cwd, "sub", "rel.json"), filepath.Join(rg.Cwd, "sub", "rel.json"), "rel"},
		{"~/lib/home.md", "~/lib/home.md", filepath.Join(rg.Home, "lib", "home.md"), "home"},
		{"{agent}/skills/s/recipes/sk.json", "{agent}/skills/s/recipes/sk.json", filepath.Join(rg.AgentDir, "skills", "s", "recipes", "sk.json"), "sk"},
	} {
		w, err := rg.wrapTarget("wrapper", c.template)
		if err != nil || w == nil {
			t.Errorf("wrapTarget(%q) = %v, %v", c.template, w, err)
			continue
		}
		if w.from != c.from || w.path != c.path || w.alias != c.alias {
			t.Errorf("wrapTarget(%q) = from %q path %q alias %q, want %q %q %q", c.template, w.from, w.path, w.alias, c.from, c.path, c.alias)
		}
	}
	// Commands stay commands.
	for _, tmpl := range []any{"date", "echo mine", "./build.sh", "{cmd}", "git status", []any{"mine"}, map[string]any{"template": "mine"}} {
		if w, err := rg.wrapTarget("wrapper", tmpl); w != nil || err != nil {
			t.Errorf("wrapTarget(%v) = %v, %v; want a plain command", tmpl, w, err)
		}
	}
	_, err := rg.wrapTarget("wrapper", "missing.json")
	wantRegErr(t, err, "template", ErrNotFound, filepath.Join(rg.Cwd, "missing.json"))
	_, err = rg.wrapTarget("mine", "mine")
	wantRegErr(t, err, "template", ErrInvalid, "itself")

	// The persisted wrapper: description and async from the wrapped recipe.
	out := mustRegister(t, rg, map[string]any{"name": "wrap", "template": "mine"})
	want := `{
  "description": "mine",
  "async": true,
  "imports": {
    "mine": "mine"
  },
  "template": {
    "name": "mine"
  }
}
`
	if got := readText(t, out.Path); got != want {
		t.Errorf("wrapper:\n%s\nwant:\n%s", got, want)
	}
	if out.WrappedRecipe != filepath.Join(root, "mine.json") || !slices.Equal(out.Args, []string{"m"}) {
		t.Errorf("outcome %+v", out)
	}
	// An invalid wrapped recipe is refused before anything is written.
	regPut(t, filepath.Join(root, "broken.json"), `{"description": "b"}`)
	_, err = register(t, rg, map[string]any{"name": "wrap2", "template": "broken"})
	wantRegErr(t, err, "template", ErrInvalid, "cannot be used")
	if _, err := os.Stat(filepath.Join(root, "wrap2.json")); !errors.Is(err, os.ErrNotExist) {
		t.Error("a failed wrapper was written")
	}
}

func TestWrapperOfPackagedRecipeIsCallable(t *testing.T) {
	rg := newRegistrar(t)
	out := mustRegister(t, rg, map[string]any{"name": "git_status", "template": "utility-git-status", "args": "repo:path=/srv/repo"})
	r, err := Load(out.Path)
	if err != nil {
		t.Fatal(err)
	}
	tool, err := rg.resolver().Tool(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(tool.Params) != 1 || tool.Params[0].Name != "repo" || tool.Params[0].Default != "/srv/repo" {
		t.Errorf("params %+v", tool.Params)
	}
}

func TestDraftPathStaysInsideDrafts(t *testing.T) {
	rg := newRegistrar(t)
	root := UserRoot(rg.AgentDir)
	drafts := filepath.Join(root, "drafts")
	inside := regPut(t, filepath.Join(drafts, "run-1.json"), `{"description": "d", "template": "echo"}`)
	regPut(t, filepath.Join(drafts, "nested", "n.md"), "---\ndescription: n\n---\n```command\necho n\n```\n")
	outside := regPut(t, filepath.Join(root, "top.json"), `{"description": "d", "template": "echo"}`)
	elsewhere := regPut(t, filepath.Join(rg.Cwd, "x.json"), `{"description": "d", "template": "echo"}`)
	if err := os.Symlink(elsewhere, filepath.Join(drafts, "link.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(inside, filepath.Join(drafts, "nested", "inner-link.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(rg.Cwd, filepath.Join(drafts, "dirlink")); err != nil {
		t.Fatal(err)
	}
	ok := map[string]string{
		inside:                                  inside,
		"run-1":                                 inside,
		"run-1.json":                            inside,
		filepath.Join(drafts, "nested", "n.md"): filepath.Join(drafts, "nested", "n.md"),
		filepath.Join(drafts, "nested", "inner-link.json"): filepath.Join(drafts, "nested", "inner-link.json"),
	}
	for ref, want := range ok {
		got, err := rg.draftPath(ref)
		if err != nil || got != want {
			t.Errorf("draftPath(%q) = %q, %v; want %q", ref, got, err, want)
		}
	}
	// Relative paths with a slash resolve from the working directory,
	// else from the recipes root (as inspect lists drafts).
	if got, err := rg.draftPath("drafts/run-1.json"); err != nil || got != inside {
		t.Errorf("draftPath(drafts/run-1.json) from elsewhere = %q, %v", got, err)
	}
	rg.Cwd = root
	if got, err := rg.draftPath("drafts/run-1.json"); err != nil || got != inside {
		t.Errorf("draftPath(drafts/run-1.json) from the root = %q, %v", got, err)
	}
	for _, ref := range []string{"../top.json", "drafts/../top.json", outside, "/etc/passwd", elsewhere, "link.json", "dirlink/x.json", "..", "."} {
		_, err := rg.draftPath(ref)
		wantRegErr(t, err, "draft", ErrInvalid, "draft must be under "+drafts, "inspect target=recipes view=summary")
	}
	_, err := rg.draftPath("missing.json")
	wantRegErr(t, err, "draft", ErrNotFound, "draft not found")
	_, err = rg.draftPath("drafts/missing")
	wantRegErr(t, err, "draft", ErrInvalid, "not a .json or .md")
}

func TestPromoteDraft(t *testing.T) {
	rg := newRegistrar(t)
	drafts := filepath.Join(UserRoot(rg.AgentDir), "drafts")
	raw := "{\"template\":\"echo {a}\",  \"async\": true,\n\"description\": \"Draft recipe captured from spawn run r1\"}\n"
	draft := regPut(t, filepath.Join(drafts, "r1.json"), raw)
	out := mustRegister(t, rg, map[string]any{"draft": draft})
	if out.Tool != "r1" || out.Draft != draft || out.Action != "created" || out.Message() != `Registered tool "r1" from draft recipe (args: a).` {
		t.Errorf("outcome %+v %q", out, out.Message())
	}
	if got := readText(t, out.Path); got != raw {
		t.Errorf("promoted file %q, want the draft's bytes %q", got, raw)
	}
	if readText(t, draft) != raw {
		t.Error("the draft changed")
	}
	res := out.Result()
	if res["promoted"] != true || res["draft"] != draft || res["created"] != true {
		t.Errorf("result %v", res)
	}
	_, err := register(t, rg, map[string]any{"name": "r1", "draft": "r1"})
	wantRegErr(t, err, "name", ErrConflict)
	if out := mustRegister(t, rg, map[string]any{"name": "r1", "draft": "r1", "update": true}); out.Action != "updated" {
		t.Errorf("update promote %+v", out)
	}
	_, err = register(t, rg, map[string]any{"name": "r2", "draft": "r1", "template": "echo"})
	wantRegErr(t, err, "template", ErrInvalid, "cannot be combined with draft")

	// A Markdown draft is written as its compiled JSON.
	regPut(t, filepath.Join(drafts, "md.md"), "---\ndescription: md draft\nargs: who\n---\n```command\necho {who}\n```\n")
	out = mustRegister(t, rg, map[string]any{"name": "from_md", "draft": "md.md"})
	want := "{\n  \"description\": \"md draft\",\n  \"args\": \"who\",\n  \"template\": \"echo {who}\"\n}\n"
	if got := readText(t, out.Path); got != want {
		t.Errorf("compiled draft:\n%s\nwant:\n%s", got, want)
	}
	// Invalid drafts are refused and write nothing.
	regPut(t, filepath.Join(drafts, "bad.json"), `{"description": "no template"}`)
	_, err = register(t, rg, map[string]any{"name": "bad", "draft": "bad"})
	wantRegErr(t, err, "draft", ErrInvalid, "draft recipe is invalid")
	regPut(t, filepath.Join(drafts, "relimport.json"), `{"description": "d", "imports": {"c": "./child.json"}, "template": {"name": "c"}}`)
	regPut(t, filepath.Join(drafts, "child.json"), `{"template": "echo child"}`)
	_, err = register(t, rg, map[string]any{"name": "relimport", "draft": "relimport"})
	wantRegErr(t, err, "draft", ErrInvalid, "import")
	// A new tool needs a description (any registration does).
	regPut(t, filepath.Join(drafts, "nodesc.json"), `{"template": "echo hi"}`)
	_, err = register(t, rg, map[string]any{"name": "nodesc", "draft": "nodesc"})
	wantRegErr(t, err, "description", ErrInvalid, "the draft has no description")
	for _, n := range []string{"bad", "relimport", "nodesc"} {
		if _, err := os.Stat(filepath.Join(UserRoot(rg.AgentDir), n+".json")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s.json was written", n)
		}
	}
}

func TestRegisterDryRunWritesNothing(t *testing.T) {
	rg := newRegistrar(t)
	req, err := ParseRegistration(map[string]any{"name": "dry", "description": "d", "template": "echo"})
	if err != nil {
		t.Fatal(err)
	}
	req.DryRun = true
	out, err := rg.Register(req)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out.Document), `"template": "echo"`) || !strings.HasPrefix(out.Message(), "Would have registered") {
		t.Errorf("dry run %q %q", out.Document, out.Message())
	}
	if _, err := os.Stat(UserRoot(rg.AgentDir)); !errors.Is(err, os.ErrNotExist) {
		t.Error("a dry run created the user root")
	}
}

func TestRegisterConcurrentCreatesOneWinner(t *testing.T) {
	rg := newRegistrar(t)
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, errs[i] = register(t, rg, map[string]any{"name": "race", "description": "d", "template": "echo " + strings.Repeat("x", i+1)})
		})
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, ErrConflict):
			t.Errorf("unexpected error %v", err)
		}
	}
	if ok != 1 {
		t.Errorf("%d registrations succeeded, want 1", ok)
	}
}

func TestList(t *testing.T) {
	rg := newRegistrar(t)
	if names, err := rg.List(); err != nil || len(names) != 0 {
		t.Errorf("empty list = %v, %v", names, err)
	}
	root := UserRoot(rg.AgentDir)
	regPut(t, filepath.Join(root, "b.json"), `{"description": "b", "template": "echo"}`)
	regPut(t, filepath.Join(root, "a.md"), "---\ndescription: a\n---\n```command\necho a\n```\n")
	regPut(t, filepath.Join(root, "off.json"), `{"disabled": true, "template": "echo"}`)
	regPut(t, filepath.Join(root, "broken.json"), `{`)
	regPut(t, filepath.Join(root, "drafts", "d.json"), `{"template": "echo"}`)
	names, err := rg.List()
	if err != nil || !slices.Equal(names, []string{"a", "b"}) {
		t.Errorf("list = %v, %v", names, err)
	}
}

// A new recipe is written 0600 (its defaults may hold a token) in a
// recipes directory made 0700; an update keeps the mode its owner gave.
func TestRegisterFileModes(t *testing.T) {
	rg := newRegistrar(t)
	out := mustRegister(t, rg, map[string]any{"name": "tok", "description": "d", "template": "echo {t}", "defaults": map[string]any{"t": "secret"}})
	if st, err := os.Stat(out.Path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("new recipe: %v %v, want 0600", st.Mode(), err)
	}
	if st, err := os.Stat(filepath.Dir(out.Path)); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("recipes dir: %v %v, want 0700", st.Mode(), err)
	}
	os.Chmod(out.Path, 0o640)
	mustRegister(t, rg, map[string]any{"name": "tok", "description": "d2", "update": true})
	if st, err := os.Stat(out.Path); err != nil || st.Mode().Perm() != 0o640 {
		t.Fatalf("updated recipe: %v %v, want the 0640 its owner gave", st.Mode(), err)
	}
}
