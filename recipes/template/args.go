package template

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pi-actors/pi-actors/internal/lazyre"
)

// Type is a declared argument type.
type Type struct {
	Kind string   // string, path, int, number, bool, array or enum
	Enum []string // allowed values when Kind is "enum"
}

// Arg is one declaration from an `args` list: name[:type][=default].
type Arg struct {
	Name       string
	Type       Type
	Default    string
	HasDefault bool
}

var (
	numberRe = lazyre.New(`^-?(\d+(\.\d+)?|\.\d+)$`)
	enumRe   = lazyre.New(`^enum\((.*)\)$`)
)

// ParseType reads a type name. Unknown names and an empty enum() fall back
// to string, as the reference does.
func ParseType(s string) Type {
	s = strings.TrimSpace(s)
	switch s {
	case "string", "path", "int", "number", "bool", "array":
		return Type{Kind: s}
	}
	if m := enumRe.FindStringSubmatch(s); m != nil {
		var vals []string
		for v := range strings.SplitSeq(m[1], ",") {
			if v = strings.TrimSpace(v); v != "" {
				vals = append(vals, v)
			}
		}
		if len(vals) > 0 {
			return Type{Kind: "enum", Enum: vals}
		}
	}
	return Type{Kind: "string"}
}

// String renders the type as written in a declaration.
func (t Type) String() string {
	if t.Kind == "enum" {
		return "enum(" + strings.Join(t.Enum, ",") + ")"
	}
	if t.Kind == "" {
		return "string"
	}
	return t.Kind
}

// Canonical is the stored form of the declaration without its default:
// `file:path`, `mode:enum(check,fix)`, and plain `lang` for strings.
func (a Arg) Canonical() string {
	if a.Type.Kind == "" || a.Type.Kind == "string" {
		return a.Name
	}
	return a.Name + ":" + a.Type.String()
}

// ParseArgs reads an `args` value: a comma-separated string (commas inside
// parentheses do not split) or a list of strings. It rejects duplicate
// names, invalid names and defaults that do not fit their type.
func ParseArgs(raw any) ([]Arg, error) {
	var entries []string
	switch v := raw.(type) {
	case nil:
		return nil, nil
	case string:
		entries = splitOutsideParens(v)
	case []any:
		for i, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("args[%d] must be a string like \"name:type=default\", got %s", i, CompactJSON(e))
			}
			entries = append(entries, splitOutsideParens(s)...)
		}
	case []string:
		for _, s := range v {
			entries = append(entries, splitOutsideParens(s)...)
		}
	default:
		return nil, fmt.Errorf("args must be a comma-separated string or a list of strings, got %s", CompactJSON(raw))
	}
	var args []Arg
	seen := map[string]bool{}
	var dups []string
	for _, e := range entries {
		a, err := parseArg(e)
		if err != nil {
			return nil, err
		}
		if seen[a.Name] {
			dups = append(dups, a.Name)
			continue
		}
		seen[a.Name] = true
		args = append(args, a)
	}
	if len(dups) > 0 {
		return nil, fmt.Errorf("duplicate argument name(s): %s", strings.Join(dups, ", "))
	}
	return args, nil
}

func parseArg(s string) (Arg, error) {
	var a Arg
	decl := s
	if i := strings.IndexByte(s, '='); i >= 0 {
		decl, a.Default, a.HasDefault = s[:i], s[i+1:], true
	}
	decl = strings.TrimSpace(decl)
	name, typ, _ := strings.Cut(decl, ":")
	a.Name = strings.TrimSpace(name)
	if !nameRe.MatchString(a.Name) {
		return a, fmt.Errorf("invalid argument name %q in args entry %q: names are letters, digits, _ and -, starting with a letter or _", a.Name, s)
	}
	a.Type = ParseType(typ)
	if a.HasDefault {
		if err := a.Type.CheckDefault(a.Default); err != nil {
			return a, fmt.Errorf("invalid default for %s: %w", a.Canonical(), err)
		}
	}
	return a, nil
}

func splitOutsideParens(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	out = append(out, s[start:])
	var kept []string
	for _, e := range out {
		if e = strings.TrimSpace(e); e != "" {
			kept = append(kept, e)
		}
	}
	return kept
}

// CheckDefault validates a default written as text against the type.
func (t Type) CheckDefault(def string) error {
	switch t.Kind {
	case "int":
		if !intRe.MatchString(def) {
			return fmt.Errorf("%q is not an integer", def)
		}
	case "number":
		if !numberRe.MatchString(def) {
			return fmt.Errorf("%q is not a decimal number", def)
		}
	case "bool":
		if _, ok := parseBool(def); !ok {
			return fmt.Errorf("%q is not true/false/1/0/yes/no", def)
		}
	case "enum":
		if !t.allows(def) {
			return fmt.Errorf("%q is not one of: %s", def, strings.Join(t.Enum, ", "))
		}
	case "array":
		if v, err := DecodeJSON([]byte(def)); err != nil {
			return fmt.Errorf("%q is not a JSON array", def)
		} else if _, ok := v.([]any); !ok {
			return fmt.Errorf("%q is not a JSON array", def)
		}
	}
	return nil
}

func (t Type) allows(s string) bool {
	for _, e := range t.Enum {
		if e == s {
			return true
		}
	}
	return false
}

func parseBool(s string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "1", "yes":
		return true, true
	case "false", "0", "no":
		return false, true
	}
	return false, false
}

// Normalize converts a caller's value for an argument of this type, or
// explains why it does not fit. null becomes "" (and drops the argument);
// "" must fit the type like any other text, so its error says to pass null.
func (t Type) Normalize(name string, v any) (any, error) {
	out, err := t.normalize(name, v)
	if s, ok := v.(string); ok && err != nil && strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("%w; to leave %s out, pass null (%s:=null)", err, name, name)
	}
	return out, err
}

func (t Type) normalize(name string, v any) (any, error) {
	if v == nil {
		return "", nil
	}
	switch t.Kind {
	case "path":
		// A path is never an option of the command it is given to: a
		// value starting with - (find's -delete, tail's -f) gets ./ in
		// front, which names the same file.
		switch v.(type) {
		case string, json.Number, float64:
			// A number given as JSON (p:=-5) is such a value too.
			if s := Stringify(v); strings.HasPrefix(s, "-") {
				return "./" + s, nil
			}
		}
	case "int":
		switch x := v.(type) {
		case json.Number:
			if intRe.MatchString(x.String()) {
				return x.String(), nil
			}
			if f, err := x.Float64(); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
				return strconv.FormatInt(int64(f), 10), nil
			}
		case float64:
			if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
				return strconv.FormatInt(int64(x), 10), nil
			}
		case string:
			if s := strings.TrimSpace(x); intRe.MatchString(s) {
				return s, nil
			}
		}
		return nil, fmt.Errorf("argument %s must be an integer (got %s)", name, CompactJSON(v))
	case "number":
		switch x := v.(type) {
		case json.Number:
			if numberRe.MatchString(x.String()) {
				return x.String(), nil
			}
			if f, err := x.Float64(); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
				return strconv.FormatFloat(f, 'f', -1, 64), nil
			}
		case float64:
			if !math.IsInf(x, 0) && !math.IsNaN(x) {
				return strconv.FormatFloat(x, 'f', -1, 64), nil
			}
		case string:
			if s := strings.TrimSpace(x); numberRe.MatchString(s) {
				return s, nil
			}
		}
		return nil, fmt.Errorf("argument %s must be a number (got %s)", name, CompactJSON(v))
	case "bool":
		switch x := v.(type) {
		case bool:
			return Stringify(x), nil
		case string, json.Number:
			if b, ok := parseBool(Stringify(x)); ok {
				return Stringify(b), nil
			}
		}
		return nil, fmt.Errorf("argument %s must be a boolean: true/false, yes/no or 1/0 (got %s)", name, CompactJSON(v))
	case "enum":
		s := Stringify(v)
		if !t.allows(s) {
			return nil, fmt.Errorf("argument %s must be one of: %s (got %s)", name, strings.Join(t.Enum, ", "), CompactJSON(v))
		}
		return s, nil
	case "array":
		switch x := v.(type) {
		case []any:
			return x, nil
		case string:
			if d, err := DecodeJSON([]byte(x)); err == nil {
				if arr, ok := d.([]any); ok {
					return arr, nil
				}
			}
		}
		return nil, fmt.Errorf("argument %s must be an array, e.g. %s:='[\"a\",\"b\"]' (got %s)", name, name, CompactJSON(v))
	}
	switch v.(type) {
	case []any, map[string]any, string:
		return v, nil
	}
	return Stringify(v), nil
}

// CheckDefaultValue checks v, the default a `defaults` object gives a, against
// a's declared type, with the message of the inline form (`invalid default
// for n:int: …`). A string default holding placeholders resolves later, so
// it is not checked here; string and path take anything.
func (a Arg) CheckDefaultValue(v any) error {
	switch a.Type.Kind {
	case "", "string", "path":
		return nil
	}
	if s, ok := v.(string); ok && hasPlaceholder(s) {
		return nil
	}
	if _, err := a.Type.Normalize(a.Name, v); err != nil {
		if derr := a.Type.CheckDefault(Stringify(v)); derr != nil {
			err = derr
		}
		return fmt.Errorf("invalid default for %s: %w", a.Canonical(), err)
	}
	return nil
}

// checkDefaults checks every node's `defaults` against the args in force
// there: the node's own, else the nearest ancestor's (args are inherited,
// a child's replace its parent's). The error names defaults.<name>.
func checkDefaults(n *Node, inherited []Arg) error {
	args := inherited
	if n.HasArgs {
		args = n.Args
	}
	for _, a := range args {
		v, ok := n.Defaults[a.Name]
		if !ok {
			continue
		}
		if err := a.CheckDefaultValue(v); err != nil {
			return errf(n.Path+".defaults."+a.Name, "%v", err)
		}
	}
	for _, c := range n.Items {
		if err := checkDefaults(c, args); err != nil {
			return err
		}
	}
	for _, c := range []*Node{n.Inner, n.Recover} {
		if c != nil {
			if err := checkDefaults(c, args); err != nil {
				return err
			}
		}
	}
	return nil
}
