package template

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/pi-actors/pi-actors/internal/lazyre"
)

// Scope is how far a failure reaches: continue (record it and go on),
// branch (stop the enclosing sequence; in a parallel join only that branch
// fails) or root (abort the whole composition).
type Scope int

// Failure scopes, in increasing reach.
const (
	ScopeContinue Scope = iota
	ScopeBranch
	ScopeRoot
)

func (s Scope) String() string {
	switch s {
	case ScopeBranch:
		return "branch"
	case ScopeRoot:
		return "root"
	}
	return "continue"
}

// Node is one parsed template node. A node's body is exactly one of Leaf
// (a string template), Items (an array: a sequence, or parallel branches)
// or Inner (a nested object node).
type Node struct {
	Path string // where the node sits, e.g. template[2].recover

	Leaf  *Leaf
	Items []*Node
	Inner *Node

	Label      string
	Parallel   bool
	When       any // nil (absent), bool or string
	Args       []Arg
	HasArgs    bool
	Defaults   map[string]any
	Timeout    any // nil, json.Number or string
	Delay      any
	Retry      any
	Repeat     any
	Output     string
	Failure    Scope
	HasFailure bool
	Recover    *Node
	Context    map[string]any // actorRecipeContext marker set by recipes
}

// Leaf is a string template, split into words before substitution.
type Leaf struct {
	Source string
	words  [][]segment
}

// Fields an object node may carry.
var nodeFields = []string{"actorRecipeContext", "args", "defaults", "delay", "failure", "label", "output", "parallel", "recover", "repeat", "retry", "template", "timeout", "when"}

var (
	digitsRe       = lazyre.New(`^\d+$`)
	lengthRe       = lazyre.New(`^\{?(` + namePattern + `)\.length\}?$`)
	errRepeatValue = "must be a positive integer, \"{array.length}\" or \"{name}\" naming a positive integer"
)

// Parse reads a template graph: a string, an array of nodes, or an object
// node. raw is a decoded JSON value (see DecodeJSON). Every node's
// `defaults` are checked against the args in force there (see
// Arg.CheckDefaultValue), so every entry (exec, call, recipes, doctor)
// refuses a default that can never fit.
func Parse(raw any) (*Node, error) {
	n, err := parseNode(raw, "template")
	if err != nil {
		return nil, err
	}
	if err := checkDefaults(n, nil); err != nil {
		return nil, err
	}
	return n, nil
}

// ParseJSON decodes and parses a template written as JSON.
func ParseJSON(data []byte) (*Node, error) {
	v, err := DecodeJSON(data)
	if err != nil {
		return nil, &Error{Path: "template", Msg: "malformed JSON: " + err.Error()}
	}
	return Parse(v)
}

func parseNode(raw any, path string) (*Node, error) {
	switch v := raw.(type) {
	case string:
		leaf, err := parseLeaf(v, path)
		if err != nil {
			return nil, err
		}
		return &Node{Path: path, Leaf: leaf}, nil
	case []any:
		if len(v) == 0 {
			return nil, errf(path, "empty array: a sequence needs at least one step")
		}
		n := &Node{Path: path}
		for i, item := range v {
			child, err := parseNode(item, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			n.Items = append(n.Items, child)
		}
		return n, nil
	case map[string]any:
		return parseObject(v, path)
	case nil:
		return nil, errf(path, "template is required (got null)")
	}
	return nil, errf(path, "must be a string, an array or an object node (got %s)", CompactJSON(raw))
}

func parseLeaf(s, path string) (*Leaf, error) {
	if s == "" {
		return nil, errf(path, "template is required (got an empty string)")
	}
	words, err := Split(s)
	if err != nil {
		return nil, errf(path, "%v in %q", err, clip(s))
	}
	if len(words) == 0 {
		return nil, errf(path, "template is empty (only whitespace)")
	}
	l := &Leaf{Source: s, words: make([][]segment, len(words))}
	for i, w := range words {
		l.words[i] = parseWord(w)
		for _, seg := range l.words[i] {
			if ph := seg.ph; ph != nil && ph.kind == phName && ph.typ != "" && ph.hasDef {
				if err := ParseType(ph.typ).CheckDefault(ph.def); err != nil {
					return nil, errf(path, "invalid default in {%s}: %v", ph.raw, err)
				}
			}
		}
	}
	return l, nil
}

// parseObject parses an object node: one case per control field, in the
// order the grammar lists them. It is long on purpose — splitting it would
// scatter the node grammar over several functions that each see one field.
func parseObject(obj map[string]any, path string) (*Node, error) {
	var unknown []string
	for k := range obj {
		if !contains(nodeFields, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		hint := "allowed fields: " + strings.Join(nodeFields, ", ")
		if contains(unknown, "name") {
			hint = "a {name: alias} import node is only valid inside a recipe with imports; " + hint
		}
		return nil, errf(path, "unknown field %s (%s)", strings.Join(unknown, ", "), hint)
	}
	n := &Node{Path: path}
	body, ok := obj["template"]
	if !ok {
		return nil, errf(path, "object node has no template field")
	}
	switch b := body.(type) {
	case map[string]any:
		inner, err := parseObject(b, path+".template")
		if err != nil {
			return nil, err
		}
		n.Inner = inner
	default:
		inner, err := parseNode(body, path+".template")
		if err != nil {
			return nil, err
		}
		n.Leaf, n.Items = inner.Leaf, inner.Items
	}
	if v, ok := obj["label"]; ok {
		s, ok := v.(string)
		if !ok {
			return nil, errf(path+".label", "must be a string (got %s)", CompactJSON(v))
		}
		n.Label = s
	}
	if v, ok := obj["parallel"]; ok {
		b, ok := v.(bool)
		if !ok {
			return nil, errf(path+".parallel", "must be true or false (got %s)", CompactJSON(v))
		}
		n.Parallel = b
	}
	if v, ok := obj["when"]; ok {
		switch v.(type) {
		case bool, string, nil:
			n.When = v
		default:
			return nil, errf(path+".when", "must be a bool, a value name, !name or a {placeholder} (got %s)", CompactJSON(v))
		}
		if s, ok := v.(string); ok && s != "" {
			if b := whenBoolString(s); b != "" {
				// "true" would name a value that is never set: a node that
				// silently never runs.
				return nil, errf(path+".when", "%q is a string, not a bool: use the JSON bool %s (\"when\": %s)", s, b, b)
			}
			if !validWhen(s) {
				return nil, errf(path+".when", "%q is not a value name, !name or a single {placeholder} (negate a name without braces: \"when\": \"!flag\")", s)
			}
		}
	}
	if v, ok := obj["args"]; ok {
		args, err := ParseArgs(v)
		if err != nil {
			return nil, errf(path+".args", "%v", err)
		}
		n.Args, n.HasArgs = args, true
	}
	if v, ok := obj["defaults"]; ok && v != nil {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, errf(path+".defaults", "must be an object of name → value (got %s)", CompactJSON(v))
		}
		n.Defaults = m
	}
	for _, f := range []struct {
		key string
		dst *any
	}{{"timeout", &n.Timeout}, {"delay", &n.Delay}, {"retry", &n.Retry}, {"repeat", &n.Repeat}} {
		v, ok := obj[f.key]
		if !ok || v == nil {
			continue
		}
		if err := checkControl(f.key, v, path+"."+f.key); err != nil {
			return nil, err
		}
		*f.dst = v
	}
	if v, ok := obj["output"]; ok {
		s, ok := v.(string)
		if !ok {
			return nil, errf(path+".output", "must be \"stdout\", the name of a value, a path or a template such as \"{dir}/out.ogg\" (got %s)", CompactJSON(v))
		}
		n.Output = s
	}
	if v, ok := obj["failure"]; ok {
		s, _ := v.(string)
		switch s {
		case "continue":
			n.Failure = ScopeContinue
		case "branch":
			n.Failure = ScopeBranch
		case "root":
			n.Failure = ScopeRoot
		default:
			return nil, errf(path+".failure", "must be one of continue, branch, root (got %s)", CompactJSON(v))
		}
		n.HasFailure = true
	}
	if v, ok := obj["recover"]; ok && v != nil {
		r, err := parseNode(v, path+".recover")
		if err != nil {
			return nil, err
		}
		n.Recover = r
	}
	if v, ok := obj["actorRecipeContext"]; ok && v != nil {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, errf(path+".actorRecipeContext", "must be an object")
		}
		n.Context = m
	}
	return n, nil
}

// whenBoolString returns the JSON bool ("true" or "false") a `when` string
// such as "true", "False" or "!true" was meant to be, or "" for any other
// string.
func whenBoolString(s string) string {
	s = strings.TrimSpace(s)
	neg := strings.HasPrefix(s, "!")
	switch strings.ToLower(strings.TrimSpace(strings.TrimPrefix(s, "!"))) {
	case "true":
		return strconv.FormatBool(!neg)
	case "false":
		return strconv.FormatBool(neg)
	}
	return ""
}

// validWhen reports whether a when string is a value name, !name, or
// exactly one placeholder ({!flag}, {} or {a}{b} are none of them: taken
// as literal text, they were truthy and the node always ran).
func validWhen(s string) bool {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
		segs := parseWord(s)
		return len(segs) == 1 && segs[0].ph != nil
	}
	return nameRe.MatchString(strings.TrimPrefix(s, "!"))
}

// checkControl validates a timeout/delay/retry/repeat value that needs no
// values to check; placeholder strings are checked when planned.
func checkControl(key string, v any, path string) error {
	switch x := v.(type) {
	case json.Number:
		return checkControlNumber(key, x.String(), path)
	case float64:
		return checkControlNumber(key, strconv.FormatFloat(x, 'f', -1, 64), path)
	case string:
		s := strings.TrimSpace(x)
		if s == "" || hasPlaceholder(s) {
			if key == "repeat" && s == "" {
				return errf(path, "%s", errRepeatValue)
			}
			return nil
		}
		if key == "repeat" {
			if lengthRe.MatchString(s) {
				return nil
			}
			if digitsRe.MatchString(s) {
				return checkControlNumber(key, s, path)
			}
			return errf(path, "%s (got %q)", errRepeatValue, x)
		}
		return checkControlNumber(key, s, path)
	}
	return errf(path, "must be a number or a placeholder string (got %s)", CompactJSON(v))
}

func checkControlNumber(key, s, path string) error {
	_, err := controlValue(key, s)
	if err != nil {
		return errf(path, "%v", err)
	}
	return nil
}

// maxControlMS bounds timeout and delay: about 31 years, well inside
// what a time.Duration holds (its nanoseconds overflow past 9.2e12 ms).
const maxControlMS = 1e12

// controlValue parses the text of a control value: milliseconds for
// timeout and delay (0 or "" = none), a positive integer for retry and
// repeat.
func controlValue(key, s string) (float64, error) {
	s = strings.TrimSpace(s)
	switch key {
	case "timeout", "delay":
		if s == "" {
			return 0, nil
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f < 0 || f != f || f > maxControlMS {
			return 0, fmt.Errorf("%s must be a non-negative number of milliseconds, at most %g (got %q)", key, float64(maxControlMS), s)
		}
		return f, nil
	default: // retry, repeat
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 {
			if key == "repeat" {
				return 0, fmt.Errorf("repeat %s (got %q)", errRepeatValue, s)
			}
			return 0, fmt.Errorf("%s must be a positive integer (got %q)", key, s)
		}
		return float64(n), nil
	}
}

// Walk calls fn for n and every node below it, recover nodes included.
func (n *Node) Walk(fn func(*Node)) {
	fn(n)
	for _, c := range n.Items {
		c.Walk(fn)
	}
	if n.Inner != nil {
		n.Inner.Walk(fn)
	}
	if n.Recover != nil {
		n.Recover.Walk(fn)
	}
}

// InlineTypes returns the types written inline in placeholders
// ({name:type}), first declaration first.
func (n *Node) InlineTypes() map[string]Type {
	types := map[string]Type{}
	n.Walk(func(x *Node) {
		if x.Leaf == nil {
			return
		}
		for _, w := range x.Leaf.words {
			for _, seg := range w {
				if seg.ph != nil && seg.ph.kind == phName && seg.ph.typ != "" {
					if _, ok := types[seg.ph.name]; !ok {
						types[seg.ph.name] = ParseType(seg.ph.typ)
					}
				}
			}
		}
	})
	return types
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
