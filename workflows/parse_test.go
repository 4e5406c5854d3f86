package workflows_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/pi-actors/pi-actors/recipes/template"
	"github.com/pi-actors/pi-actors/workflows"
)

// spawnKeys stands for the spawn verb's parameters (package verbs gives
// the real list).
var spawnKeys = []string{"recipe", "file", "template", "values", "restart", "state_dir", "timeout", "retry", "as", "run_id"}

func parse(t *testing.T, src string) (*workflows.Workflow, error) {
	t.Helper()
	v, err := template.DecodeJSON([]byte(src))
	if err != nil {
		t.Fatalf("bad test JSON: %v", err)
	}
	return workflows.Parse(v, workflows.Options{SpawnKeys: spawnKeys, Run: "wf"})
}

// TestParseRejects: every invalid workflow is an *Error naming the node
// and the field.
func TestParseRejects(t *testing.T) {
	cases := []struct {
		name, src, node, field, msg string
	}{
		{"not an object", `[]`, "", "", "must be a JSON object"},
		{"no nodes", `{"nodes":[]}`, "", "nodes", "non-empty array"},
		{"unknown top key", `{"nodes":[{"id":"a","template":"true"}],"polcy":{}}`, "", "polcy", "unknown key"},
		{"missing id", `{"nodes":[{"template":"true"}]}`, "", "nodes[0].id", "string id"},
		{"bad id", `{"nodes":[{"id":"a b","template":"true"}]}`, "a b", "id", "only letters"},
		{"context not an object", `{"nodes":[{"id":"a","template":"true","context":"x"}]}`, "a", "context", "must be an object"},
		{"duplicate id", `{"nodes":[{"id":"a","template":"true"},{"id":"a","template":"true"}]}`, "a", "id", "duplicate: nodes[0] and nodes[1]"},
		{"unknown dependency", `{"nodes":[{"id":"a","template":"true","depends_on":["zz"]}]}`, "a", "depends_on", "unknown node zz"},
		{"self cycle", `{"nodes":[{"id":"a","template":"true","depends_on":["a"]}]}`, "a", "depends_on", "cycle a → a"},
		{"cycle", `{"nodes":[{"id":"a","template":"true","depends_on":["c"]},{"id":"b","template":"true","depends_on":["a"]},{"id":"c","template":"true","depends_on":["b"]}]}`,
			"a", "depends_on", "cycle a → c → b → a"},
		{"dependency twice", `{"nodes":[{"id":"a","template":"true"},{"id":"b","template":"true","depends_on":["a","a"]}]}`, "b", "depends_on", "lists a twice"},
		{"bad condition", `{"nodes":[{"id":"a","template":"true"},{"id":"b","template":"true","depends_on":[{"node":"a","condition":"soon"}]}]}`, "b", "depends_on[0].condition", "started, ready or done"},
		{"order contradicts", `{"nodes":[{"id":"a","template":"true"},{"id":"b","template":"true","depends_on":["a"]}],"execution_order":[["a","b"]]}`,
			"b", "execution_order", "before or beside its dependency a"},
		{"order misses node", `{"nodes":[{"id":"a","template":"true"},{"id":"b","template":"true"}],"execution_order":[["a"]]}`, "b", "execution_order", "in no layer"},
		{"order unknown node", `{"nodes":[{"id":"a","template":"true"}],"execution_order":[["a"],["x"]]}`, "", "execution_order[1]", "unknown node x"},
		{"order empty", `{"nodes":[{"id":"a","template":"true"}],"execution_order":[]}`, "", "execution_order", "got an empty array"},
		{"order layer empty", `{"nodes":[{"id":"a","template":"true"}],"execution_order":[["a"],[]]}`, "", "execution_order[1]", "got an empty array"},
		{"order twice", `{"nodes":[{"id":"a","template":"true"}],"execution_order":[["a"],["a"]]}`, "a", "execution_order", "layer 0 and layer 1"},
		{"negative retry", `{"nodes":[{"id":"a","template":"true","metadata":{"retry":{"max":-1}}}]}`, "a", "metadata.retry.max", "from 0 to 100"},
		{"fractional retry", `{"nodes":[{"id":"a","template":"true","metadata":{"retry":{"max":1.5}}}]}`, "a", "metadata.retry.max", "integer"},
		{"string backoff", `{"nodes":[{"id":"a","template":"true","metadata":{"retry":{"max":1,"backoff_ms":"1s"}}}]}`, "a", "metadata.retry.backoff_ms", "integer"},
		{"retry unknown key", `{"nodes":[{"id":"a","template":"true","metadata":{"retry":{"count":1}}}]}`, "a", "metadata.retry.count", "unknown key"},
		{"bad default retry", `{"nodes":[{"id":"a","template":"true"}],"policy":{"default_retry":{"max":1000}}}`, "", "policy.default_retry.max", "from 0 to 100"},
		{"zero timeout", `{"nodes":[{"id":"a","template":"true","metadata":{"timeout_ms":0}}]}`, "a", "metadata.timeout_ms", "from 1"},
		{"bad priority", `{"nodes":[{"id":"a","template":"true","metadata":{"priority":"urgent"}}]}`, "a", "metadata.priority", "critical, high, normal or low"},
		{"bad concurrency", `{"nodes":[{"id":"a","template":"true"}],"policy":{"max_concurrency":0}}`, "", "policy.max_concurrency", "from 1"},
		{"unknown node key", `{"nodes":[{"id":"a","template":"true","colour":"red"}]}`, "a", "colour", "unknown key"},
		{"reserved spawn key", `{"nodes":[{"id":"a","template":"true","as":"run:x"}]}`, "a", "as", "set by the workflow"},
		{"nothing to run", `{"nodes":[{"id":"a"}]}`, "a", "", "says nothing to run"},
		{"two things to run", `{"nodes":[{"id":"a","template":"true","recipe":"x"}]}`, "a", "recipe+template", "only one"},
		{"prompt without agent", `{"nodes":[{"id":"a","template":"true","prompt":"hi"}]}`, "a", "prompt", "agent"},
		{"agent without model", `{"nodes":[{"id":"a","agent":"engineer","prompt":"hi"}]}`, "a", "model", "needs a model"},
		{"agent without prompt", `{"model":"m","nodes":[{"id":"a","agent":"engineer"}]}`, "a", "prompt", "needs a prompt"},
		{"bad template", `{"nodes":[{"id":"a","template":""}]}`, "a", "template", ""},
		{"values not object", `{"nodes":[{"id":"a","template":"true","values":[1]}]}`, "a", "values", "object"},
		{"upstream not a dependency", `{"nodes":[{"id":"a","template":"true"},{"id":"b","template":"echo {upstream.a.output}"}]}`, "b", "upstream.a", "not among b's dependencies"},
		{"service waited for done", `{"nodes":[{"id":"s","template":"true","service":true},{"id":"b","template":"true","depends_on":["s"]}]}`, "b", "depends_on", "is a service"},
		{"only services", `{"nodes":[{"id":"s","template":"true","service":true}]}`, "", "nodes", "every node is a service"},
		{"child id too long", `{"nodes":[{"id":"` + strings.Repeat("n", 130) + `","template":"true"}]}`, strings.Repeat("n", 130), "id", "longer than 128"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parse(t, c.src)
			var we *workflows.Error
			if !errors.As(err, &we) || !errors.Is(err, workflows.ErrInvalid) {
				t.Fatalf("Parse = %v; want a *workflows.Error", err)
			}
			if we.Node != c.node || we.Field != c.field || !strings.Contains(we.Msg, c.msg) {
				t.Errorf("error node=%q field=%q msg=%q; want node=%q field=%q msg containing %q", we.Node, we.Field, we.Msg, c.node, c.field, c.msg)
			}
		})
	}
}

// TestParseSeedSchema: seed 001's DAG output schema parses as given
// (session_id, prompt, context, metadata.file_operations), layers come
// from execution_order, and node settings and the policy are read.
func TestParseSeedSchema(t *testing.T) {
	w, err := parse(t, `{
	  "id": "workflow-uuid", "session_id": "session-uuid", "prompt": "Original user request", "model": "m1",
	  "nodes": [
	    {"id": "t1", "agent": "librarian", "prompt": "Index current middleware patterns",
	     "context": {"relevant_files": ["src/middleware/"], "reason": "Need to understand existing patterns"},
	     "metadata": {"priority": "high", "timeout_ms": 60000, "retry": {"max": 1, "backoff_ms": 1000}, "file_operations": ["read"]},
	     "depends_on": []},
	    {"id": "t2", "agent": "engineer", "prompt": "Create rate limiter interface",
	     "context": {"upstream_outputs": ["t1"], "constraints": ["Follow existing middleware pattern"]},
	     "metadata": {"priority": "normal", "file_operations": ["create", "write"]}, "depends_on": ["t1"]},
	    {"id": "t3", "template": "echo {upstream.t1.output}", "depends_on": [{"node": "t1", "condition": "done"}]},
	    {"id": "t4", "recipe": "utility-git-log", "values": {"count": 3}, "depends_on": ["t2", "t3"]}
	  ],
	  "execution_order": [["t1"], ["t2", "t3"], ["t4"]],
	  "policy": {"max_concurrency": 4, "fail_fast": true, "default_retry": {"max": 2, "backoff_ms": 2000}}
	}`)
	if err != nil {
		t.Fatal(err)
	}
	if w.ID != "workflow-uuid" || w.Policy.MaxConcurrency != 4 || !w.Policy.FailFast || w.Policy.DefaultRetry != (workflows.Retry{Max: 2, BackoffMS: 2000}) {
		t.Errorf("workflow = %+v", w)
	}
	if got := w.Node("t1").Retry; got != (workflows.Retry{Max: 1, BackoffMS: 1000}) {
		t.Errorf("t1 retry = %+v; want its metadata.retry", got)
	}
	if got := w.Node("t2").Retry; got != (workflows.Retry{Max: 2, BackoffMS: 2000}) {
		t.Errorf("t2 retry = %+v; want the policy's default_retry", got)
	}
	if n := w.Node("t1"); n.TimeoutMS != 60000 || n.Priority != "high" || n.Kind() != "agent" {
		t.Errorf("t1 = %+v", n)
	}
	if w.Node("t3").Kind() != "template" || w.Node("t4").Kind() != "recipe" {
		t.Errorf("kinds: t3 %s, t4 %s", w.Node("t3").Kind(), w.Node("t4").Kind())
	}
	if want := [][]string{{"t1"}, {"t2", "t3"}, {"t4"}}; !equalLayers(w.Layers, want) {
		t.Errorf("layers = %v; want %v", w.Layers, want)
	}
}

// TestLayersComputed: without execution_order a node's layer is one past
// its deepest dependency.
func TestLayersComputed(t *testing.T) {
	w, err := parse(t, `{"nodes":[
	  {"id":"d","template":"true","depends_on":["b","c"]},
	  {"id":"a","template":"true"},
	  {"id":"b","template":"true","depends_on":["a"]},
	  {"id":"c","template":"true","depends_on":["a","b"]},
	  {"id":"x","template":"true"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]string{{"a", "x"}, {"b"}, {"c"}, {"d"}}; !equalLayers(w.Layers, want) {
		t.Errorf("layers = %v; want %v", w.Layers, want)
	}
}

// TestSpawnParams: a template's upstream references become placeholders
// with their values (substituted per word by the engine), values and
// prompts get the text, and an agent node runs subagent-prompt with the
// workflow's model.
func TestSpawnParams(t *testing.T) {
	w, err := parse(t, `{"model":"m1","nodes":[
	  {"id":"a","template":"true"},
	  {"id":"b","depends_on":["a"],"template":["echo {upstream.a.output}","cat {upstream.a.output_file}"],"values":{"v":"got {upstream.a.output}"}},
	  {"id":"c","depends_on":["a"],"agent":"reviewer","prompt":"Review {upstream.a.output}","context":{"upstream_outputs":["a"]}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	up := func(id string) workflows.Upstream {
		return workflows.Upstream{Output: "two words", OutputFile: "/r/wf-" + id + "/stdout.log"}
	}
	p := w.SpawnParams(w.Node("b"), "wf", up)
	if got := template.CompactJSON(p["template"]); got != `["echo {upstream_0_output}","cat {upstream_0_output_file}"]` {
		t.Errorf("template = %s", got)
	}
	vals := p["values"].(map[string]any)
	if vals["upstream_0_output"] != "two words" || vals["upstream_0_output_file"] != "/r/wf-a/stdout.log" || vals["v"] != "got two words" {
		t.Errorf("values = %v", vals)
	}
	if p["as"] != "run:wf-b" {
		t.Errorf("as = %v", p["as"])
	}
	p = w.SpawnParams(w.Node("c"), "wf", up)
	vals = p["values"].(map[string]any)
	prompt, _ := vals["prompt"].(string)
	if p["recipe"] != workflows.AgentRecipe || vals["model"] != "m1" || !strings.HasPrefix(prompt, "Role: reviewer") ||
		!strings.Contains(prompt, "Review two words") || !strings.Contains(prompt, "Output of a") {
		t.Errorf("agent spawn = %v", p)
	}
}

func equalLayers(a, b [][]string) bool {
	return slices.EqualFunc(a, b, func(x, y []string) bool { return slices.Equal(x, y) })
}
