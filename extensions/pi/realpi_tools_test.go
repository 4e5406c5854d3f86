package piext

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/pi-actors/pi-actors/extensions/pi/pitest"
)

func call(name string, args any) pitest.Step { return pitest.Call(name, args) }

// TestRealPiKnowledgeTools: the scripted model uses the knowledge tools
// through real pi — creates an atom, appends to its changelog, asks for
// the context of a file it owns, searches and recalls a decision — and
// each tool result is the real CLI's; the schemas pi offered are the
// catalogue's.
func TestRealPiKnowledgeTools(t *testing.T) {
	const uuid = `([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})`
	r := newRealPi(t,
		call("manage_graph", map[string]any{"operation": "create", "entityType": "atom", "name": "Retry",
			"paths": []string{"src/retry/**"}, "knowledge": "RETRY-KNOWLEDGE backoff", "createdByTaskId": "pi-test"}).On("^use the memory$"),
		pitest.Step{Match: `atom=` + uuid + ` name="Retry"`, Tools: []pitest.ToolCall{{Name: "manage_changelog",
			Args: json.RawMessage(`{"operation":"append","parentType":"atom","parentId":"{{1}}","summary":"SPLIT-HANDLER","taskId":"pi-test"}`)}}},
		call("query_graph", map[string]any{"operation": "context", "paths": []string{"src/retry/policy.ts"}}).On(`changelog=`),
		call("search_all", map[string]any{"query": "exponential backoff jitter"}).On(`orphan atom .*"Retry"`),
		call("recall", map[string]any{"query": "exponential backoff jitter"}).On(`history: status=ok`),
		pitest.Text("remembered").On(`status=ok hits=1 stores=project,personal`),
	)
	r.cli("knowledge", "init")
	r.cli("knowledge", "node_add", "domain=history", "type=decision", "name=retry policy", "content=RETRY-DECISION: exponential backoff with jitter")

	out := r.run("use the memory")
	names, texts := toolResults(out)
	if want := "manage_graph,manage_changelog,query_graph,search_all,recall"; strings.Join(names, ",") != want {
		t.Fatalf("tool calls %v, want %s\n%s", names, want, r.dump())
	}
	for i, want := range []string{`name="Retry"`, "SPLIT-HANDLER", "RETRY-KNOWLEDGE backoff", "RETRY-DECISION", "RETRY-DECISION"} {
		if !strings.Contains(texts[i], want) {
			t.Errorf("%s result lacks %q:\n%s", names[i], want, texts[i])
		}
	}
	if !strings.Contains(texts[2], "SPLIT-HANDLER") {
		t.Errorf("context lacks the changelog entry:\n%s", texts[2])
	}
	// What pi offered the model: the knowledge tools with the catalogue's schemas.
	var body struct {
		Tools []struct {
			Function struct {
				Name       string          `json:"name"`
				Parameters json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(r.model.Requests()[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	offered := map[string]json.RawMessage{}
	for _, tl := range body.Tools {
		offered[tl.Function.Name] = tl.Function.Parameters
	}
	var catalogue struct {
		Result struct {
			Tools []struct {
				Name        string          `json:"name"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
		} `json:"result"`
	}
	json.Unmarshal([]byte(r.cli("schema", "--json")), &catalogue)
	for _, want := range []string{"recall", "query_graph", "manage_graph", "manage_changelog", "search_all", "spawn", "message", "inspect"} {
		got, ok := offered[want]
		if !ok {
			t.Errorf("pi did not offer %s (offered %v)", want, r.model.Requests()[0].Tools)
			continue
		}
		for _, c := range catalogue.Result.Tools {
			if c.Name == want && !sameJSON(got, c.InputSchema) {
				t.Errorf("%s: pi sent parameters %s, the catalogue has %s", want, got, c.InputSchema)
			}
		}
	}
	for _, not := range []string{"search", "smart_search", "call", "register_tool", "mailbox"} {
		if _, ok := offered[not]; ok {
			t.Errorf("%s is offered by default", not)
		}
	}
}

// sameJSON compares two JSON documents by value.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

// TestRealPiToolsSetting: [pi] tools in pi-actors.toml chooses what pi
// sees; PI_ACTORS_PI_TOOLS replaces it; an unknown name is logged and
// ignored.
func TestRealPiToolsSetting(t *testing.T) {
	r := newRealPi(t, pitest.Text("ok").On("^one$"))
	r.toml("[pi]\ntools = [\"recall\", \"query_graph\", \"utility-git-*\", \"no_such_tool\"]\n")
	r.run("one")
	got := ours(r.last().Tools)
	if want := []string{"query_graph", "recall", "utility-git-log", "utility-git-status"}; !slices.Equal(got, want) {
		t.Fatalf("[pi] tools: pi offered %v, want %v", got, want)
	}
	if log := r.extLog(); !strings.Contains(log, "[pi] tools names no_such_tool, which pi-actors does not offer") {
		t.Fatalf("the unknown name is not logged:\n%s", log)
	}

	r.script(pitest.Text("ok").On("^two$"))
	r.run("two", "PI_ACTORS_PI_TOOLS=!manage_*,!utility-*,!subagent*,!pipeline-*,!actor-worker,!locker,!room-swarm,smart_search,default")
	got = ours(r.last().Tools)
	if want := []string{"inspect", "message", "query_graph", "recall", "search_all", "smart_search", "spawn"}; !slices.Equal(got, want) {
		t.Fatalf("PI_ACTORS_PI_TOOLS: pi offered %v, want %v", got, want)
	}
}

// ours drops pi's own tools and sorts the rest.
func ours(tools []string) []string {
	var out []string
	for _, n := range tools {
		if !slices.Contains([]string{"read", "bash", "edit", "write", "grep", "find", "ls"}, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}
