package recipes

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pi-actors/pi-actors/recipes/template"
)

// writeFile writes content to path (creating its directory) and returns
// path.
func writeFile(t testing.TB, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// loadFile writes content to a fresh temp dir under name and loads it.
func loadFile(t testing.TB, name, content string) (*Recipe, error) {
	t.Helper()
	return Load(writeFile(t, filepath.Join(t.TempDir(), name), content))
}

// mustLoad is loadFile that fails the test on error.
func mustLoad(t testing.TB, name, content string) *Recipe {
	t.Helper()
	r, err := loadFile(t, name, content)
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	return r
}

// wantInvalid checks that err wraps ErrInvalid and mentions every part.
func wantInvalid(t testing.TB, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want an invalid-recipe error mentioning %q, got nil", parts)
	}
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("error %q does not wrap ErrInvalid", err)
	}
	for _, p := range parts {
		if !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(p)) {
			t.Errorf("error %q does not mention %q", err, p)
		}
	}
}

// graphOf resolves r with an empty agent dir and returns its root node.
func graphOf(t testing.TB, r *Recipe) map[string]any {
	t.Helper()
	rv := &Resolver{AgentDir: t.TempDir(), Home: t.TempDir()}
	res, err := rv.Resolve(r)
	if err != nil {
		t.Fatalf("resolve %s: %v", r.Path, err)
	}
	m, ok := res.Graph.(map[string]any)
	if !ok {
		t.Fatalf("graph of %s is %T, want an object node", r.Path, res.Graph)
	}
	return m
}

// js compacts a value for comparisons in messages.
func js(v any) string { return template.CompactJSON(v) }

func TestLoadJSONMustBeObject(t *testing.T) {
	for _, body := range []string{`[]`, `"echo hi"`, `3`, `null`, `true`} {
		_, err := loadFile(t, "x.json", body)
		wantInvalid(t, err, "JSON recipe must be an object")
	}
}

func TestLoadJSONMustDefineTemplate(t *testing.T) {
	_, err := loadFile(t, "x.json", `{"description": "no template", "args": ["a"]}`)
	wantInvalid(t, err, "recipe must define template")
	if err != nil && !strings.Contains(err.Error(), "x.json") {
		t.Errorf("error %q does not name the file", err)
	}
}

func TestLoadJSONParseErrorSurfaced(t *testing.T) {
	_, err := loadFile(t, "x.json", `{"template": "echo",}`)
	wantInvalid(t, err, "x.json", "invalid character")
	_, err = loadFile(t, "y.json", `{"template": "echo"} {"more": 1}`)
	wantInvalid(t, err, "y.json")
}

func TestLoadTemplateShapes(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{`{"template": "   "}`, "empty"},
		{`{"template": []}`, "empty"},
		{`{"template": 3}`, "template must be"},
		{`{"template": null}`, "template must be"},
	} {
		_, err := loadFile(t, "x.json", c.body)
		wantInvalid(t, err, c.want)
	}
	for _, body := range []string{`{"template": "echo"}`, `{"template": ["echo a", "echo b"]}`, `{"template": {"template": "echo"}}`} {
		mustLoad(t, "ok.json", body)
	}
}

func TestLoadLegacyNameIgnored(t *testing.T) {
	r := mustLoad(t, "real-id.json", `{"name": "legacy-name", "template": "echo hi"}`)
	if r.ID != "real-id" {
		t.Errorf("ID = %q, want the file name real-id", r.ID)
	}
	if len(r.Warnings) != 0 {
		t.Errorf("legacy name should not warn, got %q", r.Warnings)
	}
	if !filepath.IsAbs(r.Path) || filepath.Base(r.Path) != "real-id.json" {
		t.Errorf("Path = %q", r.Path)
	}
	if r.Format != "json" {
		t.Errorf("Format = %q", r.Format)
	}
	md := mustLoad(t, "md-id.md", "---\nname: other\ntemplate: echo hi\n---\n")
	if md.ID != "md-id" || md.Format != "md" {
		t.Errorf("md ID/Format = %q/%q", md.ID, md.Format)
	}
}

func TestLoadEnvelopeMergesIntoTemplateNode(t *testing.T) {
	// A string template: every envelope key joins the node.
	r := mustLoad(t, "s.json", `{
		"description": "d",
		"args": ["a", "n:int=2"], "defaults": {"a": "x"}, "parallel": false, "label": "L",
		"when": "go", "timeout": 5000, "delay": 10, "output": "stdout", "retry": 2,
		"failure": "branch", "recover": "echo recover", "repeat": 3,
		"template": "echo {a} {n}"}`)
	g := graphOf(t, r)
	want := map[string]string{
		"args": `["a","n:int=2"]`, "defaults": `{"a":"x"}`, "parallel": "false", "label": `"L"`,
		"when": `"go"`, "timeout": "5000", "delay": "10", "output": `"stdout"`, "retry": "2",
		"failure": `"branch"`, "recover": `"echo recover"`, "repeat": "3", "template": `"echo {a} {n}"`,
	}
	for k, v := range want {
		if got := js(g[k]); got != v {
			t.Errorf("graph[%s] = %s, want %s", k, got, v)
		}
	}
	if _, ok := g["description"]; ok {
		t.Errorf("description must not join the template node: %s", js(g))
	}

	// An object template: template keys win over the envelope.
	r = mustLoad(t, "o.json", `{
		"timeout": 100, "label": "outer", "defaults": {"a": "env"}, "args": "a",
		"template": {"timeout": 200, "defaults": {"b": "tpl"}, "template": "echo {a} {b}"}}`)
	g = graphOf(t, r)
	if js(g["timeout"]) != "200" || js(g["label"]) != `"outer"` || js(g["args"]) != `"a"` {
		t.Errorf("object template merge: %s", js(g))
	}
	if js(g["defaults"]) != `{"b":"tpl"}` {
		t.Errorf("template defaults must win whole (spread): got %s", js(g["defaults"]))
	}

	// An array template becomes the node's template.
	r = mustLoad(t, "a.json", `{"parallel": true, "template": ["echo a", "echo b"]}`)
	g = graphOf(t, r)
	if js(g["parallel"]) != "true" || js(g["template"]) != `["echo a","echo b"]` {
		t.Errorf("array template merge: %s", js(g))
	}

	// And the merged node parses and plans.
	r = mustLoad(t, "p.json", `{"args": ["who=world"], "template": "echo hello {who}"}`)
	plan := planOf(t, r, nil)
	if got := js(firstLeaf(plan.Root).Argv); got != `["echo","hello","world"]` {
		t.Errorf("argv = %s", got)
	}
}

func TestLoadRecipeFields(t *testing.T) {
	r := mustLoad(t, "f.json", `{
		"description": "desc",
		"disabled": true,
		"async": true,
		"state_dir": "{agent}/state/x",
		"artifacts": {
			"report": "{state_dir}/report.md",
			"data": {"path": "{state_dir}/data.json", "kind": "json", "media_type": "application/json", "required": true},
			"": "skipped"
		},
		"mailbox": {
			"accepts": ["control.kill", " control.reply ", 7, false, null, {"type": ""}, {"nope": 1},
				{"type": " chat.message ", "body_schema": {"type": "object"}, "ack": true, "idempotency": "id", "level": "info", "requires_response": true, "summary": "s"}],
			"emits": ["run.done", {"type": "run.failed"}, ""]
		},
		"retire_when": "children_terminal",
		"restart": {"policy": "on-failure"},
		"actor_context": false,
		"values": {"v": 1},
		"usage": {"calls": 3},
		"template": "echo"}`)
	if r.Description != "desc" || !r.Disabled || !r.Async || r.StateDir != "{agent}/state/x" {
		t.Errorf("scalars: %+v", r)
	}
	wantArt := map[string]Artifact{
		"report": {Path: "{state_dir}/report.md"},
		"data":   {Path: "{state_dir}/data.json", Kind: "json", MediaType: "application/json", Required: true},
	}
	if !reflect.DeepEqual(r.Artifacts, wantArt) {
		t.Errorf("artifacts = %+v, want %+v", r.Artifacts, wantArt)
	}
	if r.Mailbox == nil {
		t.Fatal("mailbox not parsed")
	}
	var acc, emits []string
	for _, e := range r.Mailbox.Accepts {
		acc = append(acc, e.Type)
	}
	for _, e := range r.Mailbox.Emits {
		emits = append(emits, e.Type)
	}
	if strings.Join(acc, ",") != "control.kill,control.reply,chat.message" {
		t.Errorf("accepts types = %q (junk entries must be dropped, types trimmed)", acc)
	}
	if strings.Join(emits, ",") != "run.done,run.failed" {
		t.Errorf("emits types = %q", emits)
	}
	full := r.Mailbox.Accepts[len(r.Mailbox.Accepts)-1]
	if js(full.BodySchema) != `{"type":"object"}` || full.Ack != true || full.Idempotency != "id" || full.Level != "info" || !full.RequiresResponse || full.Summary != "s" {
		t.Errorf("typed mailbox entry = %+v", full)
	}
	if !r.Mailbox.Allows("chat.message") || r.Mailbox.Allows("other") {
		t.Errorf("Allows mismatch")
	}
	if r.RetireWhen != "children_terminal" {
		t.Errorf("retire_when = %q", r.RetireWhen)
	}
	if js(r.Restart) != `{"policy":"on-failure"}` || js(r.Values) != `{"v":1}` || js(r.Usage) != `{"calls":3}` {
		t.Errorf("restart/values/usage = %s %s %s", js(r.Restart), js(r.Values), js(r.Usage))
	}
	if r.ActorContext {
		t.Errorf("actor_context false must turn the bundle off")
	}
	if len(r.Warnings) != 0 {
		t.Errorf("known fields warned: %q", r.Warnings)
	}
}

func TestLoadDefaultsWhenAbsent(t *testing.T) {
	r := mustLoad(t, "d.json", `{"template": "echo"}`)
	if r.Disabled || r.Async || r.StateDir != "" || r.Mailbox != nil || r.Artifacts != nil || r.RetireWhen != "" || !r.ActorContext {
		t.Errorf("defaults: %+v", r)
	}
}

func TestLoadActorContextForms(t *testing.T) {
	for body, want := range map[string]bool{
		`false`: false, `"off"`: false, `true`: true, `null`: true,
	} {
		r := mustLoad(t, "c.json", `{"actor_context": `+body+`, "template": "echo"}`)
		if r.ActorContext != want {
			t.Errorf("actor_context %s → %v, want %v", body, r.ActorContext, want)
		}
	}
}

func TestLoadMailboxJunkOnly(t *testing.T) {
	r := mustLoad(t, "m.json", `{"mailbox": {"accepts": [7, false, {}], "emits": "not-a-list"}, "template": "echo"}`)
	if r.Mailbox == nil || len(r.Mailbox.Accepts) != 0 || len(r.Mailbox.Emits) != 0 {
		t.Errorf("mailbox = %+v, want empty lists", r.Mailbox)
	}
	if !r.Mailbox.Allows("anything") {
		t.Errorf("an empty accepts list accepts everything")
	}
}

func TestLoadRetireWhenOnlyChildrenTerminal(t *testing.T) {
	_, err := loadFile(t, "r.json", `{"retire_when": "never", "template": "echo"}`)
	wantInvalid(t, err, "retire_when")
}

func TestLoadFieldTypesChecked(t *testing.T) {
	for _, c := range []struct{ field, value string }{
		{"disabled", `"yes"`}, {"async", `1`}, {"state_dir", `5`}, {"description", `[]`},
		{"values", `"x"`}, {"usage", `[]`}, {"actor_context", `"maybe"`},
	} {
		_, err := loadFile(t, "t.json", `{"`+c.field+`": `+c.value+`, "template": "echo"}`)
		wantInvalid(t, err, c.field)
	}
}

func TestLoadUnknownFieldWarns(t *testing.T) {
	r, err := loadFile(t, "u.json", `{"frobnicate": true, "zeta": 1, "template": "echo"}`)
	if err != nil {
		t.Fatalf("an unknown top-level field must not make the recipe invalid: %v", err)
	}
	if len(r.Warnings) != 2 || !strings.Contains(r.Warnings[0], "frobnicate") || !strings.Contains(r.Warnings[1], "zeta") {
		t.Errorf("warnings = %q, want one per unknown field (sorted)", r.Warnings)
	}
	// Discovery surfaces it as a diagnostic, not an invalid entry.
	agent := t.TempDir()
	writeFile(t, filepath.Join(agent, "recipes", "u.json"), `{"frobnicate": true, "template": "echo"}`)
	g, err := Discover(agent)
	if err != nil {
		t.Fatal(err)
	}
	e := g.Active["u"]
	if e == nil || e.Invalid() || !e.Tool() {
		t.Fatalf("u should be an active tool: %+v", e)
	}
	if !hasLine(g.Diagnostics, "frobnicate") {
		t.Errorf("diagnostics %q do not mention the unknown field", g.Diagnostics)
	}
}

// sizedJSON returns a valid JSON recipe of exactly n bytes.
func sizedJSON(t testing.TB, n int) string {
	head, tail := `{"template": "echo", "description": "`, `"}`
	pad := n - len(head) - len(tail)
	if pad < 0 {
		t.Fatalf("size %d too small", n)
	}
	s := head + strings.Repeat("x", pad) + tail
	if len(s) != n {
		t.Fatalf("sized JSON is %d bytes, want %d", len(s), n)
	}
	return s
}

func TestLoadSizeLimit(t *testing.T) {
	if MaxFileBytes != 1048576 {
		t.Fatalf("MaxFileBytes = %d, want 1048576", MaxFileBytes)
	}
	if _, err := loadFile(t, "exact.json", sizedJSON(t, 1048576)); err != nil {
		t.Errorf("a 1048576-byte recipe must load: %v", err)
	}
	_, err := loadFile(t, "over.json", sizedJSON(t, 1048577))
	wantInvalid(t, err, "exceeds size limit 1048576 bytes", "over.json")

	// Rejected before parsing: an oversized file of garbage reports the
	// size, not a JSON error.
	_, err = loadFile(t, "garbage.json", strings.Repeat("{", 1048577))
	wantInvalid(t, err, "exceeds size limit 1048576")
	if err != nil && strings.Contains(err.Error(), "JSON") {
		t.Errorf("oversized file was parsed: %v", err)
	}
	// Markdown too.
	md := "---\ntemplate: echo\n---\n" + strings.Repeat("p", 1048577)
	_, err = loadFile(t, "big.md", md)
	wantInvalid(t, err, "exceeds size limit 1048576")

	// Discovery reports it as an invalid entry.
	agent := t.TempDir()
	writeFile(t, filepath.Join(agent, "recipes", "huge.json"), sizedJSON(t, 1048577))
	g, err := Discover(agent)
	if err != nil {
		t.Fatal(err)
	}
	if e := g.Active["huge"]; e == nil || !e.Invalid() {
		t.Errorf("huge should be an invalid active entry: %+v", e)
	}
	if !hasLine(g.Diagnostics, "exceeds size limit 1048576") {
		t.Errorf("diagnostics %q miss the size limit", g.Diagnostics)
	}
}

func TestLoadNotFound(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "missing.json"))
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("err = %v, want ErrNotFound", err)
	}
	_, err = Load("pkg:no-such-recipe.json")
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("pkg err = %v, want ErrNotFound", err)
	}
}

func TestLoadDirectoryIsInvalid(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "d.json")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Load(dir)
	wantInvalid(t, err, "regular file")
}

func TestLoadPackagedLibrary(t *testing.T) {
	for _, id := range []string{"subagent-prompt", "subagent-quorum", "subagents-prompts", "utility-changelog-head",
		"utility-git-log", "utility-git-status", "utility-jsonl-tail", "utility-markdown-index"} {
		r, err := Load("pkg:" + id + ".json")
		if err != nil {
			t.Errorf("packaged %s: %v", id, err)
			continue
		}
		if r.ID != id || !IsPackaged(r.Path) || r.Description == "" || len(r.Warnings) > 0 {
			t.Errorf("packaged %s: %+v", id, r)
		}
		rv := &Resolver{AgentDir: t.TempDir(), Home: t.TempDir()}
		if _, err := rv.Tool(r); err != nil {
			t.Errorf("packaged %s does not prepare as a tool: %v", id, err)
		}
	}
}

// --- Markdown ---

func TestMarkdownMustStartWithFrontmatter(t *testing.T) {
	_, err := loadFile(t, "x.md", "# Title\n---\ntemplate: echo\n---\n")
	wantInvalid(t, err, "must start with frontmatter")
	_, err = loadFile(t, "y.md", "")
	wantInvalid(t, err, "must start with frontmatter")
}

func TestMarkdownUnclosedFrontmatter(t *testing.T) {
	_, err := loadFile(t, "x.md", "---\ntemplate: echo\ndescription: d\n")
	wantInvalid(t, err, "frontmatter is not closed")
}

func TestMarkdownFrontmatterTemplateOnly(t *testing.T) {
	r := mustLoad(t, "x.md", "---\ndescription: From frontmatter\nargs: who\ntemplate: echo hi {who}\n---\n\nProse is ignored.\n")
	if r.Description != "From frontmatter" {
		t.Errorf("description = %q", r.Description)
	}
	if r.Raw["template"] != "echo hi {who}" {
		t.Errorf("template = %s", js(r.Raw["template"]))
	}
}

func TestMarkdownNoFenceNoTemplate(t *testing.T) {
	_, err := loadFile(t, "x.md", "---\ndescription: nothing to run\n---\n\n```bash\necho not executable\n```\n")
	wantInvalid(t, err, "no executable recipe/template fence")
}

func TestMarkdownFirstExecutableFenceWins(t *testing.T) {
	r := mustLoad(t, "x.md", "---\ndescription: d\n---\n\n```bash\necho skipped\n```\n\n```template\necho first {a}\n```\n\n```template\necho second\n```\n")
	if r.Raw["template"] != "echo first {a}" {
		t.Errorf("template = %s, want the first template fence (bash skipped)", js(r.Raw["template"]))
	}
}

func TestMarkdownFenceInfoKeywords(t *testing.T) {
	for info, want := range map[string]string{
		"command-template": "echo ct",
		"recipe-json":      "echo rj",
		"COMMAND":          "echo cmd",
		"json":             "echo js",
		"Template":         "echo tp",
		"text recipe":      "echo tr",
	} {
		body := want
		if strings.Contains(strings.ToLower(info), "json") || strings.Contains(strings.ToLower(info), "recipe") {
			body = `"` + want + `"`
		}
		r, err := loadFile(t, "x.md", "---\ndescription: d\n---\n```"+info+"\n"+body+"\n```\n")
		if err != nil {
			t.Errorf("fence %q: %v", info, err)
			continue
		}
		if r.Raw["template"] != want {
			t.Errorf("fence %q: template = %s, want %q", info, js(r.Raw["template"]), want)
		}
	}
	// A fence whose info names none of the keywords is prose.
	_, err := loadFile(t, "x.md", "---\ndescription: d\n---\n```sh\necho no\n```\n```\necho plain\n```\n")
	wantInvalid(t, err, "no executable")
}

func TestMarkdownJSONFenceObjectMergesOverFrontmatter(t *testing.T) {
	r := mustLoad(t, "x.md", "---\ndescription: front\nasync: false\ntimeout: 100\nlabel: keep\n---\n\n```json\n{\"description\": \"fence\", \"async\": true, \"timeout\": 200, \"template\": [\"echo a\", \"echo b\"]}\n```\n")
	if r.Description != "fence" || !r.Async {
		t.Errorf("fence object must merge over frontmatter: %+v", r)
	}
	if js(r.Raw["timeout"]) != "200" || r.Raw["label"] != "keep" || js(r.Raw["template"]) != `["echo a","echo b"]` {
		t.Errorf("raw = %s", js(r.Raw))
	}
}

func TestMarkdownJSONFenceNonObjectBecomesTemplate(t *testing.T) {
	r := mustLoad(t, "x.md", "---\ndescription: d\n---\n```recipe\n[\"echo a\", {\"timeout\": 5, \"template\": \"echo b\"}]\n```\n")
	if js(r.Raw["template"]) != `["echo a",{"template":"echo b","timeout":5}]` {
		t.Errorf("template = %s", js(r.Raw["template"]))
	}
	// An object without template is a template node, not a recipe.
	r = mustLoad(t, "y.md", "---\ndescription: d\n---\n```json\n{\"label\": \"n\", \"template_x\": 1}\n```\n")
	if js(r.Raw["template"]) != `{"label":"n","template_x":1}` {
		t.Errorf("template = %s", js(r.Raw["template"]))
	}
	// A JSON string is a leaf.
	r = mustLoad(t, "z.md", "---\ndescription: d\n---\n```command\n\"echo quoted\"\n```\n")
	if r.Raw["template"] != "echo quoted" {
		t.Errorf("template = %s", js(r.Raw["template"]))
	}
}

func TestMarkdownInvalidJSONInJSONFence(t *testing.T) {
	for _, info := range []string{"json", "recipe", "recipe.json"} {
		_, err := loadFile(t, "x.md", "---\ndescription: d\n---\n```"+info+"\n{\"template\": \"echo\",}\n```\n")
		wantInvalid(t, err, "JSON")
	}
}

func TestMarkdownTemplateFenceNonJSONIsRawString(t *testing.T) {
	for _, body := range []string{`{cmd} --flag {x}`, `echo {a}`, `[x] not json`, `"unterminated`} {
		r, err := loadFile(t, "x.md", "---\ndescription: d\n---\n```template\n  "+body+"  \n```\n")
		if err != nil {
			t.Errorf("template fence %q: %v", body, err)
			continue
		}
		if r.Raw["template"] != body {
			t.Errorf("template fence %q: template = %s, want the raw trimmed text", body, js(r.Raw["template"]))
		}
	}
	// A template fence holding a JSON object with template merges too.
	r := mustLoad(t, "y.md", "---\ndescription: d\n---\n```template\n{\"args\": \"a\", \"template\": \"echo {a}\"}\n```\n")
	if r.Raw["template"] != "echo {a}" || r.Raw["args"] != "a" {
		t.Errorf("raw = %s", js(r.Raw))
	}
}

func TestMarkdownFenceBodyTrimmedAndTilde(t *testing.T) {
	r := mustLoad(t, "x.md", "---\ndescription: d\n---\n~~~template\n\n   echo tilde   \n\n~~~\n")
	if r.Raw["template"] != "echo tilde" {
		t.Errorf("template = %q", r.Raw["template"])
	}
}

func TestMarkdownArgsCommaScalarAndList(t *testing.T) {
	for name, front := range map[string]string{
		"scalar": "args: a, b=2, n:int=3\n",
		"list":   "args:\n  - a\n  - b=2\n  - n:int=3\n",
	} {
		r := mustLoad(t, name+".md", "---\n"+front+"---\n```template\necho {a} {b} {n}\n```\n")
		tool := toolOf(t, r)
		got := paramSummary(tool)
		if got != "a:string:required b:string:optional n:int:optional" {
			t.Errorf("%s: params = %s", name, got)
		}
	}
}

func TestMarkdownDefaultsListOfPairs(t *testing.T) {
	r := mustLoad(t, "x.md", "---\ndefaults:\n  - model: gpt\n  - count: 3\n---\n```template\necho {model} {count}\n```\n")
	d, ok := r.Raw["defaults"].(map[string]any)
	if !ok {
		t.Fatalf("defaults = %s, want an object", js(r.Raw["defaults"]))
	}
	if template.Stringify(d["model"]) != "gpt" || template.Stringify(d["count"]) != "3" {
		t.Errorf("defaults = %s", js(d))
	}
	plan := planOf(t, r, nil)
	if got := js(firstLeaf(plan.Root).Argv); got != `["echo","gpt","3"]` {
		t.Errorf("argv = %s", got)
	}
}

func TestMarkdownFrontmatterScalars(t *testing.T) {
	r := mustLoad(t, "x.md", "---\n# a comment line\ndescription: \"quoted: text\"\nasync: true\ndisabled: false\nstate_dir: null\ntimeout: 1500\ndefaults: {\"a\": \"x\", \"n\": 2}\nargs: [\"a\", \"n:int\"]\nvalues:\n  k: v\n  deep: 1\n---\n```template\necho {a} {n}\n```\n")
	if r.Description != "quoted: text" || !r.Async || r.Disabled || r.StateDir != "" {
		t.Errorf("scalars: %+v", r)
	}
	if js(r.Raw["timeout"]) != "1500" {
		t.Errorf("timeout = %s, want the number 1500", js(r.Raw["timeout"]))
	}
	if js(r.Raw["defaults"]) != `{"a":"x","n":2}` || js(r.Raw["args"]) != `["a","n:int"]` {
		t.Errorf("JSON-looking scalars: defaults=%s args=%s", js(r.Raw["defaults"]), js(r.Raw["args"]))
	}
	if js(r.Values) != `{"deep":1,"k":"v"}` {
		t.Errorf("nested map: %s", js(r.Values))
	}
}

// Frontmatter is YAML (a maintained parser, by decision of the recipes
// issue), so YAML's rules apply: a plain value may not start with { or [
// or hold ": " — such recipes are invalid with a hint to quote the value.
// Scalars that JSON has no type for stay text: dates, a bare ~.
func TestMarkdownFrontmatterYAML(t *testing.T) {
	for _, line := range []string{"template: {cmd} --flag {x}", "description: [draft] tidy things", "description: Run: the thing", "template: 'a b' c"} {
		front := line + "\n"
		if !strings.HasPrefix(line, "template") {
			front += "template: echo\n"
		}
		_, err := loadFile(t, "x.md", "---\n"+front+"---\n")
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "quote") {
			t.Errorf("%q: err = %v, want ErrInvalid with a hint to quote", line, err)
		}
	}
	for _, c := range []struct{ line, key, want string }{
		{`template: "{cmd} --flag {x}"`, "template", "{cmd} --flag {x}"},
		{"description: '[draft] tidy things'", "description", "[draft] tidy things"},
		{"created: 2024-01-01", "created", "2024-01-01"},
		{"home: ~", "home", "~"},
		{"mode: 010", "mode", "010"},
	} {
		front := c.line + "\n"
		if c.key != "template" {
			front += "template: echo\n"
		}
		r, err := loadFile(t, "x.md", "---\n"+front+"---\n")
		if err != nil {
			t.Errorf("%q: %v", c.line, err)
			continue
		}
		if got := r.Raw[c.key]; got != c.want {
			t.Errorf("%q: %s = %s, want %q", c.line, c.key, js(got), c.want)
		}
	}
}

func TestMarkdownCRLF(t *testing.T) {
	r := mustLoad(t, "x.md", "---\r\ndescription: d\r\n---\r\n```template\r\necho crlf\r\n```\r\n")
	if r.Raw["template"] != "echo crlf" {
		t.Errorf("template = %q", r.Raw["template"])
	}
}

func TestParseFormatFollowsExtension(t *testing.T) {
	// Anything that is not .md is JSON.
	r, err := Parse([]byte(`{"template": "echo"}`), "/x/y.recipe")
	if err != nil || r.Format != "json" {
		t.Errorf("Parse json: %v %+v", err, r)
	}
	_, err = Parse([]byte(`{"template": "echo"}`), "/x/y.md")
	wantInvalid(t, err, "frontmatter")
}

func TestIDOf(t *testing.T) {
	for in, want := range map[string]string{
		"/a/b/c.json": "c", "/a/b/c.md": "c", "pkg:x-y.json": "x-y", "c.d.json": "c.d", "noext": "noext",
	} {
		if got := IDOf(in); got != want {
			t.Errorf("IDOf(%q) = %q, want %q", in, got, want)
		}
	}
}

// --- shared helpers for tool/plan checks ---

func toolOf(t testing.TB, r *Recipe) *Tool {
	t.Helper()
	rv := &Resolver{AgentDir: t.TempDir(), Home: t.TempDir()}
	tool, err := rv.Tool(r)
	if err != nil {
		t.Fatalf("tool %s: %v", r.Path, err)
	}
	return tool
}

func paramSummary(tool *Tool) string {
	var parts []string
	for _, p := range tool.Params {
		req := "optional"
		if p.Required {
			req = "required"
		}
		parts = append(parts, p.Name+":"+p.Type.String()+":"+req)
	}
	return strings.Join(parts, " ")
}

func planOf(t testing.TB, r *Recipe, params map[string]any) *template.Plan {
	t.Helper()
	tool := toolOf(t, r)
	vals, err := tool.Values(params)
	if err != nil {
		t.Fatalf("values: %v", err)
	}
	plan, err := template.NewPlan(tool.Node, vals, template.Options{Dir: t.TempDir(), Types: tool.Types()})
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	return plan
}

func leaves(s *template.Step) []*template.Step {
	if s == nil {
		return nil
	}
	if s.Kind == template.StepLeaf {
		return []*template.Step{s}
	}
	var out []*template.Step
	for _, c := range s.Children {
		out = append(out, leaves(c)...)
	}
	return out
}

func firstLeaf(s *template.Step) *template.Step {
	l := leaves(s)
	if len(l) == 0 {
		return &template.Step{}
	}
	return l[0]
}

func hasLine(lines []string, sub string) bool {
	for _, l := range lines {
		if strings.Contains(l, sub) {
			return true
		}
	}
	return false
}

// TestRestartPolicyName: a recipe's restart may be a bare policy name, as
// spawn's restart= is (the other fields take their defaults); a blank one
// is refused with the two forms.
func TestRestartPolicyName(t *testing.T) {
	dir := t.TempDir()
	path := regPut(t, filepath.Join(dir, "svc.json"), `{"description": "d", "template": "sleep 1", "restart": "on-failure"}`)
	r, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if r.Restart["policy"] != "on-failure" || len(r.Restart) != 1 {
		t.Errorf("restart = %v", r.Restart)
	}
	path = regPut(t, filepath.Join(dir, "blank.json"), `{"description": "d", "template": "sleep 1", "restart": " "}`)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "restart must be a policy name") {
		t.Errorf("blank restart: %v", err)
	}
}

// TestRestartPolicyChecked: a recipe's restart is checked when it loads
// (doctor lists it as invalid, call refuses it), not first when a spawn
// of it applies the policy.
func TestRestartPolicyChecked(t *testing.T) {
	dir := t.TempDir()
	for name, tc := range map[string]struct{ restart, want string }{
		"policy":  {`"sometimes"`, `restart.policy must be never, on-failure, on-abnormal or always (got "sometimes")`},
		"object":  {`{"policy": "sometimes"}`, `(got "sometimes")`},
		"backoff": {`{"policy": "always", "backoff_ms": -5}`, "must not be negative"},
		"field":   {`{"policy": "always", "burts": 2}`, "restart: unknown field burts"},
	} {
		path := regPut(t, filepath.Join(dir, name+".json"), `{"description": "d", "template": "sleep 1", "restart": `+tc.restart+`}`)
		if _, err := Load(path); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrInvalid with %q", name, err, tc.want)
		}
	}
	path := regPut(t, filepath.Join(dir, "ok.json"), `{"description": "d", "template": "sleep 1", "restart": {"policy": "always", "burst": 2}}`)
	if _, err := Load(path); err != nil {
		t.Errorf("a good restart object: %v", err)
	}
}
