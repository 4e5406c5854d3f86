package recipes

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/pi-actors/pi-actors/recipes/template"
)

// packagedIDs lists every recipe of the packaged library.
func packagedIDs(t *testing.T) []string {
	t.Helper()
	entries, err := library.ReadDir("library")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range entries {
		ids = append(ids, strings.TrimSuffix(e.Name(), ".json"))
	}
	return ids
}

// mailboxType is PARITY A7's form of a mailbox type: channel.action.
var mailboxType = regexp.MustCompile(`^[a-z][a-z0-9_-]*\.([a-z][a-z0-9_-]*|\*)$`)

// providers are model providers no packaged default may name.
var providers = regexp.MustCompile(`(?i)\b(openai|anthropic|google|gemini|claude|gpt-|mistral|ollama|openrouter|deepseek|codex)`)

// TestPackagedLibraryConventions checks PARITY A7's conventions on every
// packaged recipe: it loads with a description and no warnings, prepares
// as a tool; an async recipe declares a mailbox accepting control.kill;
// only the locker accepts control.stop/cancel; mailbox types are
// channel.action; no default names a concrete model or a provider.
func TestPackagedLibraryConventions(t *testing.T) {
	ids := packagedIDs(t)
	if len(ids) < 30 {
		t.Fatalf("packaged library holds %d recipes", len(ids))
	}
	rv := &Resolver{AgentDir: t.TempDir(), Home: t.TempDir()}
	for _, id := range ids {
		r, err := Load("pkg:" + id + ".json")
		if err != nil {
			t.Errorf("%s: %v", id, err)
			continue
		}
		if r.Description == "" || len(r.Warnings) > 0 {
			t.Errorf("%s: description %q warnings %q", id, r.Description, r.Warnings)
		}
		if _, err := rv.Tool(r); err != nil {
			t.Errorf("%s does not prepare as a tool: %v", id, err)
		}
		if r.Async && (r.Mailbox == nil || !r.Mailbox.Allows("control.kill")) {
			t.Errorf("%s is async but its mailbox does not accept control.kill", id)
		}
		if r.Mailbox != nil {
			for _, e := range append(append([]MailboxEntry{}, r.Mailbox.Accepts...), r.Mailbox.Emits...) {
				if !mailboxType.MatchString(e.Type) && e.Type != "awaiting_assignment" {
					t.Errorf("%s: mailbox type %q is not channel.action", id, e.Type)
				}
			}
			for _, e := range r.Mailbox.Accepts {
				if (e.Type == "control.stop" || e.Type == "control.cancel") && id != "locker" {
					t.Errorf("%s accepts %s: only the locker does", id, e.Type)
				}
			}
		}
		raw, _ := readFile("pkg:" + id + ".json")
		var doc any
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		checkModelDefaults(t, id, doc)
	}
}

// checkModelDefaults walks every defaults and values object (and args
// declarations): a key naming a model may only refer to another value,
// and no default names a provider.
func checkModelDefaults(t *testing.T, id string, v any) {
	t.Helper()
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if k == "defaults" || k == "values" {
				if m, ok := val.(map[string]any); ok {
					for dk, dv := range m {
						s, _ := dv.(string)
						if (dk == "model" || dk == "models" || strings.HasSuffix(dk, "_model")) && !strings.Contains(s, "{") {
							t.Errorf("%s: a concrete model default %s=%v", id, dk, dv)
						}
						if b, _ := json.Marshal(dv); providers.Match(b) {
							t.Errorf("%s: default %s names a provider: %s", id, dk, b)
						}
					}
				}
			}
			if k == "args" {
				if list, ok := val.([]any); ok {
					for _, a := range list {
						s, _ := a.(string)
						if name, def, ok := strings.Cut(s, "="); ok && strings.Contains(name, "model") && def != "" {
							t.Errorf("%s: args default a model: %s", id, s)
						}
					}
				}
			}
			checkModelDefaults(t, id, val)
		}
	case []any:
		for _, e := range x {
			checkModelDefaults(t, id, e)
		}
	}
}

// TestPackagedSubagentAtoms: every pi leaf of the library runs pi
// non-interactively with the caller's model, a thinking level, and tools
// off unless given — and then no extensions either (a sub-agent with no
// tools has no use for the pi-actors extension's bridge, watcher and
// schema: ~150 MiB per sub-agent).
func TestPackagedSubagentAtoms(t *testing.T) {
	leaf := regexp.MustCompile(`^pi -p --model \{model\} --thinking \{thinking\} (\{tools\?--tools:--no-tools\} \{tools\?:--no-extensions\} \{tools\}|--tools \{tools\}) '`)
	for _, id := range packagedIDs(t) {
		raw, _ := readFile("pkg:" + id + ".json")
		for _, m := range regexp.MustCompile(`"(pi [^"]*)`).FindAllStringSubmatch(string(raw), -1) {
			if !leaf.MatchString(m[1]) {
				t.Errorf("%s: pi leaf %.80q does not run pi -p --model {model} --thinking {thinking} with tools off by default", id, m[1])
			}
		}
		r, _ := Load("pkg:" + id + ".json")
		if strings.HasPrefix(id, "subagent") && r != nil {
			var doc struct {
				Args []string `json:"args"`
			}
			json.Unmarshal(raw, &doc)
			for _, a := range doc.Args {
				if strings.HasPrefix(a, "thinking=") && a != "thinking=off" && a != "thinking=medium" {
					t.Errorf("%s: %s (A7: off or medium)", id, a)
				}
			}
		}
	}
}

// TestPackagedLibraryDocumented: docs/recipes.md names every packaged
// recipe in a table row.
func TestPackagedLibraryDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/recipes.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range packagedIDs(t) {
		if !strings.Contains(string(doc), "| `"+id+"` |") {
			t.Errorf("docs/recipes.md has no table row for the packaged recipe %s", id)
		}
	}
}

// TestPackagedPipelinesOwnTheirComponents: packaged recipes import their
// components by path (./x.json), so a user recipe of the same name — a
// broken one, or another tool that happens to share it — changes nothing.
func TestPackagedPipelinesOwnTheirComponents(t *testing.T) {
	agent := t.TempDir()
	root := UserRoot(agent)
	os.MkdirAll(root, 0o755)
	os.WriteFile(root+"/utility-git-log.json", []byte(`{"template": `), 0o644)
	os.WriteFile(root+"/subagent-review.json", []byte(`{"template": "echo mine"}`), 0o644)
	rv := &Resolver{AgentDir: agent, Home: t.TempDir()}
	for _, id := range packagedIDs(t) {
		r, err := Load("pkg:" + id + ".json")
		if err != nil {
			t.Fatal(err)
		}
		res, err := rv.Resolve(r)
		if err != nil {
			t.Errorf("%s: %v", id, err)
			continue
		}
		if b, _ := json.Marshal(res.Graph); strings.Contains(string(b), "echo mine") {
			t.Errorf("%s imports the user's subagent-review", id)
		}
	}
}

// TestPackagedRecipesPlanWithTheirArgs: every packaged recipe plans with
// values for its required args only (and the values a run injects):
// each placeholder of what it imports has a default or is wired to one of
// its args.
func TestPackagedRecipesPlanWithTheirArgs(t *testing.T) {
	rv := &Resolver{AgentDir: t.TempDir(), Home: t.TempDir()}
	for _, id := range packagedIDs(t) {
		r, _ := Load("pkg:" + id + ".json")
		tool, err := rv.Tool(r)
		if err != nil {
			t.Fatal(err)
		}
		args := map[string]any{}
		for _, p := range tool.Params {
			if !p.Required {
				continue
			}
			switch p.Type.Kind {
			case "array":
				args[p.Name] = []any{"a", "b"}
			case "int":
				args[p.Name] = 1
			default:
				args[p.Name] = "x"
			}
		}
		vals, err := tool.Values(args)
		if err != nil {
			t.Errorf("%s: %v", id, err)
			continue
		}
		if r.Async {
			for k, v := range map[string]any{"run_id": "r", "state_dir": "/tmp/r", "actor_address": "run:r", "default_room": "room:r",
				"communication_file": "/tmp/r/communication.json", "pi_actors": "pi-actors"} {
				vals[k] = v
			}
		}
		plan, err := template.NewPlan(tool.Node, vals, template.Options{Dir: t.TempDir(), Types: tool.Types()})
		if err != nil {
			t.Errorf("%s does not plan with its required args %v: %v", id, args, err)
			continue
		}
		if b, _ := json.Marshal(plan.Root); strings.Contains(string(b), "{model}") || strings.Contains(string(b), "{scope}") {
			t.Errorf("%s: a placeholder left unresolved in the plan", id)
		}
	}
}
