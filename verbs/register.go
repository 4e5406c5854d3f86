package verbs

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"strings"

	"github.com/pi-actors/pi-actors/internal/termtext"
	"github.com/pi-actors/pi-actors/recipes"
)

// RegisterTool creates, updates, lists, deletes or promotes user recipes.
type RegisterTool struct {
	Name        LooseString `json:"name,omitzero" jsonschema:"the tool name (normalised: My Tool! → my_tool)"`
	Description LooseString `json:"description,omitzero" jsonschema:"what the tool does (required for a new tool)"`
	Template    Value       `json:"template,omitzero" jsonschema:"a command template string, a JSON graph, or the name or path of an existing recipe (an import-wrapper is written); empty or null deletes the tool"`
	Args        Value       `json:"args,omitzero" jsonschema:"argument declarations: \"a, b:int=3\" or [\"a\", \"b:int=3\"]"`
	Defaults    LooseObject `json:"defaults,omitzero" jsonschema:"placeholder defaults"`
	Async       LooseBool   `json:"async,omitzero" jsonschema:"the tool starts a detached run instead of running in the foreground"`
	StateDir    LooseString `json:"state_dir,omitzero" jsonschema:"the state directory of its runs"`
	Values      LooseObject `json:"values,omitzero" jsonschema:"fixed placeholder values"`
	Update      LooseBool   `json:"update,omitzero" jsonschema:"overwrite an existing tool; fields not given are kept"`
	Draft       LooseString `json:"draft,omitzero" jsonschema:"promote this draft (a path under <agent>/recipes/drafts)"`
	DryRun      Bool        `json:"dry_run,omitempty" jsonschema:"validate and print the file without writing it"`
}

// Validate is done by recipes.ParseRegistration, with register_tool's own
// messages.
func (r *RegisterTool) Validate() error { return nil }

// params returns the parameters that were given, as recipes expects them.
func (r *RegisterTool) params() map[string]any {
	out := map[string]any{}
	v := reflect.ValueOf(r).Elem()
	for _, f := range fields(v.Type()) {
		fv := v.FieldByIndex(f.index)
		var val Value
		switch x := fv.Interface().(type) {
		case Value:
			val = x
		case LooseString:
			val = x.Value
		case LooseObject:
			val = x.Value
		case LooseBool:
			val = x.Value
		default:
			continue
		}
		if val.Set {
			out[f.name] = val.V
		}
	}
	return out
}

func init() {
	Register(&Spec{
		Name:    "register_tool",
		Summary: "create, update, list, delete or promote user recipes",
		Flags:   map[string]string{"--dry-run": "dry_run"},
		Tool:    &Annotations{},
		Usage: `pi-actors register_tool [name=<tool> ...] [--dry-run] [--json]

Writes <agent>/recipes/<name>.json — a recipe that is an agent tool by
location — after validating it in full; the write is atomic, and a bad
request writes nothing.

  (no parameters)              list the registered tools
  name=<n> template=<t>        register; t is a command template string,
                               template:=<JSON> for a graph, or the name or
                               .json/.md path of an existing recipe (an
                               import-wrapper is written for it)
  description=<text>           required for new tools (a wrapper defaults to
                               the wrapped recipe's description)
  args=<a,b:int=3>             argument declarations (or args:='[...]');
                               name=default entries become defaults
  defaults:=<obj> values:=<obj> async=true state_dir=<dir>
  update=true                  overwrite an existing tool; fields not given
                               are kept
  name=<n> template=           delete <agent>/recipes/<n>.json (or template:=null)
  name=<n> draft=<path>        promote a draft from <agent>/recipes/drafts

Names are normalised ("My Tool!" → my_tool, 123abc → tool_123abc).
--dry-run validates and prints the file without writing it.

Examples:
  pi-actors register_tool name=git_status template=utility-git-status
  pi-actors register_tool name=greet description="Say hello" template='echo hello {who=world}'
  pi-actors register_tool name=greet template=`,
		New: func() Request { return new(RegisterTool) },
		Run: runRegister,
	})
}

func runRegister(_ context.Context, env *Env, req Request) (*Outcome, error) {
	r := req.(*RegisterTool)
	home, _ := os.UserHomeDir()
	rg := &recipes.Registrar{AgentDir: env.AgentDir, Home: home, Cwd: env.Cwd}
	params := r.params()
	if len(params) == 0 {
		names, err := rg.List()
		if err != nil {
			return nil, err
		}
		text := "No registered tools."
		if len(names) > 0 {
			shown := make([]string, len(names))
			for i, n := range names {
				shown[i] = termtext.Visible(n) // a file name's newline starts no line of its own
			}
			text = "Registered tools:\n- " + strings.Join(shown, "\n- ")
		}
		return &Outcome{Text: text, Result: map[string]any{"tools": names}}, nil
	}
	if name, ok := params["name"].(string); ok {
		// The verbs are tools of the MCP server and the pi extension: a
		// recipe tool of the same name was listed under neither.
		if n := recipes.NormalizeName(name); n != "" && recipes.SpeltLikeVerb(n, Names()) {
			return nil, &Error{Exit: ExitDataErr, Code: "invalid_data", Message: fmt.Sprintf("reserved tool name: %s is a pi-actors verb (pi-actors help lists them)", n),
				Hint: fmt.Sprintf("choose another name, e.g. name=%s_tool", n)}
		}
	}
	reg, err := recipes.ParseRegistration(params)
	if err != nil {
		return nil, err
	}
	reg.DryRun = bool(r.DryRun)
	out, err := rg.Register(reg)
	if err != nil {
		return nil, err
	}
	text := out.Message()
	if out.DryRun {
		text += "\n" + string(out.Document)
	}
	return &Outcome{Text: text, Result: out.Result()}, nil
}
