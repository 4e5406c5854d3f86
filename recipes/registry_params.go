package recipes

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/pi-actors/pi-actors/internal/lazyre"
	"github.com/pi-actors/pi-actors/recipes/template"
)

// The register_tool request: its parameters, their checks and the tool
// name rules. registry.go carries requests out.

// ErrConflict marks a registration that would overwrite an existing tool
// without update=true.
var ErrConflict = errors.New("tool already registered")

// RegisterParams are the parameters register_tool accepts.
var RegisterParams = []string{"name", "description", "template", "args", "defaults", "async", "state_dir", "values", "update", "draft"}

// ReservedNames are tool names register_tool refuses: pi's own tools
// (PiBuiltins) and the pi-actors verbs the MCP server and pi offer most.
// (pi-actors normalises to pi_actors.) The verb refuses every other verb
// too (ShadowOf).
var ReservedNames = append(append([]string{}, PiBuiltins...), "register_tool", "message", "spawn", "inspect", "call", "exec", "pi-actors", "pi_actors")

// MaxNameLength bounds a normalised tool name.
const MaxNameLength = 64

// RegisterError is a register_tool request that cannot be carried out: the
// parameter at fault, what is wrong and how to fix it. It wraps
// ErrInvalid, ErrNotFound or ErrConflict.
type RegisterError struct {
	Field string
	Msg   string
	Hint  string
	Err   error
}

func (e *RegisterError) Error() string { return e.Msg }

func (e *RegisterError) Unwrap() error { return e.Err }

func regErr(field string, kind error, hint, format string, args ...any) *RegisterError {
	return &RegisterError{Field: field, Msg: fmt.Sprintf(format, args...), Hint: hint, Err: kind}
}

// Registration is one register_tool request. Optional fields are nil (or
// their Has flag false) when the request does not give them. An update
// keeps what it does not give: the description, async, state_dir and any
// field register_tool does not manage (usage, mailbox, artifacts…); the
// template with its imports, args, defaults and values when it gives no
// template.
type Registration struct {
	Name        string
	Description *string
	Template    any // a string, an array or an object; nil or "" deletes
	HasTemplate bool
	Args        []template.Arg
	HasArgs     bool
	Defaults    map[string]any // nil when not given
	Values      map[string]any // nil when not given
	Async       *bool
	StateDir    *string
	Update      bool
	Draft       string
	// DryRun validates and renders the file without writing it.
	DryRun bool
}

// ParseRegistration decodes register_tool parameters (as decoded JSON:
// strings, json.Number, bool, nil, []any, map[string]any). Booleans may
// also be the strings true/false/yes/no/1/0, as the CLI's key=value form
// gives them.
func ParseRegistration(params map[string]any) (*Registration, error) {
	req := &Registration{}
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := params[k]
		var err error
		switch k {
		case "name":
			req.Name, err = paramString(k, v)
		case "draft":
			req.Draft, err = paramString(k, v)
		case "description":
			if v != nil {
				var s string
				s, err = paramString(k, v)
				req.Description = &s
			}
		case "state_dir":
			if v != nil {
				var s string
				s, err = paramString(k, v)
				req.StateDir = &s
			}
		case "template":
			req.Template, req.HasTemplate = v, true
		case "args":
			req.HasArgs = true
			req.Args, err = template.ParseArgs(v)
			if err != nil {
				err = regErr("args", ErrInvalid, `write args="file:path, n:int=3" or args:='["file:path","n:int=3"]'`, "args: %v", err)
			}
		case "defaults", "values":
			var m map[string]any
			m, err = paramObject(k, v)
			if k == "defaults" {
				req.Defaults = m
			} else {
				req.Values = m
			}
		case "async":
			if v != nil {
				var b bool
				b, err = paramBool(k, v)
				req.Async = &b
			}
		case "update":
			req.Update, err = paramBool(k, v)
		default:
			err = regErr(k, ErrInvalid, "register_tool takes: "+strings.Join(RegisterParams, ", "), "unknown parameter %s", k)
		}
		if err != nil {
			return nil, err
		}
	}
	return req, nil
}

func paramString(key string, v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return strings.TrimSpace(x), nil
	}
	return "", regErr(key, ErrInvalid, fmt.Sprintf("pass %s=<text>", key), "%s must be a string (got %s)", key, template.CompactJSON(v))
}

func paramObject(key string, v any) (map[string]any, error) {
	switch x := v.(type) {
	case nil:
		return map[string]any{}, nil
	case map[string]any:
		return x, nil
	}
	return nil, regErr(key, ErrInvalid, fmt.Sprintf(`pass %s:='{"name": "value"}'`, key), "%s must be an object of name → value (got %s)", key, template.CompactJSON(v))
}

func paramBool(key string, v any) (bool, error) {
	switch x := v.(type) {
	case nil:
		return false, nil
	case bool:
		return x, nil
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true", "yes", "1":
			return true, nil
		case "false", "no", "0", "":
			return false, nil
		}
	}
	return false, regErr(key, ErrInvalid, fmt.Sprintf("pass %s=true or %s=false", key, key), "%s must be true or false (got %s)", key, template.CompactJSON(v))
}

var nonNameRe = lazyre.New(`[^a-z0-9_]+`)
var underscoresRe = lazyre.New(`_+`)

// NormalizeName turns a requested tool name into a tool name: trimmed,
// lowercased, every run of characters outside [a-z0-9_] replaced by one _,
// repeated _ collapsed, leading and trailing _ removed, a tool_ prefix
// before a leading digit, cut to 64 characters. "My Tool!" → my_tool,
// "123abc" → tool_123abc, "docs-review" → docs_review. It returns "" when
// nothing usable is left.
func NormalizeName(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = nonNameRe.ReplaceAllString(s, "_")
	s = underscoresRe.ReplaceAllString(s, "_")
	s = strings.Trim(s, "_")
	if s != "" && s[0] >= '0' && s[0] <= '9' {
		s = "tool_" + s
	}
	if len(s) > MaxNameLength {
		s = s[:MaxNameLength]
	}
	return s
}

// ToolName normalises a requested name and refuses empty and reserved
// results.
func ToolName(requested string) (string, error) {
	n := NormalizeName(requested)
	if n == "" {
		return "", regErr("name", ErrInvalid, "use letters, digits and _, e.g. name=docs_review", "invalid tool name %q: nothing is left after normalisation", requested)
	}
	if contains(ReservedNames, n) || contains(ReservedNames, strings.ToLower(strings.TrimSpace(requested))) {
		return "", regErr("name", ErrInvalid, fmt.Sprintf("choose another name, e.g. name=%s_tool", n), "reserved tool name: %s", n)
	}
	return n, nil
}
