package recipes

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-actors/pi-actors/recipes/template"
)

// contextTree writes entry → mid → leaf (a pi leaf) plus a sibling import,
// and returns the entry path.
func contextTree(t testing.TB, entryExtra string) (env *importEnv, dir, entry string) {
	env = newImportEnv(t)
	dir = t.TempDir()
	writeFile(t, filepath.Join(dir, "leaf.json"), `{"args": ["prompt"], "template": "pi -p --model m {prompt}"}`)
	writeFile(t, filepath.Join(dir, "mid.json"), `{"imports": {"inner": "./leaf.json"}, "template": ["echo mid", {"name": "inner"}]}`)
	writeFile(t, filepath.Join(dir, "side.json"), `{"template": "pi --print side-task"}`)
	entry = writeFile(t, filepath.Join(dir, "entry.json"), `{`+entryExtra+`"imports": {"m": "./mid.json", "s": "./side.json"},
		"template": ["pi -p entry-task", {"name": "m"}, {"name": "s"}]}`)
	return env, dir, entry
}

// hookedArgvs plans the entry and applies the context hook to every leaf.
func hookedArgvs(t testing.TB, env *importEnv, entry string, params map[string]any) ([][]string, *Tool) {
	t.Helper()
	r, err := Load(entry)
	if err != nil {
		t.Fatal(err)
	}
	tool, err := env.rv.Tool(r)
	if err != nil {
		t.Fatal(err)
	}
	vals, err := tool.Values(params)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := template.NewPlan(tool.Node, vals, template.Options{Dir: t.TempDir(), Types: tool.Types()})
	if err != nil {
		t.Fatal(err)
	}
	hook := tool.Resolved.ContextHook()
	var out [][]string
	for _, l := range leaves(plan.Root) {
		argv := l.Argv
		if hook != nil {
			argv = hook(l, argv)
		}
		out = append(out, argv)
	}
	return out, tool
}

// bundleRecords extracts the JSONL records from a prompt carrying the
// bundle.
func bundleRecords(t testing.TB, prompt string) []map[string]any {
	t.Helper()
	i := strings.Index(prompt, "```jsonl\n")
	j := strings.LastIndex(prompt, "\n```")
	if i < 0 || j < i {
		t.Fatalf("no jsonl block in prompt %q", prompt)
	}
	var recs []map[string]any
	for _, line := range strings.Split(prompt[i+len("```jsonl\n"):j], "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("bad record %q: %v", line, err)
		}
		recs = append(recs, m)
	}
	return recs
}

func hereOf(recs []map[string]any) (int, string) {
	for i, r := range recs {
		if r["you_are_here"] == true {
			p, _ := r["you_are_here_path"].(string)
			return i, p
		}
	}
	return -1, ""
}

func TestContextMarkersInGraph(t *testing.T) {
	env, dir, entry := contextTree(t, "")
	res := env.mustResolve(t, entry)
	g := res.Graph.(map[string]any)
	if got := js(g["actorRecipeContext"]); got != js(map[string]any{"file": entry, "name": "entry", "path": "entry", "role": "entry"}) {
		t.Errorf("entry marker = %s", got)
	}
	seq := g["template"].([]any)
	mid := seq[1].(map[string]any)
	want := map[string]any{"alias": "m", "file": filepath.Join(dir, "mid.json"), "name": "mid", "path": "m", "role": "import"}
	if js(mid["actorRecipeContext"]) != js(want) {
		t.Errorf("mid marker = %s", js(mid["actorRecipeContext"]))
	}
	inner := mid["template"].([]any)[1].(map[string]any)
	want = map[string]any{"alias": "inner", "file": filepath.Join(dir, "leaf.json"), "name": "leaf", "path": "m.inner", "role": "import"}
	if js(inner["actorRecipeContext"]) != js(want) {
		t.Errorf("inner marker = %s", js(inner["actorRecipeContext"]))
	}
}

func TestContextRecords(t *testing.T) {
	env, dir, entry := contextTree(t, "")
	res := env.mustResolve(t, entry)
	type rec struct {
		name, alias, role, path string
		depth                   int
	}
	var got []rec
	for _, r := range res.Records {
		got = append(got, rec{r.Name, r.Alias, r.Role, strings.Join(r.ImportPath, "."), r.Depth})
	}
	want := []rec{{"entry", "", "entry", "", 0}, {"mid", "m", "import", "m", 1}, {"leaf", "inner", "import", "m.inner", 2}, {"side", "s", "import", "s", 1}}
	if len(got) != len(want) {
		t.Fatalf("records = %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("record %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if res.Records[2].File != filepath.Join(dir, "leaf.json") {
		t.Errorf("file = %s", res.Records[2].File)
	}
	// The raw recipe, references unexpanded, is recorded.
	if res.Records[1].Recipe["imports"] == nil || res.Records[0].Recipe["template"] == nil {
		t.Errorf("raw recipes missing: %s", js(res.Records[1].Recipe))
	}
}

func TestContextHookAppendsBundle(t *testing.T) {
	env, dir, entry := contextTree(t, "")
	argvs, _ := hookedArgvs(t, env, entry, map[string]any{"prompt": "do it"})
	if len(argvs) != 4 {
		t.Fatalf("argvs = %q", argvs)
	}
	// Non-pi commands are untouched.
	if strings.Join(argvs[1], " ") != "echo mid" {
		t.Errorf("echo changed: %q", argvs[1])
	}
	cases := []struct {
		argv     []string
		prefix   string
		here     string
		hereName string
	}{
		{argvs[0], "entry-task\n\n", "entry", "entry"},
		{argvs[2], "do it\n\n", "m.inner", "leaf"},
		{argvs[3], "side-task\n\n", "s", "side"},
	}
	for _, c := range cases {
		prompt := c.argv[len(c.argv)-1]
		if !strings.HasPrefix(prompt, c.prefix) {
			t.Errorf("prompt %q does not start with the task prompt + blank line", prompt)
			continue
		}
		recs := bundleRecords(t, prompt)
		if len(recs) != 4 {
			t.Errorf("bundle has %d records", len(recs))
			continue
		}
		i, path := hereOf(recs)
		if i < 0 || recs[i]["name"] != c.hereName || path != c.here {
			t.Errorf("you_are_here = %d (%v) path %q, want %s at %s", i, recs[i]["name"], path, c.hereName, c.here)
		}
		for _, r := range recs {
			for _, k := range []string{"depth", "file", "import_path", "name", "recipe", "role"} {
				if _, ok := r[k]; !ok {
					t.Errorf("record misses %s: %v", k, r)
				}
			}
		}
		if recs[2]["alias"] != "inner" || recs[2]["file"] != filepath.Join(dir, "leaf.json") {
			t.Errorf("leaf record = %v", recs[2])
		}
		if !strings.HasSuffix(prompt, "\n```") {
			t.Errorf("bundle must end with the closing fence: %q", prompt[len(prompt)-20:])
		}
	}
	// The other words are untouched.
	if strings.Join(argvs[2][:4], " ") != "pi -p --model m" {
		t.Errorf("argv = %q", argvs[2])
	}
}

func TestContextOff(t *testing.T) {
	for _, v := range []string{`false`, `"off"`} {
		env, _, entry := contextTree(t, `"actor_context": `+v+`, `)
		argvs, tool := hookedArgvs(t, env, entry, map[string]any{"prompt": "do it"})
		if tool.Resolved.ContextHook() != nil {
			t.Errorf("actor_context %s: hook must be nil", v)
		}
		if last := argvs[2][len(argvs[2])-1]; last != "do it" {
			t.Errorf("actor_context %s: prompt = %q", v, last)
		}
	}
}

func TestContextHookOnlyPiPrint(t *testing.T) {
	res := &Resolved{Recipe: &Recipe{ID: "x", ActorContext: true}, Records: []ContextRecord{{File: "/x.json", Name: "x", ImportPath: []string{}, Role: "entry", Recipe: map[string]any{"template": "pi"}}}}
	hook := res.ContextHook()
	step := &template.Step{}
	for _, c := range []struct {
		argv    []string
		changed bool
	}{
		{[]string{"pi", "-p", "hello"}, true},
		{[]string{"pi", "--print", "hello"}, true},
		{[]string{"/opt/bin/pi", "-p", "--model", "m", "hello"}, true},
		{[]string{"pi", "hello"}, false},
		{[]string{"pi", "-p"}, false},
		{[]string{"pi", "-p", "hello", "--no-tools"}, false},
		{[]string{"pix", "-p", "hello"}, false},
		{[]string{"echo", "-p", "hello"}, false},
		{[]string{"pi"}, false},
	} {
		out := hook(step, c.argv)
		changed := strings.Join(out, "\x00") != strings.Join(c.argv, "\x00")
		if changed != c.changed {
			t.Errorf("%q: changed = %v, want %v", c.argv, changed, c.changed)
		}
		if changed && (len(out) != len(c.argv) || !strings.HasPrefix(out[len(out)-1], "hello\n\n")) {
			t.Errorf("%q → %q", c.argv, out)
		}
	}
	// With no marker the entry record is marked.
	recs := bundleRecords(t, res.Bundle(nil))
	if i, p := hereOf(recs); i != 0 || p != "x" {
		t.Errorf("entry mark = %d %q", i, p)
	}
	// No records: no hook.
	if (&Resolved{Recipe: &Recipe{ActorContext: true}}).ContextHook() != nil {
		t.Errorf("a hook without records")
	}
}

func TestContextStepsCarryMarkers(t *testing.T) {
	env, dir, entry := contextTree(t, "")
	r, _ := Load(entry)
	tool, err := env.rv.Tool(r)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := template.NewPlan(tool.Node, template.Values{"prompt": "x"}, template.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ls := leaves(plan.Root)
	names := []string{}
	for _, l := range ls {
		n, _ := l.Context["name"].(string)
		names = append(names, n)
	}
	if strings.Join(names, ",") != "entry,mid,leaf,side" {
		t.Errorf("leaf markers = %v", names)
	}
}

func TestContextPackagedSubagents(t *testing.T) {
	env := newImportEnv(t)
	argvs, _ := hookedArgvs(t, env, "pkg:subagents-prompts.json", map[string]any{"prompts": []any{"one", "two"}, "model": "m"})
	if len(argvs) != 2 {
		t.Fatalf("argvs = %q", argvs)
	}
	for i, want := range []string{"one", "two"} {
		a := argvs[i]
		if strings.Join(a[:8], " ") != "pi -p --model m --thinking off --no-tools --no-extensions" {
			t.Errorf("argv = %q", a)
		}
		prompt := a[8]
		if !strings.HasPrefix(prompt, "\n"+want+"\n\nAnswer format: markdown\n\n") { // a newline first: a prompt "- x" is no option of pi
			t.Errorf("prompt = %q", prompt)
		}
		recs := bundleRecords(t, prompt)
		if len(recs) != 2 || recs[0]["name"] != "subagents-prompts" || recs[1]["name"] != "subagent-prompt" {
			t.Errorf("records = %v", recs)
		}
		if i, p := hereOf(recs); i != 1 || p != "prompt" {
			t.Errorf("you_are_here = %d %q", i, p)
		}
	}
}

// The bundle is our own header (its wording is ours, not the reference's),
// a blank line before it, then a fenced JSONL block of the records.
func TestContextBundleShape(t *testing.T) {
	res := &Resolved{Recipe: &Recipe{ID: "x", ActorContext: true}, Records: []ContextRecord{{File: "/x.json", Name: "x", ImportPath: []string{}, Role: "entry"}}}
	b := res.Bundle(nil)
	if !strings.HasPrefix(b, "Recipe context for this actor") || !strings.Contains(b, "you_are_here") {
		t.Errorf("header: %q", b)
	}
	i := strings.Index(b, "```jsonl\n")
	if i < 0 || !strings.HasSuffix(b, "\n```") {
		t.Fatalf("not a fenced jsonl block: %q", b)
	}
	lines := strings.Split(strings.TrimSuffix(b[i+len("```jsonl\n"):], "\n```"), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], `"you_are_here":true`) {
		t.Errorf("records: %q", lines)
	}
}

// ContextRecordsPerDeclaredImport: PARITY A2 "actor_context bundle":
// records are walked depth-first, the entry first, then its imports in
// declaration order — one record per declared import, whether the template
// uses the alias once, twice or not at all.
func TestContextRecordsPerDeclaredImport(t *testing.T) {
	env := newImportEnv(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.json"), `{"template": "echo a"}`)
	writeFile(t, filepath.Join(dir, "b.json"), `{"template": "echo b"}`)
	writeFile(t, filepath.Join(dir, "c.json"), `{"template": "echo c"}`)
	entry := writeFile(t, filepath.Join(dir, "entry.json"), `{
		"imports": {"zeta": "./b.json", "alpha": "./a.json", "unused": "./c.json"},
		"template": [{"name": "alpha"}, {"name": "zeta"}, {"name": "alpha"}]}`)
	res := env.mustResolve(t, entry)
	var got []string
	for _, r := range res.Records {
		got = append(got, r.Name)
	}
	if strings.Join(got, ",") != "entry,b,a,c" {
		t.Errorf("observed records %v; expected entry,b,a,c (declaration order, one per import)", got)
	}
}
