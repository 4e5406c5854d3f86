package recipes

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-actors/pi-actors/recipes/template"
)

// importEnv is an agent dir, a home dir and a resolver over them.
type importEnv struct {
	agent, home, user string
	rv                *Resolver
}

func newImportEnv(t testing.TB) *importEnv {
	t.Helper()
	e := &importEnv{agent: t.TempDir(), home: t.TempDir()}
	e.user = UserRoot(e.agent)
	e.rv = &Resolver{AgentDir: e.agent, Home: e.home}
	return e
}

func (e *importEnv) resolve(t testing.TB, path string) (*Resolved, error) {
	t.Helper()
	r, err := Load(path)
	if err != nil {
		return nil, err
	}
	return e.rv.Resolve(r)
}

func (e *importEnv) mustResolve(t testing.TB, path string) *Resolved {
	t.Helper()
	res, err := e.resolve(t, path)
	if err != nil {
		t.Fatalf("resolve %s: %v", path, err)
	}
	return res
}

// argvs plans a resolved recipe and returns every leaf's argv as JSON.
func (e *importEnv) argvs(t testing.TB, path string, params map[string]any) []string {
	t.Helper()
	r, err := Load(path)
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	tool, err := e.rv.Tool(r)
	if err != nil {
		t.Fatalf("tool %s: %v", path, err)
	}
	vals, err := tool.Values(params)
	if err != nil {
		t.Fatalf("values: %v", err)
	}
	plan, err := template.NewPlan(tool.Node, vals, template.Options{Dir: t.TempDir(), Types: tool.Types()})
	if err != nil {
		t.Fatalf("plan %s: %v", path, err)
	}
	var out []string
	for _, l := range leaves(plan.Root) {
		out = append(out, js(l.Argv))
	}
	return out
}

// importedFiles lists the files of the resolved records after the entry.
func importedFiles(res *Resolved) []string {
	var out []string
	for _, r := range res.Records[1:] {
		out = append(out, r.File)
	}
	return out
}

func TestImportBindingForms(t *testing.T) {
	r := mustLoad(t, "e.json", `{"imports": {
		"plain": "child",
		"obj": {"from": "./c.json", "defaults": {"d": 1}, "values": {"v": "x"}},
		"a.b-c_9": "other"}, "template": "echo"}`)
	if len(r.Imports) != 3 {
		t.Fatalf("imports = %+v", r.Imports)
	}
	if p := r.Imports["plain"]; p.Alias != "plain" || p.From != "child" || p.Defaults != nil || p.Values != nil {
		t.Errorf("plain = %+v", p)
	}
	if o := r.Imports["obj"]; o.From != "./c.json" || js(o.Defaults) != `{"d":1}` || js(o.Values) != `{"v":"x"}` {
		t.Errorf("obj = %+v", o)
	}
	if _, ok := r.Imports["a.b-c_9"]; !ok {
		t.Errorf("alias with . - _ digits must be allowed")
	}
}

func TestImportBadAlias(t *testing.T) {
	for _, alias := range []string{"bad alias", "x/y", "a{b}", "", "ü"} {
		_, err := loadFile(t, "e.json", `{"imports": {"`+alias+`": "child"}, "template": "echo"}`)
		wantInvalid(t, err, "import alias")
		if err != nil && !strings.Contains(err.Error(), alias) {
			t.Errorf("error %q does not name alias %q", err, alias)
		}
	}
}

func TestImportBindingMustBeStringOrObject(t *testing.T) {
	for _, b := range []string{`3`, `true`, `["child"]`, `null`} {
		_, err := loadFile(t, "e.json", `{"imports": {"kid": `+b+`}, "template": "echo"}`)
		wantInvalid(t, err, "kid", "must be a string or")
	}
	_, err := loadFile(t, "e.json", `{"imports": ["child"], "template": "echo"}`)
	wantInvalid(t, err, "imports")
}

func TestImportMustDefineFrom(t *testing.T) {
	for _, b := range []string{`{}`, `{"from": ""}`, `{"from": "   "}`, `{"from": 3}`, `{"defaults": {"a": 1}}`} {
		_, err := loadFile(t, "e.json", `{"imports": {"kid": `+b+`}, "template": "echo"}`)
		wantInvalid(t, err, "kid", "must define from")
	}
}

func TestImportNotFound(t *testing.T) {
	env := newImportEnv(t)
	dir := t.TempDir()
	entry := writeFile(t, filepath.Join(dir, "e.json"), `{"imports": {"kid": "no-such-recipe"}, "template": [{"name": "kid"}]}`)
	_, err := env.resolve(t, entry)
	wantInvalid(t, err, "recipe import not found", "kid")

	entry = writeFile(t, filepath.Join(dir, "p.json"), `{"imports": {"kid": "./missing/x.json"}, "template": "echo"}`)
	_, err = env.resolve(t, entry)
	wantInvalid(t, err, "recipe import not found", "kid")

	// A target without template cannot be imported either.
	writeFile(t, filepath.Join(dir, "notpl.json"), `{"description": "no template"}`)
	entry = writeFile(t, filepath.Join(dir, "n.json"), `{"imports": {"kid": "./notpl.json"}, "template": [{"name": "kid"}]}`)
	_, err = env.resolve(t, entry)
	wantInvalid(t, err, "kid")
}

func TestImportRelativePathsAgainstImportingDir(t *testing.T) {
	env := newImportEnv(t)
	base := t.TempDir()
	writeFile(t, filepath.Join(base, "recipes", "child.json"), `{"template": "echo right-child"}`)
	writeFile(t, filepath.Join(base, "lib", "sib.md"), "---\ntemplate: echo right-sibling\n---\n")
	entry := writeFile(t, filepath.Join(base, "recipes", "entry.json"), `{
		"imports": {"kid": "./child.json", "sib": "../lib/sib.md", "plain": "sub/deep.json"},
		"template": [{"name": "kid"}, {"name": "sib"}, {"name": "plain"}]}`)
	writeFile(t, filepath.Join(base, "recipes", "sub", "deep.json"), `{"template": "echo right-deep"}`)

	// A decoy tree under the working directory must not be used (C2).
	cwd := t.TempDir()
	writeFile(t, filepath.Join(cwd, "child.json"), `{"template": "echo WRONG cwd child"}`)
	writeFile(t, filepath.Join(cwd, "sub", "deep.json"), `{"template": "echo WRONG cwd deep"}`)
	writeFile(t, filepath.Join(filepath.Dir(cwd), "lib", "sib.md"), "---\ntemplate: echo WRONG\n---\n")
	t.Chdir(cwd)

	got := env.argvs(t, entry, nil)
	want := []string{`["echo","right-child"]`, `["echo","right-sibling"]`, `["echo","right-deep"]`}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("argvs = %v, want %v", got, want)
	}
	res := env.mustResolve(t, entry)
	wantFiles := []string{
		filepath.Join(base, "recipes", "child.json"),
		filepath.Join(base, "lib", "sib.md"),
		filepath.Join(base, "recipes", "sub", "deep.json"),
	}
	if strings.Join(importedFiles(res), ",") != strings.Join(wantFiles, ",") {
		t.Errorf("files = %v, want %v", importedFiles(res), wantFiles)
	}
}

func TestImportRepoAgentHomePaths(t *testing.T) {
	env := newImportEnv(t)
	repo := t.TempDir()
	writeFile(t, filepath.Join(repo, "recipes", "shared.json"), `{"template": "echo repo"}`)
	writeFile(t, filepath.Join(env.agent, "extra", "a.json"), `{"template": "echo agent"}`)
	writeFile(t, filepath.Join(env.home, "h.json"), `{"template": "echo home"}`)
	entry := writeFile(t, filepath.Join(repo, "recipes", "entry.json"), `{
		"imports": {"r": "{repo}/recipes/shared.json", "a": "{agent}/extra/a.json", "h": "~/h.json"},
		"template": [{"name": "r"}, {"name": "a"}, {"name": "h"}]}`)
	got := env.argvs(t, entry, nil)
	if strings.Join(got, " ") != `["echo","repo"] ["echo","agent"] ["echo","home"]` {
		t.Errorf("argvs = %v", got)
	}

	// For a user recipe {repo} is the agent dir.
	writeFile(t, filepath.Join(env.agent, "lib", "x.json"), `{"template": "echo user-repo"}`)
	user := writeFile(t, filepath.Join(env.user, "u.json"), `{"imports": {"x": "{repo}/lib/x.json"}, "template": {"name": "x"}}`)
	if got := env.argvs(t, user, nil); strings.Join(got, " ") != `["echo","user-repo"]` {
		t.Errorf("user {repo}: %v", got)
	}
}

func TestImportBareNameLadder(t *testing.T) {
	env := newImportEnv(t)
	dir := t.TempDir()
	entry := writeFile(t, filepath.Join(dir, "entry.json"), `{"imports": {"k": "subagent-prompt"}, "template": {"name": "k"}}`)

	files := func() string {
		res := env.mustResolve(t, entry)
		return importedFiles(res)[0]
	}
	// Only packaged.
	if f := files(); f != "pkg:subagent-prompt.json" {
		t.Errorf("packaged fallback: %s", f)
	}
	// The importing directory beats packaged; .md is found too.
	local := writeFile(t, filepath.Join(dir, "subagent-prompt.md"), "---\ntemplate: echo local\n---\n")
	if f := files(); f != local {
		t.Errorf("importing dir: %s", f)
	}
	localJSON := writeFile(t, filepath.Join(dir, "subagent-prompt.json"), `{"template": "echo local json"}`)
	if f := files(); f != localJSON {
		t.Errorf("json before md: %s", f)
	}
	// The user root beats both.
	user := writeFile(t, filepath.Join(env.user, "subagent-prompt.md"), "---\ntemplate: echo user\n---\n")
	if f := files(); f != user {
		t.Errorf("user root first: %s", f)
	}
	// An explicit extension is used as is.
	entry2 := writeFile(t, filepath.Join(dir, "entry2.json"), `{"imports": {"k": "subagent-prompt.json"}, "template": {"name": "k"}}`)
	res := env.mustResolve(t, entry2)
	if f := importedFiles(res)[0]; f != localJSON {
		t.Errorf("explicit .json from the ladder: %s (user root has only .md)", f)
	}
}

func TestImportPackagedRecipeIgnoresUserOverride(t *testing.T) {
	env := newImportEnv(t)
	// subagents-prompts imports its component by path (docs/recipes.md:
	// a user recipe of the same name never changes a packaged pipeline).
	writeFile(t, filepath.Join(env.user, "subagent-prompt.json"), `{"args": ["prompt", "model"], "template": "echo override {prompt} {model}"}`)
	for _, pipeline := range []string{"pkg:subagents-prompts.json", "pkg:subagent-quorum.json"} {
		res := env.mustResolve(t, pipeline)
		if f := importedFiles(res)[0]; f != "pkg:subagent-prompt.json" {
			t.Errorf("%s imports %s", pipeline, f)
		}
	}
	got := env.argvs(t, "pkg:subagents-prompts.json", map[string]any{"prompts": []any{"p1"}, "model": "m"})
	if len(got) != 1 || !strings.HasPrefix(got[0], `["pi","-p","--model","m"`) {
		t.Errorf("argvs = %v", got)
	}
}

func TestImportPackagedRelativeStaysPackaged(t *testing.T) {
	env := newImportEnv(t)
	res := env.mustResolve(t, "pkg:subagent-quorum.json")
	if len(res.Records) != 2 || res.Records[1].File != "pkg:subagent-prompt.json" || res.Records[1].Alias != "prompt" {
		t.Errorf("records = %+v", res.Records)
	}
}

func TestImportNodePlacements(t *testing.T) {
	env := newImportEnv(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "say.json"), `{"args": ["word=default"], "template": "echo {word}"}`)
	entry := writeFile(t, filepath.Join(dir, "entry.json"), `{
		"imports": {"say": "./say.json"},
		"template": [
			{"name": "say", "values": {"word": "in-array"}},
			{"label": "wrap", "template": {"name": "say", "values": {"word": "nested-object"}}},
			{"template": ["echo seq", {"name": "say", "values": {"word": "in-sub-sequence"}}]},
			{"repeat": 2, "template": {"name": "say", "defaults": {"word": "rep{index}"}}},
			{"parallel": true, "template": [{"name": "say", "values": {"word": "par-a"}}, {"name": "say", "values": {"word": "par-b"}}]},
			{"parallel": true, "repeat": 2, "template": {"name": "say", "defaults": {"word": "prep{index}"}}}
		]}`)
	got := strings.Join(env.argvs(t, entry, nil), " ")
	for _, w := range []string{"in-array", "nested-object", "in-sub-sequence", "rep0", "rep1", "par-a", "par-b", "prep0", "prep1"} {
		if !strings.Contains(got, `["echo","`+w+`"]`) {
			t.Errorf("argvs %s miss echo %s", got, w)
		}
	}
	if strings.Contains(got, "default") {
		t.Errorf("every node overrides the default: %s", got)
	}
}

func TestImportNodeInRecover(t *testing.T) {
	env := newImportEnv(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "fix.json"), `{"template": "echo fixing"}`)
	entry := writeFile(t, filepath.Join(dir, "entry.json"), `{"imports": {"fix": "./fix.json"}, "template": {"retry": 2, "recover": {"name": "fix"}, "template": "false"}}`)
	r, _ := Load(entry)
	tool, err := env.rv.Tool(r)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := template.NewPlan(tool.Node, template.Values{}, template.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var rec *template.Step
	var walk func(s *template.Step)
	walk = func(s *template.Step) {
		if s.Recover != nil && rec == nil {
			rec = s.Recover
		}
		for _, c := range s.Children {
			walk(c)
		}
	}
	walk(plan.Root)
	if rec == nil || js(firstLeaf(rec).Argv) != `["echo","fixing"]` {
		t.Errorf("recover = %+v", rec)
	}
}

func TestImportMergeOrder(t *testing.T) {
	env := newImportEnv(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "kid.json"), `{
		"defaults": {"a": "imp", "b": "imp", "c": "imp", "d": "imp", "e": "imp"},
		"template": "echo {a} {b} {c} {d} {e}"}`)
	entry := writeFile(t, filepath.Join(dir, "entry.json"), `{
		"imports": {"kid": {"from": "./kid.json",
			"defaults": {"b": "bind-def", "c": "bind-def", "d": "bind-def", "e": "bind-def"},
			"values": {"c": "bind-val", "d": "bind-val", "e": "bind-val"}}},
		"template": {"name": "kid", "defaults": {"d": "node-def", "e": "node-def"}, "values": {"e": "node-val"}}}`)
	got := env.argvs(t, entry, nil)
	if strings.Join(got, " ") != `["echo","imp","bind-def","bind-val","node-def","node-val"]` {
		t.Errorf("merge order: %v", got)
	}
	// Caller values still beat every default.
	got = env.argvs(t, entry, map[string]any{"a": "call", "e": "call"})
	if strings.Join(got, " ") != `["echo","call","bind-def","bind-val","node-def","call"]` {
		t.Errorf("caller values: %v", got)
	}
}

func TestImportNodeKeysOverride(t *testing.T) {
	env := newImportEnv(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "kid.json"), `{"timeout": 100, "label": "inner", "retry": 3, "when": "never_set", "template": "echo kid"}`)
	entry := writeFile(t, filepath.Join(dir, "entry.json"), `{"imports": {"kid": "./kid.json"},
		"template": [{"name": "kid", "timeout": 2500, "label": "outer", "when": true}]}`)
	res := env.mustResolve(t, entry)
	seq := res.Graph.(map[string]any)["template"].([]any)
	node := seq[0].(map[string]any)
	if js(node["timeout"]) != "2500" || node["label"] != "outer" || node["when"] != true || js(node["retry"]) != "3" {
		t.Errorf("node = %s", js(node))
	}
	if _, ok := node["name"]; ok {
		t.Errorf("the import node's name must not survive: %s", js(node))
	}
	got := env.argvs(t, entry, nil)
	if strings.Join(got, " ") != `["echo","kid"]` {
		t.Errorf("when:true must run the node: %v", got)
	}
}

func TestImportUnknownAliasNode(t *testing.T) {
	env := newImportEnv(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "kid.json"), `{"template": "echo kid"}`)
	entry := writeFile(t, filepath.Join(dir, "entry.json"), `{"imports": {"kid": "./kid.json"}, "template": ["echo a", {"name": "other"}]}`)
	_, err := env.resolve(t, entry)
	wantInvalid(t, err, "unknown recipe import", "other")
	// No imports at all.
	entry = writeFile(t, filepath.Join(dir, "bare.json"), `{"template": {"template": [{"name": "kid"}]}}`)
	_, err = env.resolve(t, entry)
	wantInvalid(t, err, "unknown recipe import", "kid")
}

func importRefEnv(t *testing.T) (*importEnv, string) {
	env := newImportEnv(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "child.json"), `{
		"name": "legacy-json-name",
		"defaults": {"model": "m1", "obj": {"sub": {"leaf": "deep"}}, "three": 3, "nul": null, "lst": ["a", "b"]},
		"values": {"k": "vk", "f": false, "z": 0, "e": "", "n": null, "sf": "false", "s0": "0", "t": true, "one": 1},
		"template": "echo child"}`)
	return env, dir
}

func TestImportReferences(t *testing.T) {
	env, dir := importRefEnv(t)
	entry := writeFile(t, filepath.Join(dir, "entry.json"), `{
		"imports": {"c": {"from": "./child.json", "defaults": {"bound": "bd"}}},
		"defaults": {
			"name": "{c.name}",
			"file": "{c.file}",
			"deep": "{c.defaults.obj.sub.leaf}",
			"model": "{c.defaults.model}",
			"bound": "{c.defaults.bound}",
			"val": "{c.values.k}",
			"fb": "{c.defaults.missing=fallback}",
			"fbnull": "{c.defaults.nul=was-null}",
			"fbset": "{c.defaults.model=unused}",
			"num": "{c.defaults.three}",
			"list": "{c.defaults.lst}",
			"obj": "{c.defaults.obj}",
			"emb": "x-{c.defaults.three}-{c.name}-y",
			"other": "{c.other}",
			"other2": "{c.other.thing}",
			"plain": "{x}",
			"nota": "{d.name}",
			"typed": "{c:int}"
		},
		"template": "echo"}`)
	res := env.mustResolve(t, entry)
	d := res.Graph.(map[string]any)["defaults"].(map[string]any)
	want := map[string]string{
		"name":   `"child"`,
		"file":   js(filepath.Join(dir, "child.json")),
		"deep":   `"deep"`,
		"model":  `"m1"`,
		"bound":  `"bd"`,
		"val":    `"vk"`,
		"fb":     `"fallback"`,
		"fbnull": `"was-null"`,
		"fbset":  `"m1"`,
		"num":    `3`,
		"list":   `["a","b"]`,
		"obj":    `{"sub":{"leaf":"deep"}}`,
		"emb":    `"x-3-child-y"`,
		"other":  `"{c.other}"`,
		"other2": `"{c.other.thing}"`,
		"plain":  `"{x}"`,
		"nota":   `"{d.name}"`,
		"typed":  `"{c:int}"`,
	}
	for k, w := range want {
		if got := js(d[k]); got != w {
			t.Errorf("%s = %s, want %s", k, got, w)
		}
	}
	if _, isNum := d["num"].(json.Number); !isNum {
		t.Errorf("a whole-string reference keeps the JSON type: num is %T", d["num"])
	}
	// The raw recipe kept for the context bundle is unchanged.
	if raw := res.Recipe.Raw["defaults"].(map[string]any); raw["name"] != "{c.name}" {
		t.Errorf("raw recipe was modified: %s", js(raw["name"]))
	}
}

func TestImportReferenceTernary(t *testing.T) {
	env, dir := importRefEnv(t)
	cases := map[string]string{
		"f": "no", "z": "no", "e": "no", "n": "no", "missing": "no",
		"sf": "yes", "s0": "yes", "t": "yes", "one": "yes", "k": "yes",
	}
	var defs []string
	for k := range cases {
		defs = append(defs, fmt.Sprintf(`"%s": "{c.values.%s?yes:no}"`, k, k))
	}
	defs = append(defs, `"quoted": "{c.values.t?'on it':\"off\"}"`, `"refs": "{c.values.t?c.name:c.file}"`, `"refsno": "{c.values.f?c.name:c.defaults.model}"`, `"emptyno": "[{c.values.f?x:}]"`)
	entry := writeFile(t, filepath.Join(dir, "entry.json"), `{"imports": {"c": "./child.json"}, "defaults": {`+strings.Join(defs, ",")+`}, "template": "echo"}`)
	res := env.mustResolve(t, entry)
	d := res.Graph.(map[string]any)["defaults"].(map[string]any)
	for k, w := range cases {
		if got := template.Stringify(d[k]); got != w {
			t.Errorf("{c.values.%s?yes:no} = %q, want %q", k, got, w)
		}
	}
	for k, w := range map[string]string{"quoted": "on it", "refs": "child", "refsno": "m1", "emptyno": "[]"} {
		if got := template.Stringify(d[k]); got != w {
			t.Errorf("%s = %q, want %q", k, got, w)
		}
	}
}

func TestImportReferenceUnknown(t *testing.T) {
	env, dir := importRefEnv(t)
	for _, ref := range []string{"{c.defaults.nope}", "{c.values.k.deeper}", "embedded {c.values.missing} ref"} {
		entry := writeFile(t, filepath.Join(dir, "entry.json"), `{"imports": {"c": "./child.json"}, "template": "echo `+ref+`"}`)
		_, err := env.resolve(t, entry)
		wantInvalid(t, err, "unknown recipe import reference")
	}
}

func TestImportReferencesEverywhere(t *testing.T) {
	env, dir := importRefEnv(t)
	entry := writeFile(t, filepath.Join(dir, "entry.json"), `{
		"imports": {"c": "./child.json"},
		"description": "wraps {c.name}",
		"args": ["model={c.defaults.model}"],
		"template": [{"label": "{c.name}", "timeout": "{c.defaults.three}", "template": "echo {c.values.k} {model}"}]}`)
	got := env.argvs(t, entry, nil)
	if strings.Join(got, " ") != `["echo","vk","m1"]` {
		t.Errorf("argvs = %v", got)
	}
	res := env.mustResolve(t, entry)
	node := res.Graph.(map[string]any)["template"].([]any)[0].(map[string]any)
	if node["label"] != "child" || js(node["timeout"]) != "3" {
		t.Errorf("node = %s", js(node))
	}
}

func TestImportCycles(t *testing.T) {
	env := newImportEnv(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.json"), `{"imports": {"b": "./b.json"}, "template": ["echo a", {"name": "b"}]}`)
	writeFile(t, filepath.Join(dir, "b.json"), `{"imports": {"a": "./a.json"}, "template": ["echo b", {"name": "a"}]}`)
	_, err := env.resolve(t, filepath.Join(dir, "a.json"))
	wantInvalid(t, err, "cyclic recipe import", "a -> b -> a")

	writeFile(t, filepath.Join(dir, "self.json"), `{"imports": {"me": "./self.json"}, "template": {"name": "me"}}`)
	_, err = env.resolve(t, filepath.Join(dir, "self.json"))
	wantInvalid(t, err, "cyclic recipe import", "self -> self")

	// A longer cycle names the whole chain.
	writeFile(t, filepath.Join(dir, "x.json"), `{"imports": {"y": "y"}, "template": {"name": "y"}}`)
	writeFile(t, filepath.Join(dir, "y.json"), `{"imports": {"z": "z"}, "template": {"name": "z"}}`)
	writeFile(t, filepath.Join(dir, "z.json"), `{"imports": {"x": "x"}, "template": {"name": "x"}}`)
	_, err = env.resolve(t, filepath.Join(dir, "x.json"))
	wantInvalid(t, err, "cyclic recipe import", "x -> y -> z -> x")

	// Importing the same recipe twice (a diamond) is not a cycle.
	writeFile(t, filepath.Join(dir, "leaf.json"), `{"template": "echo leaf"}`)
	writeFile(t, filepath.Join(dir, "left.json"), `{"imports": {"l": "leaf"}, "template": {"name": "l"}}`)
	writeFile(t, filepath.Join(dir, "top.json"), `{"imports": {"l": "leaf", "m": "left"}, "template": [{"name": "l"}, {"name": "m"}, {"name": "l"}]}`)
	if got := env.argvs(t, filepath.Join(dir, "top.json"), nil); len(got) != 3 {
		t.Errorf("diamond argvs = %v", got)
	}
}

// writeChain writes r0 … rN where r_i imports r_{i+1} and rN is a leaf.
func writeChain(t testing.TB, dir string, n int) string {
	t.Helper()
	for i := 0; i < n; i++ {
		writeFile(t, filepath.Join(dir, fmt.Sprintf("r%d.json", i)), fmt.Sprintf(`{"imports": {"next": "./r%d.json"}, "defaults": {"d%d": "v%d"}, "template": {"name": "next"}}`, i+1, i, i))
	}
	writeFile(t, filepath.Join(dir, fmt.Sprintf("r%d.json", n)), `{"template": "echo end {d0}"}`)
	return filepath.Join(dir, "r0.json")
}

func TestImportDepthLimit(t *testing.T) {
	env := newImportEnv(t)
	ok := writeChain(t, t.TempDir(), 31)
	got := env.argvs(t, ok, nil)
	if strings.Join(got, " ") != `["echo","end","v0"]` {
		t.Errorf("r0→r31: %v", got)
	}
	if res := env.mustResolve(t, ok); len(res.Records) != 32 || res.Records[31].Depth != 31 {
		t.Errorf("records = %d", len(res.Records))
	}

	bad := writeChain(t, t.TempDir(), 33)
	_, err := env.resolve(t, bad)
	wantInvalid(t, err, "recipe import depth exceeds limit 32", "r0 -> r1 -> r2")
}

func TestImportedAsyncIsDefinitionOnly(t *testing.T) {
	env := newImportEnv(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "bg.json"), `{"async": true, "state_dir": "/tmp/x", "retire_when": "children_terminal", "args": ["msg=hi"], "template": "echo bg {msg}"}`)
	entry := writeFile(t, filepath.Join(dir, "entry.json"), `{"imports": {"bg": "./bg.json"}, "template": ["echo first", {"name": "bg"}]}`)
	r, _ := Load(entry)
	tool, err := env.rv.Tool(r)
	if err != nil {
		t.Fatal(err)
	}
	if r.Async {
		t.Errorf("entry must stay foreground")
	}
	if _, has := tool.Schema()["properties"].(map[string]any)["run_id"]; has {
		t.Errorf("an imported async recipe adds no run_id")
	}
	got := env.argvs(t, entry, nil)
	if strings.Join(got, " ") != `["echo","first"] ["echo","bg","hi"]` {
		t.Errorf("argvs = %v", got)
	}
	g := js(tool.Resolved.Graph)
	for _, k := range []string{`"async"`, `"state_dir"`, `"retire_when"`} {
		if strings.Contains(g, k) {
			t.Errorf("graph carries %s: %s", k, g)
		}
	}
}

func TestImportErrorsAreInvalid(t *testing.T) {
	env := newImportEnv(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "bad.json"), `{"template": `)
	entry := writeFile(t, filepath.Join(dir, "entry.json"), `{"imports": {"b": "./bad.json"}, "template": {"name": "b"}}`)
	_, err := env.resolve(t, entry)
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "b") {
		t.Errorf("err = %v", err)
	}
}
