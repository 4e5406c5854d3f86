package recipes

import (
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/pi-actors/pi-actors/recipes/template"
)

func paramByName(t testing.TB, tool *Tool, name string) Param {
	t.Helper()
	for _, p := range tool.Params {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no param %s in %s", name, paramSummary(tool))
	return Param{}
}

func schemaProps(t testing.TB, tool *Tool) (map[string]any, []string) {
	t.Helper()
	s := tool.Schema()
	if s["type"] != "object" || s["additionalProperties"] != false {
		t.Errorf("schema envelope = %s", js(s))
	}
	props, _ := s["properties"].(map[string]any)
	req, _ := s["required"].([]string)
	return props, req
}

func TestToolExplicitArgTypesWin(t *testing.T) {
	r := mustLoad(t, "t.json", `{
		"args": ["tools", "n:int", "flag:string", "mode:enum(a,b)"],
		"template": "run {tools?--tools:--no-tools} {tools} {n:string} {flag?-f:} {mode:int=1} {m:int}"}`)
	tool := toolOf(t, r)
	for name, kind := range map[string]string{"tools": "string", "n": "int", "flag": "string", "mode": "enum", "m": "int"} {
		if got := paramByName(t, tool, name).Type.Kind; got != kind {
			t.Errorf("%s type = %s, want %s", name, got, kind)
		}
	}
	vals, err := tool.Values(map[string]any{"tools": "read,bash", "n": "7", "flag": "yes please", "mode": "b", "m": json.Number("2")})
	if err != nil {
		t.Fatalf("values: %v", err)
	}
	if vals["tools"] != "read,bash" || vals["flag"] != "yes please" {
		t.Errorf("vals = %v", vals)
	}
	plan, err := template.NewPlan(tool.Node, vals, template.Options{Dir: t.TempDir(), Types: tool.Types()})
	if err != nil {
		t.Fatal(err)
	}
	if got := js(firstLeaf(plan.Root).Argv); got != `["run","--tools","read,bash","7","-f","b","2"]` {
		t.Errorf("argv = %s", got)
	}
	_, err = tool.Values(map[string]any{"n": "seven"})
	var ae *ArgError
	if !errors.As(err, &ae) || !strings.Contains(ae.Msg, "must be an integer") {
		t.Errorf("n=seven: %v", err)
	}
}

func TestToolPackagedTypes(t *testing.T) {
	for _, c := range []struct{ id, param, kind string }{
		{"subagent-prompt", "tools", "string"},
		{"subagent-prompt", "thinking", "string"},
		{"subagents-prompts", "prompts", "array"},
		{"subagent-quorum", "models", "array"},
		{"utility-git-log", "count", "int"},
		{"utility-git-log", "repo", "path"},
		{"utility-jsonl-tail", "file", "path"},
	} {
		r, err := Load("pkg:" + c.id + ".json")
		if err != nil {
			t.Fatal(err)
		}
		if got := paramByName(t, toolOf(t, r), c.param).Type.Kind; got != c.kind {
			t.Errorf("%s.%s = %s, want %s", c.id, c.param, got, c.kind)
		}
	}
	// subagent-prompt's tools takes a tool list (C3), not a boolean.
	r, _ := Load("pkg:subagent-prompt.json")
	if _, err := toolOf(t, r).Values(map[string]any{"prompt": "p", "model": "m", "tools": "read,bash"}); err != nil {
		t.Errorf("tools=read,bash: %v", err)
	}
}

func TestToolInlineDefaultsMakeOptional(t *testing.T) {
	r := mustLoad(t, "t.json", `{"template": "echo {a=1} {b} {c:int=2} {e?y:n} {f:path}"}`)
	tool := toolOf(t, r)
	want := "a:string:optional b:string:required c:int:optional e:bool:optional f:path:required"
	if got := paramSummary(tool); got != want {
		t.Errorf("params = %s, want %s", got, want)
	}
	// With declared args too (C4): an inline default still counts.
	r = mustLoad(t, "u.json", `{"args": ["a", "b"], "template": "echo {a=inline} {b}"}`)
	if got := paramSummary(toolOf(t, r)); got != "a:string:optional b:string:required" {
		t.Errorf("params = %s", got)
	}
	// Placeholders in imported recipes count the same way (a user recipe
	// built like subagents-prompts).
	r = mustLoad(t, "fan.json", `{"imports": {"prompt": "subagent-prompt"}, "args": ["prompts:array", "model"],
		"template": {"parallel": true, "repeat": "{prompts.length}", "defaults": {"prompt": "{prompts[index]}"}, "template": {"name": "prompt"}}}`)
	tool = toolOf(t, r)
	if p := paramByName(t, tool, "prompt"); p.Required {
		t.Errorf("fan: prompt comes from {prompts[index]} and must not be required")
	}
	if p := paramByName(t, tool, "output_format"); p.Required {
		t.Errorf("fan: output_format has a default")
	}
	_, req := schemaProps(t, tool)
	if strings.Join(req, ",") != "prompts,model" {
		t.Errorf("fan required = %v", req)
	}
}

// TestToolPackagedTakesItsOwnArgs: a packaged recipe that declares args
// takes exactly those; what it imports stays inside.
func TestToolPackagedTakesItsOwnArgs(t *testing.T) {
	r, _ := Load("pkg:subagents-prompts.json")
	tool := toolOf(t, r)
	if got := paramSummary(tool); got != "prompts:array:required model:string:required thinking:string:optional tools:string:optional" {
		t.Errorf("subagents-prompts params = %s", got)
	}
	if _, err := tool.Values(map[string]any{"prompts": []any{"a"}, "model": "m", "output_format": "x"}); err == nil || !strings.Contains(err.Error(), "unknown argument(s): output_format") {
		t.Errorf("an imported recipe's arg is not the pipeline's: %v", err)
	}
	r, _ = Load("pkg:subagent-review-coordinator.json")
	if _, err := toolOf(t, r).Values(map[string]any{"scope": "s", "reviewer_model": "m", "model": "x"}); err == nil || !strings.Contains(err.Error(), "unknown argument(s): model") {
		t.Errorf("model would override every stage; it is not an argument: %v", err)
	}
}

func TestToolRequiredVsOptional(t *testing.T) {
	r := mustLoad(t, "t.json", `{
		"args": ["a", "b=2"],
		"defaults": {"c": "3"},
		"values": {"v": "x"},
		"template": [
			{"when": "go", "template": "echo {a} {b} {c} {d} {v}"},
			{"defaults": {"e": "child"}, "template": "echo {e}"}
		]}`)
	tool := toolOf(t, r)
	got := sortedFields(paramSummary(tool))
	want := sortedFields("a:string:required b:string:optional go:bool:optional c:string:optional d:string:required v:string:optional e:string:optional")
	if got != want {
		t.Errorf("params = %s\nwant       %s", got, want)
	}
	props, req := schemaProps(t, tool)
	if strings.Join(req, ",") != "a,d" {
		t.Errorf("required = %v", req)
	}
	if len(props) != 7 {
		t.Errorf("properties = %s", js(props))
	}
	if p := props["b"].(map[string]any); p["default"] != "2" {
		t.Errorf("b schema = %s", js(p))
	}
	// A typed argument's default is a value of its type in the schema.
	typed := toolOf(t, mustLoad(t, "typed.json", `{"args": ["n:int=8", "r:number=0.5", "f:bool=true", "s=x"], "template": "echo {n} {r} {f} {s}"}`))
	tp, _ := schemaProps(t, typed)
	for name, want := range map[string]any{"n": int64(8), "r": 0.5, "f": true, "s": "x"} {
		if got := tp[name].(map[string]any)["default"]; got != want {
			t.Errorf("%s default = %#v, want %#v", name, got, want)
		}
	}
}

func TestToolRunIDOnlyForAsync(t *testing.T) {
	fg := toolOf(t, mustLoad(t, "fg.json", `{"template": "echo {x}"}`))
	props, _ := schemaProps(t, fg)
	if _, ok := props["run_id"]; ok {
		t.Errorf("foreground recipe has run_id: %s", js(props))
	}
	if _, err := fg.Values(map[string]any{"x": "1", "run_id": "r"}); err == nil {
		t.Errorf("run_id must be unknown for a foreground recipe")
	}
	if strings.Contains(fg.CallShape(), "run_id") {
		t.Errorf("call shape mentions run_id: %s", fg.CallShape())
	}

	bg := toolOf(t, mustLoad(t, "bg.json", `{"async": true, "template": "echo {x} {state_dir} {run_id} {actor_address} {communication_file} {default_room}"}`))
	if got := paramSummary(bg); got != "x:string:required" {
		t.Errorf("async params = %s (injected values are not arguments)", got)
	}
	props, req := schemaProps(t, bg)
	rid, ok := props["run_id"].(map[string]any)
	if !ok || rid["type"] != "string" || rid["description"] != "Optional run id override for this async template recipe invocation." {
		t.Errorf("run_id schema = %s", js(props["run_id"]))
	}
	if strings.Join(req, ",") != "x" {
		t.Errorf("required = %v", req)
	}
	vals, err := bg.Values(map[string]any{"x": "1", "run_id": "custom"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := vals["run_id"]; ok {
		t.Errorf("run_id must not become a template value: %v", vals)
	}
	if !strings.HasSuffix(bg.CallShape(), "Optional: run_id") {
		t.Errorf("call shape = %s", bg.CallShape())
	}
}

func TestToolSchemaPerType(t *testing.T) {
	r := mustLoad(t, "t.json", `{
		"args": ["s", "p:path", "i:int", "n:number", "b:bool", "a:array", "e:enum(x,y)", "u:weird", "z:enum()"],
		"template": "echo {s} {p} {i} {n} {b} {a} {e} {u} {z}"}`)
	props, req := schemaProps(t, toolOf(t, r))
	want := map[string]string{
		"s": `{"description":"Argument: s","type":"string"}`,
		"p": `{"description":"Path argument: p","type":"string"}`,
		"i": `{"description":"Int argument: i","type":"integer"}`,
		"n": `{"description":"Number argument: n","type":"number"}`,
		"b": `{"description":"Bool argument: b","type":"boolean"}`,
		"a": `{"description":"Array argument: a","items":{},"type":"array"}`,
		"e": `{"description":"Enum argument: e","enum":["x","y"],"type":"string"}`,
		"u": `{"description":"Argument: u","type":"string"}`,
		"z": `{"description":"Argument: z","type":"string"}`,
	}
	for k, w := range want {
		if got := js(props[k]); got != w {
			t.Errorf("%s: %s, want %s", k, got, w)
		}
	}
	if strings.Join(req, ",") != "s,p,i,n,b,a,e,u,z" {
		t.Errorf("required = %v", req)
	}
}

func TestToolUnknownArgument(t *testing.T) {
	tool := toolOf(t, mustLoad(t, "greet.json", `{"args": ["name", "times:int=2"], "template": "echo {name} {times}"}`))
	_, err := tool.Values(map[string]any{"name": "x", "bogus": 1, "alpha": 2})
	var ae *ArgError
	if !errors.As(err, &ae) {
		t.Fatalf("err = %v, want *ArgError", err)
	}
	msg := err.Error()
	for _, want := range []string{
		`Invalid arguments for tool "greet": `,
		"alpha, bogus",
		"\n\nExpected call shape for greet:\ngreet({",
		`"name": `,
		`"times": 2`,
		"})\nRequired: name\nOptional: times",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q misses %q", msg, want)
		}
	}
}

func TestToolNormalisationErrorsWrapped(t *testing.T) {
	tool := toolOf(t, mustLoad(t, "t.json", `{"args": ["i:int", "n:number", "b:bool", "e:enum(x,y)", "a:array"], "template": "echo {i} {n} {b} {e} {a}"}`))
	for _, c := range []struct {
		param string
		value any
		want  string
	}{
		{"i", "1.5", "must be an integer"},
		{"n", "1e3", "must be a number"},
		{"b", "maybe", "must be a boolean"},
		{"e", "z", "must be one of: x, y"},
		{"a", "not json", "must be an array"},
	} {
		_, err := tool.Values(map[string]any{c.param: c.value})
		var ae *ArgError
		if !errors.As(err, &ae) {
			t.Errorf("%s=%v: err = %v, want *ArgError", c.param, c.value, err)
			continue
		}
		if !strings.Contains(ae.Msg, c.want) || !strings.Contains(err.Error(), "Expected call shape for t:") {
			t.Errorf("%s=%v: %q", c.param, c.value, err)
		}
	}
	// Missing values from the planner are wrapped by ArgError.
	vals, err := tool.Values(map[string]any{"i": json.Number("1")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = template.NewPlan(tool.Node, vals, template.Options{Dir: t.TempDir(), Types: tool.Types()})
	if err == nil {
		t.Fatal("plan without required values must fail")
	}
	var ae *ArgError
	if werr := tool.ArgError(err); !errors.As(werr, &ae) || !strings.Contains(werr.Error(), "missing value") || !strings.Contains(werr.Error(), "Required: i, n, b, e, a") {
		t.Errorf("wrapped = %v", werr)
	}
	// Other template errors (not about values) pass through unchanged.
	te := &template.Error{Path: "template.timeout", Msg: "must not be negative"}
	if got := tool.ArgError(te); got != error(te) {
		t.Errorf("non-value template error wrapped: %v", got)
	}
}

// BugToolCallShapeEscapesPlaceholders: PARITY A2 "Tool invocation": the
// example values of the expected call shape are `<x>` for strings; the
// pretty JSON must show them as written, not HTML-escaped as "\u003cx\u003e"
// (JSON.stringify does not escape < and >).
func TestToolCallShapeEscapesPlaceholders(t *testing.T) {
	tool := toolOf(t, mustLoad(t, "greet.json", `{"args": ["name", "tags:array"], "template": "echo {name} {tags}"}`))
	shape := tool.CallShape()
	if !strings.Contains(shape, `"name": "<name>"`) || strings.Contains(shape, `\u003c`) {
		t.Errorf("observed:\n%s\nexpected \"name\": \"<name>\" and [\"<tags>\"] without \\u003c escapes", shape)
	}
}

func TestToolCallShapeExamples(t *testing.T) {
	tool := toolOf(t, mustLoad(t, "ex.json", `{
		"args": ["s", "p:path", "i:int", "n:number", "b:bool", "a:array", "e:enum(red,blue)", "d=dflt", "di:int=7", "db:bool=false"],
		"template": "echo {s} {p} {i} {n} {b} {a} {e} {d} {di} {db}"}`))
	shape := tool.CallShape()
	i := strings.Index(shape, "ex(")
	j := strings.LastIndex(shape, ")\nRequired:")
	if i < 0 || j < 0 {
		t.Fatalf("shape = %s", shape)
	}
	var ex map[string]any
	if err := json.Unmarshal([]byte(shape[i+3:j]), &ex); err != nil {
		t.Fatalf("example is not JSON: %v\n%s", err, shape)
	}
	want := `{"a":["<a>"],"b":true,"d":"dflt","db":false,"di":7,"e":"red","i":1,"n":1.5,"p":"./p","s":"<s>"}`
	if got := js(ex); got != want {
		t.Errorf("example = %s\nwant      %s", got, want)
	}
	if !strings.HasSuffix(shape, "Required: s, p, i, n, b, a, e\nOptional: d, di, db") {
		t.Errorf("shape = %s", shape)
	}
	none := toolOf(t, mustLoad(t, "none.json", `{"template": "echo"}`))
	if !strings.HasSuffix(none.CallShape(), "none()\nRequired: none\nOptional: none") && !strings.HasSuffix(none.CallShape(), "none({})\nRequired: none\nOptional: none") {
		t.Errorf("no-arg shape = %q", none.CallShape())
	}
}

func TestToolValuesMerge(t *testing.T) {
	tool := toolOf(t, mustLoad(t, "t.json", `{"values": {"a": "from-values", "b": "from-values"}, "template": "echo {a} {b}"}`))
	vals, err := tool.Values(map[string]any{"b": "caller"})
	if err != nil {
		t.Fatal(err)
	}
	if vals["a"] != "from-values" || vals["b"] != "caller" {
		t.Errorf("vals = %v", vals)
	}
	if got := paramSummary(tool); got != "a:string:optional b:string:optional" {
		t.Errorf("params = %s", got)
	}
	// Caller values are literal (C22).
	vals, _ = tool.Values(map[string]any{"a": "{b}"})
	plan, err := template.NewPlan(tool.Node, vals, template.Options{Dir: t.TempDir(), Types: tool.Types()})
	if err != nil {
		t.Fatal(err)
	}
	if got := js(firstLeaf(plan.Root).Argv); got != `["echo","{b}","from-values"]` {
		t.Errorf("argv = %s", got)
	}
}

func TestToolInvalidTemplate(t *testing.T) {
	r := mustLoad(t, "t.json", `{"template": {"bogus_field": 1, "template": "echo"}}`)
	rv := &Resolver{AgentDir: t.TempDir(), Home: t.TempDir()}
	_, err := rv.Tool(r)
	wantInvalid(t, err, "bogus_field")
	r = mustLoad(t, "u.json", `{"args": ["a", "a"], "template": "echo {a}"}`)
	_, err = rv.Tool(r)
	wantInvalid(t, err, "duplicate")
}

func sortedFields(s string) string {
	f := strings.Fields(s)
	sort.Strings(f)
	return strings.Join(f, " ")
}
