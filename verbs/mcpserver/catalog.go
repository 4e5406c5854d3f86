package mcpserver

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/pi-actors/pi-actors/internal/lazyre"
	"github.com/pi-actors/pi-actors/knowledge/api/graphop"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/recipes"
	"github.com/pi-actors/pi-actors/verbs"
)

// ToolDef is one tool of the catalogue: a core verb or a recipe.
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Annotations Hints           `json:"annotations"`
	// Recipe names the recipe a recipe tool calls (as `call`).
	Recipe string `json:"recipe,omitempty"`
	// Verb names the verb a core tool runs.
	Verb string `json:"verb,omitempty"`
}

// Hints are a tool's annotations, every one set explicitly.
type Hints struct {
	ReadOnly    bool `json:"readOnlyHint"`
	Destructive bool `json:"destructiveHint"`
	Idempotent  bool `json:"idempotentHint"`
	OpenWorld   bool `json:"openWorldHint"`
}

// coreTools are the verbs every front door exposes as tools, in order;
// every other verb whose Spec has Tool set follows (the knowledge
// operations query_graph, manage_graph, manage_changelog).
var coreTools = []string{"spawn", "message", "inspect", "call", "register_tool", "mailbox"}

// toolVerbs lists coreTools, then the other tool verbs in registration
// order.
func toolVerbs() []string {
	out := slices.Clone(coreTools)
	for _, s := range verbs.All() {
		if s.Tool != nil && !slices.Contains(out, s.Name) {
			out = append(out, s.Name)
		}
	}
	return out
}

// Schema is the JSON Schema of a verb's parameters, generated from its
// request type (json names, jsonschema descriptions, omitempty/omitzero
// for optional), without its internal parameters and those only a
// terminal's caller can use.
func Schema(s *verbs.Spec) (*jsonschema.Schema, error) {
	t := reflect.TypeOf(s.New()).Elem()
	sch, err := jsonschema.ForType(t, &jsonschema.ForOptions{TypeSchemas: typeSchemas()})
	if err != nil {
		return nil, fmt.Errorf("schema of %s: %w", s.Name, err)
	}
	for name, values := range s.Enums {
		if p := sch.Properties[name]; p != nil {
			for _, v := range values {
				p.Enum = append(p.Enum, v)
			}
		}
	}
	for _, name := range slices.Concat(s.Internal, s.Terminal) {
		delete(sch.Properties, name)
		sch.PropertyOrder = slices.DeleteFunc(sch.PropertyOrder, func(n string) bool { return n == name })
	}
	// The CLI's flags are parameters of the JSON form too; the schema says
	// what a client sends, so additionalProperties stays false.
	return sch, nil
}

// typeSchemas are the schemas of the verb layer's lenient types, as JSON
// clients should send them.
func typeSchemas() map[reflect.Type]*jsonschema.Schema {
	return map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[verbs.Int]():         {Type: "integer"},
		reflect.TypeFor[verbs.Bool]():        {Type: "boolean"},
		reflect.TypeFor[verbs.Text]():        {Type: "string"},
		reflect.TypeFor[verbs.Value]():       {},
		reflect.TypeFor[verbs.LooseString](): {Type: "string"},
		reflect.TypeFor[verbs.LooseObject](): {Type: "object"},
		reflect.TypeFor[verbs.LooseBool]():   {Type: "boolean"},
		reflect.TypeFor[verbs.LooseInt]():    {Type: "integer"},
		reflect.TypeFor[json.RawMessage]():   {},
		// spawn's watch: "a,b" or ["a","b"].
		reflect.TypeFor[verbs.Globs](): {Types: []string{"string", "array"}, Items: &jsonschema.Schema{Type: "string"}},
		reflect.TypeFor[any]():         {},
		// The knowledge graph's array parameters: the spec's JSON-array
		// strings, or the arrays themselves.
		reflect.TypeFor[graphop.Patterns](): {Types: []string{"string", "array"}, Items: &jsonschema.Schema{Type: "string"}},
		reflect.TypeFor[op.PathList]():      {Types: []string{"string", "array"}, Items: &jsonschema.Schema{Type: "string"}},
		// "a,b" or ["a","b"] (search_all's domains): the comma form the
		// docs show was outside the schema.
		reflect.TypeFor[op.StringList]():            {Types: []string{"string", "array"}, Items: &jsonschema.Schema{Type: "string"}},
		reflect.TypeFor[graphop.RelatedAtoms]():     {Types: []string{"string", "array"}, Items: relatedSchema("atomId")},
		reflect.TypeFor[graphop.RelatedMolecules](): {Types: []string{"string", "array"}, Items: relatedSchema("moleculeId")},
	}
}

// relatedSchema is one {<id>, reason} entry of a related array.
func relatedSchema(id string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", Required: []string{id},
		Properties: map[string]*jsonschema.Schema{
			id:       {Type: "string", Description: "the related entity's id"},
			"reason": {Type: "string", Description: "how the two relate"},
		}}
}

// CoreTools describes the core verbs as tools.
func CoreTools() ([]ToolDef, error) {
	var out []ToolDef
	for _, name := range toolVerbs() {
		s := verbs.Find(name)
		if s == nil {
			return nil, fmt.Errorf("verb %s is not registered", name)
		}
		sch, err := Schema(s)
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(sch)
		if err != nil {
			return nil, fmt.Errorf("schema of %s: %w", name, err)
		}
		a := s.Tool
		if a == nil {
			a = &verbs.Annotations{}
		}
		out = append(out, ToolDef{Name: name, Verb: name, Description: s.Summary + ".\n\n" + s.Usage, InputSchema: b,
			Annotations: Hints{ReadOnly: a.ReadOnly, Destructive: a.Destructive, Idempotent: a.Idempotent}})
	}
	return out, nil
}

var toolNameRe = lazyre.New(`[^A-Za-z0-9_-]+`)

// maxToolDescription bounds a recipe tool's listed description.
const maxToolDescription = 2 << 10

// RecipeTools describes every active user and packaged recipe as a tool
// (the schema of its typed args; calling it is `call <recipe>`), sorted by
// name. A recipe whose tool name is spelt like a verb — any verb, tool or
// not, in any case, - or _ (recipes.ShadowOf) — is left out: the verb
// wins. One spelt like a pi built-in only (Bash) stays: nothing here has
// that name (the pi extension leaves it out).
func RecipeTools(env *verbs.Env) ([]ToolDef, error) {
	g, err := recipes.Discover(env.AgentDir)
	if err != nil {
		return nil, err
	}
	rv := verbs.Resolver(env)
	var out []ToolDef
	seen := map[string]bool{}
	verbNames := verbs.Names()
	ids := make([]string, 0, len(g.Active))
	for id := range g.Active {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	nameOf := func(id string) string {
		name := toolNameRe.ReplaceAllString(id, "_")
		if len(name) > 64 {
			name = name[:64]
		}
		return name
	}
	// A name two recipes would share (a.b and a_b are both a_b) is the
	// recipe's whose id it is; a name only other spellings share is
	// nobody's (it ran whichever sorted first). Those recipes are still
	// reached through the call tool (recipe=<id>).
	exact, spellings := map[string]bool{}, map[string]int{}
	for _, id := range ids {
		if n := nameOf(id); n == id {
			exact[n] = true
		} else {
			spellings[n]++
		}
	}
	for _, id := range ids {
		e := g.Active[id]
		if e.Recipe == nil || e.Disabled() || (e.Layer != recipes.LayerPackaged && e.Invalid()) {
			continue
		}
		tool, err := rv.Tool(e.Recipe)
		if err != nil {
			continue
		}
		name := nameOf(id)
		if name != id && (exact[name] || spellings[name] > 1) {
			continue
		}
		if seen[name] || recipes.SpeltLikeVerb(name, verbNames) {
			continue
		}
		seen[name] = true
		schema := tool.Schema()
		if e.Recipe.Async {
			props, _ := schema["properties"].(map[string]any)
			if props != nil {
				props["run_id"] = map[string]any{"type": "string", "description": "the id of the run this async recipe starts (default <recipe>-<ms>)"}
			}
		}
		b, err := json.Marshal(schema)
		if err != nil {
			continue
		}
		desc := e.Recipe.Description
		if desc == "" {
			desc = "Run the recipe " + id
		}
		if len(desc) > maxToolDescription {
			// tools/list is read whole by every client: a recipe's long
			// description is cut, and says where the rest is.
			desc = strings.ToValidUTF8(desc[:maxToolDescription], "") + "… (cut; the whole description: " + e.Path + ")"
		}
		if e.Recipe.Async {
			desc += " (async: starts a detached run and returns its address)"
		}
		out = append(out, ToolDef{Name: name, Recipe: id, Description: desc, InputSchema: b,
			Annotations: Hints{Destructive: risky(rv, e.Recipe)}})
	}
	return out, nil
}

// risky reports whether a recipe's commands carry a risk label other than
// long-running (shell, eval, writes…): such a tool is marked destructive.
func risky(rv *recipes.Resolver, r *recipes.Recipe) bool {
	labels, _, err := rv.Risk(r)
	if err != nil {
		return true
	}
	for _, l := range labels {
		if l != "risk.long_running" {
			return true
		}
	}
	return false
}

// Catalog is every tool: the core verbs, then the recipes.
func Catalog(env *verbs.Env) ([]ToolDef, error) {
	core, err := CoreTools()
	if err != nil {
		return nil, err
	}
	rec, err := RecipeTools(env)
	if err != nil {
		return core, err
	}
	return append(core, rec...), nil
}
