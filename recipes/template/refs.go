package template

import (
	"strings"
)

// Ref is a value a template refers to: the input an agent may pass.
type Ref struct {
	Name       string
	Type       string // inline type ("int", "enum(a,b)"…), "bool" for ternaries and when flags, or ""
	HasDefault bool   // an inline default or fallback makes it optional
	Default    string
	Where      string // leaf, when, timeout, delay, retry, repeat, output
}

// Refs lists the values n refers to, in order of first appearance, with
// the reserved repeat values, arithmetic and array-index forms left out
// (their inputs are reported through the names they use elsewhere).
func (n *Node) Refs() []Ref {
	var out []Ref
	seen := map[string]int{}
	add := func(r Ref) {
		if repeatVarRe.MatchString(r.Name) {
			return
		}
		if i, ok := seen[r.Name]; ok {
			prev := &out[i]
			if prev.Type == "" {
				prev.Type = r.Type
			}
			if !prev.HasDefault && r.HasDefault {
				prev.HasDefault, prev.Default = true, r.Default
			}
			return
		}
		seen[r.Name] = len(out)
		out = append(out, r)
	}
	text := func(s, where string) {
		for _, seg := range parseWord(s) {
			if ph := seg.ph; ph != nil {
				if r, ok := refOf(ph, where); ok {
					add(r)
				}
			}
		}
	}
	n.Walk(func(x *Node) {
		if x.Leaf != nil {
			for _, w := range x.Leaf.words {
				for _, seg := range w {
					if seg.ph != nil {
						if r, ok := refOf(seg.ph, "leaf"); ok {
							add(r)
						}
					}
				}
			}
		}
		if w, ok := x.When.(string); ok {
			s := strings.TrimSpace(w)
			if strings.HasPrefix(s, "{") {
				text(s, "when")
			} else if name := strings.TrimPrefix(s, "!"); nameRe.MatchString(name) {
				add(Ref{Name: name, Type: "bool", HasDefault: true, Default: "false", Where: "when"})
			}
		}
		for _, c := range []struct {
			v     any
			where string
		}{{x.Timeout, "timeout"}, {x.Delay, "delay"}, {x.Retry, "retry"}, {x.Repeat, "repeat"}} {
			s, ok := c.v.(string)
			if !ok {
				continue
			}
			if m := lengthRe.FindStringSubmatch(strings.TrimSpace(s)); m != nil {
				add(Ref{Name: m[1], Type: "array", Where: c.where})
				continue
			}
			text(s, c.where)
		}
		if strings.Contains(x.Output, "{") {
			text(x.Output, "output")
		}
	})
	return out
}

func refOf(ph *placeholder, where string) (Ref, bool) {
	switch ph.kind {
	case phName:
		return Ref{Name: ph.name, Type: ph.typ, HasDefault: ph.hasDef, Default: ph.def, Where: where}, true
	case phNullish:
		return Ref{Name: ph.name, HasDefault: true, Default: ph.def, Where: where}, true
	case phTernary:
		return Ref{Name: ph.name, Type: "bool", HasDefault: true, Default: "false", Where: where}, true
	}
	return Ref{}, false
}

// Declared returns the args declared anywhere in n (the root's first) and
// the defaults visible at the root (args defaults and the defaults
// object).
func (n *Node) Declared() ([]Arg, map[string]any) {
	var args []Arg
	seen := map[string]bool{}
	defaults := map[string]any{}
	n.Walk(func(x *Node) {
		for _, a := range x.Args {
			if !seen[a.Name] {
				seen[a.Name] = true
				args = append(args, a)
			}
		}
	})
	for _, a := range n.Args {
		if a.HasDefault {
			defaults[a.Name] = a.Default
		}
	}
	for k, v := range n.Defaults {
		defaults[k] = v
	}
	return args, defaults
}

// HasDefaultAnywhere reports whether any node declares a default for name
// (in defaults or args), which makes it optional for a caller.
func (n *Node) HasDefaultAnywhere(name string) bool {
	found := false
	n.Walk(func(x *Node) {
		if _, ok := x.Defaults[name]; ok {
			found = true
		}
		for _, a := range x.Args {
			if a.Name == name && a.HasDefault {
				found = true
			}
		}
	})
	return found
}
