package recipes

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/pi-actors/pi-actors/recipes/template"
)

// Injected are the values the runtime gives every run; they are never
// tool arguments.
var Injected = []string{"actor_address", "communication_file", "default_room", "pi_actors", "run_id", "state_dir"}

// InjectedValues are the Injected values of run id in state directory
// stateDir; bin is the pi-actors CLI ({pi_actors}: packaged actors are
// its hidden verbs).
func InjectedValues(id, stateDir, bin string) map[string]any {
	return map[string]any{
		"run_id": id, "state_dir": stateDir, "actor_address": "run:" + id,
		"default_room": "room:" + id, "communication_file": filepath.Join(stateDir, "communication.json"),
		"pi_actors": bin,
	}
}

// Param is one argument of a recipe tool.
type Param struct {
	Name       string
	Type       template.Type
	Required   bool
	Default    any
	HasDefault bool
}

// Tool is a recipe prepared for invocation: resolved, parsed, with its
// argument schema.
type Tool struct {
	Name     string
	Recipe   *Recipe
	Resolved *Resolved
	Node     *template.Node
	Params   []Param
}

// Tool prepares r for invocation. Explicit `args` types always win over
// placeholder-derived ones; any default (args, defaults, inline, recipe
// values) makes an argument optional. A packaged recipe that declares
// args takes exactly those.
func (rv *Resolver) Tool(r *Recipe) (*Tool, error) {
	res, err := rv.Resolve(r)
	if err != nil {
		return nil, err
	}
	node, err := template.Parse(res.Graph)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, r.Path, err)
	}
	t := &Tool{Name: r.ID, Recipe: r, Resolved: res, Node: node}
	t.Params = params(node, r, IsPackaged(r.Path) || rv.wrapsPackaged(r, res))
	if err := checkValues(r, t.Params); err != nil {
		return nil, err
	}
	return t, nil
}

// checkValues refuses a recipe whose own values do not fit the types of
// its arguments: the recipe is invalid (doctor says so), not the call
// that would have been blamed for them.
func checkValues(r *Recipe, ps []Param) error {
	types := map[string]template.Type{}
	for _, p := range ps {
		types[p.Name] = p.Type
	}
	for _, k := range slices.Sorted(maps.Keys(r.Values)) {
		ty, ok := types[k]
		if !ok || r.Values[k] == nil {
			continue
		}
		if _, err := ty.Normalize(k, r.Values[k]); err != nil {
			return &ValueError{Path: r.Path, Key: k, Err: err}
		}
	}
	return nil
}

// ValueError is a recipe value that does not fit its argument's type.
type ValueError struct {
	Path, Key string
	Err       error
}

func (e *ValueError) Error() string {
	return fmt.Sprintf("%v: %s: values.%s: %v", ErrInvalid, e.Path, e.Key, e.Err)
}

// Unwrap makes a ValueError an ErrInvalid.
func (e *ValueError) Unwrap() error { return ErrInvalid }

// wrapsPackaged reports whether r is an import-wrapper of a packaged
// recipe: its template is one import node (what register_tool writes
// for a template naming a recipe), whose recipe is in the packaged
// library. The wrapper then takes the interface the packaged recipe
// declares, not the knobs of its stages.
func (rv *Resolver) wrapsPackaged(r *Recipe, res *Resolved) bool {
	t, ok := r.Raw["template"].(map[string]any)
	if !ok {
		return false
	}
	alias, _ := t["name"].(string)
	imp, ok := r.Imports[alias]
	if alias == "" || !ok {
		return false
	}
	target, err := rv.importTarget(r, imp, res)
	return err == nil && IsPackaged(target.Path)
}

// params is the argument list of a tool's graph. curated: r is packaged
// or wraps a packaged recipe (see declaredOnly below).
func params(node *template.Node, r *Recipe, curated bool) []Param {
	declared, rootDefaults := node.Declared()
	var out []Param
	index := map[string]int{}
	// run_id names the run an async call starts (call run_id=); a
	// foreground call starts none, so {run_id} is never an argument.
	skip := map[string]bool{"run_id": true}
	if r.Async {
		for _, n := range Injected {
			skip[n] = true
		}
	}
	add := func(p Param) {
		if skip[p.Name] {
			return
		}
		if _, ok := index[p.Name]; ok {
			return
		}
		index[p.Name] = len(out)
		out = append(out, p)
	}
	// A packaged recipe that declares args is a curated component: its
	// own args (the root node's) are its whole interface. The args and
	// placeholders of what it imports (a stage's knobs, the wiring
	// between stages) stay inside, so a call cannot rewire a stage by
	// accident and the schema agents read stays small.
	declaredOnly := curated && len(node.Args) > 0
	own := map[string]bool{}
	for _, a := range node.Args {
		own[a.Name] = true
	}
	for _, a := range declared {
		if declaredOnly && !own[a.Name] {
			continue
		}
		p := Param{Name: a.Name, Type: a.Type}
		if a.HasDefault {
			p.Default, p.HasDefault = a.Default, true
		}
		add(p)
	}
	for _, ref := range node.Refs() {
		if i, ok := index[ref.Name]; ok {
			if !out[i].HasDefault && ref.HasDefault {
				out[i].Default, out[i].HasDefault = ref.Default, true
			}
			continue
		}
		if declaredOnly {
			continue
		}
		p := Param{Name: ref.Name, Type: template.ParseType(ref.Type)}
		if ref.HasDefault {
			p.Default, p.HasDefault = ref.Default, true
		}
		add(p)
	}
	for i := range out {
		p := &out[i]
		// The default shown is the one a call gets: the recipe's values
		// win over its defaults (an import binding's included), which win
		// over an args default, which wins over an inline {n=1}.
		if v, ok := rootDefaults[p.Name]; ok {
			p.Default, p.HasDefault = v, true
		}
		if v, ok := r.Values[p.Name]; ok {
			p.Default, p.HasDefault = v, true
		}
		if !p.HasDefault && node.HasDefaultAnywhere(p.Name) {
			p.HasDefault = true
		}
		// {pi_actors} is given to every call, foreground ones too: a
		// caller may set it (docs/recipes.md), never has to.
		p.Required = !p.HasDefault && p.Name != "pi_actors"
	}
	return out
}

// Types returns the declared type of every parameter.
func (t *Tool) Types() map[string]template.Type {
	types := make(map[string]template.Type, len(t.Params))
	for _, p := range t.Params {
		types[p.Name] = p.Type
	}
	return types
}

// Schema is the JSON Schema of the tool's parameters (the MCP input
// schema). Async recipes take an optional run_id.
func (t *Tool) Schema() map[string]any {
	props := map[string]any{}
	required := []string{}
	for _, p := range t.Params {
		props[p.Name] = paramSchema(p)
		if p.Required {
			required = append(required, p.Name)
		}
	}
	if t.Recipe.Async {
		props["run_id"] = map[string]any{"type": "string", "description": "Optional run id override for this async template recipe invocation."}
	}
	return map[string]any{"type": "object", "additionalProperties": false, "properties": props, "required": required}
}

func paramSchema(p Param) map[string]any {
	s := map[string]any{}
	switch p.Type.Kind {
	case "path":
		s["type"], s["description"] = "string", "Path argument: "+p.Name
	case "int":
		s["type"], s["description"] = "integer", "Int argument: "+p.Name
	case "number":
		s["type"], s["description"] = "number", "Number argument: "+p.Name
	case "bool":
		s["type"], s["description"] = "boolean", "Bool argument: "+p.Name
	case "array":
		s["type"], s["description"], s["items"] = "array", "Array argument: "+p.Name, map[string]any{}
	case "enum":
		s["type"], s["description"], s["enum"] = "string", "Enum argument: "+p.Name, p.Type.Enum
	default:
		s["type"], s["description"] = "string", "Argument: "+p.Name
	}
	if p.HasDefault && p.Default != nil {
		s["default"] = typedDefault(p)
	}
	return s
}

// typedDefault is a default as a value of the argument's own type (recipes
// write defaults as strings: "8" for an int is 8 in the schema, which a
// strict client checks against type).
func typedDefault(p Param) any {
	str, ok := p.Default.(string)
	if !ok {
		return p.Default
	}
	str = strings.TrimSpace(str)
	switch p.Type.Kind {
	case "int":
		if n, err := strconv.ParseInt(str, 10, 64); err == nil {
			return n
		}
	case "number":
		if f, err := strconv.ParseFloat(str, 64); err == nil {
			return f
		}
	case "bool":
		if b, err := strconv.ParseBool(str); err == nil {
			return b
		}
	case "array":
		var a []any
		if json.Unmarshal([]byte(str), &a) == nil {
			return a
		}
	}
	return p.Default
}

// ArgError is a bad call: what is wrong, and the expected call shape.
type ArgError struct {
	Tool string
	Msg  string
	Help string
}

func (e *ArgError) Error() string {
	return fmt.Sprintf("Invalid arguments for tool %q: %s\n\n%s", e.Tool, e.Msg, e.Help)
}

// Values merges the recipe's values, then the caller's parameters (minus
// run_id), and checks them: unknown names are rejected, declared types
// applied. Errors are *ArgError with the expected call shape.
func (t *Tool) Values(params map[string]any) (template.Values, error) {
	if err := t.CheckNames(params); err != nil {
		return nil, err
	}
	vals := template.Values{}
	for k, v := range t.Recipe.Values {
		vals[k] = v
	}
	for k, v := range params {
		if k != "run_id" {
			vals[k] = v
		}
	}
	types := t.Types()
	for k, v := range vals {
		if v == nil {
			continue // null: given empty, the argument dropped (the plan does it)
		}
		if ty, ok := types[k]; ok {
			nv, err := ty.Normalize(k, v)
			if err != nil {
				return nil, t.ArgError(err)
			}
			vals[k] = nv
		}
	}
	return vals, nil
}

// CheckRequired refuses values (the recipe's and the caller's, as
// Values merged them) that leave a required argument without one, as an
// *ArgError with the call shape; how says how the caller gives values
// (e.g. "spawn takes them in values:='{…}'"; <name> in it becomes the
// first missing name). The values the runtime injects are never missing.
func (t *Tool) CheckRequired(vals map[string]any, how string) error {
	var missing []string
	for _, p := range t.Params {
		if _, given := vals[p.Name]; p.Required && !given && !slices.Contains(Injected, p.Name) {
			missing = append(missing, p.Name)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return t.ArgError(fmt.Errorf("missing value(s) for %s: %s", strings.Join(missing, ", "), strings.ReplaceAll(how, "<name>", missing[0])))
}

// CheckNames refuses parameters the tool does not take (run_id only for
// an async recipe), as an *ArgError with the expected call shape.
func (t *Tool) CheckNames(params map[string]any) error {
	known := map[string]bool{"run_id": t.Recipe.Async}
	for _, p := range t.Params {
		known[p.Name] = true
	}
	var unknown []string
	for k := range params {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	return t.ArgError(fmt.Errorf("unknown argument(s): %s", strings.Join(unknown, ", ")))
}

// ArgError wraps a normalisation or missing-value error with the call
// shape; other errors pass through.
func (t *Tool) ArgError(err error) error {
	var te *template.Error
	msg := err.Error()
	if errors.As(err, &te) {
		if !strings.Contains(te.Msg, "missing value") && !strings.HasPrefix(te.Path, "values.") {
			return err
		}
		msg = te.Msg
		if te.Missing == "run_id" && !t.Recipe.Async {
			msg = fmt.Sprintf("the template uses {run_id}, and %s runs in the foreground: it starts no run, so it has no run id (spawn it as a run: pi-actors spawn recipe=%s as=run:<id>, or make the recipe async)", t.Name, t.Name)
		}
	}
	return &ArgError{Tool: t.Name, Msg: msg, Help: t.CallShape()}
}

// CallShape is the guidance printed with a bad call: an example call with
// every argument, then the required and optional names.
func (t *Tool) CallShape() string {
	example := map[string]any{}
	var req, opt []string
	for _, p := range t.Params {
		example[p.Name] = exampleValue(p)
		if p.Required {
			req = append(req, p.Name)
		} else {
			opt = append(opt, p.Name)
		}
	}
	if t.Recipe.Async {
		opt = append(opt, "run_id")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	enc.Encode(example)
	return fmt.Sprintf("Expected call shape for %s:\n%s(%s)\nRequired: %s\nOptional: %s", t.Name, t.Name, strings.TrimSuffix(buf.String(), "\n"), listOrNone(req), listOrNone(opt))
}

func exampleValue(p Param) any {
	if p.HasDefault && p.Default != nil {
		if s, ok := p.Default.(string); ok {
			switch p.Type.Kind {
			case "int", "number":
				return json.Number(s)
			case "bool":
				b, _ := strconv.ParseBool(s)
				return b || strings.EqualFold(s, "yes")
			case "array":
				if v, err := template.DecodeJSON([]byte(s)); err == nil {
					return v
				}
			}
		}
		return p.Default
	}
	switch p.Type.Kind {
	case "path":
		return "./" + p.Name
	case "int":
		return 1
	case "number":
		return 1.5
	case "bool":
		return true
	case "array":
		return []string{"<" + p.Name + ">"}
	case "enum":
		return p.Type.Enum[0]
	}
	return "<" + p.Name + ">"
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
