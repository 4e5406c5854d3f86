package template

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pi-actors/pi-actors/internal/lazyre"
)

// maxValueDepth bounds recursive resolution of defaults that refer to other
// values; deeper chains (or loops) are an error.
const maxValueDepth = 5

// layer is one node's defaults; lookups walk from the nearest node outward,
// so a child's defaults merge over its parent's.
type layer struct {
	parent *layer
	vals   map[string]any
}

// repeatVars are the reserved values of one copy of a repeated node.
type repeatVars struct{ index, count int }

var repeatVarRe = lazyre.New(`^(_{0,6})(index|prev|next|repeat)$`)

func (r *repeatVars) lookup(name string) (string, bool) {
	// Hot path (every placeholder of every copy): no regexp.
	base := strings.TrimLeft(name, "_")
	under := len(name) - len(base)
	if under > 6 {
		return "", false
	}
	var n int
	switch base {
	case "index":
		n = r.index
	case "prev":
		n = (r.index - 1 + r.count) % r.count
	case "next":
		n = (r.index + 1) % r.count
	case "repeat":
		n = r.count
	default:
		return "", false
	}
	width := 0
	if under > 0 {
		width = under + 1
	}
	return formatPadded(int64(n), width), true
}

// scope is what a placeholder can see: the nearest repeat's reserved
// values, then the caller's values, then defaults from the nearest node out.
type scope struct {
	runtime Values
	layer   *layer
	rep     *repeatVars
	context map[string]any // nearest actorRecipeContext marker
}

type source int

const (
	srcReserved source = iota + 1
	srcRuntime
	srcDefault
)

// selfRef marks a default being resolved: inside it, a reference to its
// own name reaches past its layer to the inherited value, so a child default
// `model: "{model}"` means the parent's model.
type selfRef struct {
	name  string
	layer *layer
}

func (s *scope) lookup(name string, self selfRef) (any, source, *layer, bool) {
	if s.rep != nil {
		if v, ok := s.rep.lookup(name); ok {
			return v, srcReserved, nil, true
		}
	}
	if v, ok := s.runtime[name]; ok {
		return v, srcRuntime, nil, true
	}
	if self.name == name && self.layer != nil {
		for l := self.layer.parent; l != nil; l = l.parent {
			if v, ok := l.vals[name]; ok {
				return v, srcDefault, l, true
			}
		}
	}
	for l := s.layer; l != nil; l = l.parent {
		if v, ok := l.vals[name]; ok {
			return v, srcDefault, l, true
		}
	}
	return nil, 0, nil, false
}

// resolver substitutes placeholders; it caches parsed default strings.
type resolver struct {
	parsed map[string][]segment
}

func newResolver() *resolver { return &resolver{parsed: map[string][]segment{}} }

func (r *resolver) segments(s string) []segment {
	if segs, ok := r.parsed[s]; ok {
		return segs
	}
	segs := parseWord(s)
	r.parsed[s] = segs
	return segs
}

// word substitutes every placeholder of a parsed word.
func (r *resolver) word(sc *scope, segs []segment, depth int, self selfRef) (string, error) {
	if len(segs) == 1 && segs[0].ph == nil {
		return segs[0].lit, nil
	}
	var b strings.Builder
	for _, seg := range segs {
		if seg.ph == nil {
			b.WriteString(seg.lit)
			continue
		}
		s, err := r.place(sc, seg.ph, depth, self)
		if err != nil {
			return "", err
		}
		b.WriteString(s)
	}
	return b.String(), nil
}

// text substitutes placeholders in free text (defaults, labels, controls).
func (r *resolver) text(sc *scope, s string, depth int, self selfRef) (string, error) {
	return r.word(sc, r.segments(s), depth, self)
}

// value returns the value of name: a caller value as given, a default with
// its own placeholders resolved (recursively, bounded; a default whose
// placeholders cannot all be resolved is used literally).
func (r *resolver) value(sc *scope, name string, depth int, self selfRef) (any, bool, error) {
	v, src, l, ok := sc.lookup(name, self)
	if !ok {
		return nil, false, nil
	}
	s, isString := v.(string)
	if src != srcDefault || !isString || !strings.Contains(s, "{") {
		return v, true, nil
	}
	segs := r.segments(s)
	if len(segs) == 1 && segs[0].ph == nil {
		return v, true, nil
	}
	if depth >= maxValueDepth {
		return nil, false, fmt.Errorf("value recursion exceeded resolving {%s}: defaults refer to each other more than %d levels deep, or in a loop (%q)", name, maxValueDepth, s)
	}
	out, err := r.word(sc, segs, depth+1, selfRef{name: name, layer: l})
	var miss *errMissing
	if errors.As(err, &miss) {
		return v, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	return out, true, nil
}

func (r *resolver) place(sc *scope, ph *placeholder, depth int, self selfRef) (string, error) {
	switch ph.kind {
	case phName:
		if sc.rep != nil {
			if v, ok := sc.rep.lookup(ph.name); ok {
				return v, nil // reserved repeat values come first and are text
			}
		}
		v, ok, err := r.value(sc, ph.name, depth, self)
		if err != nil {
			return "", err
		}
		if ok {
			return Stringify(v), nil
		}
		if ph.hasDef {
			return ph.def, nil
		}
		if ph.expr != nil && ph.exprErr == nil {
			// {a-b}: arithmetic only when its variables exist; otherwise it
			// is the missing value named a-b.
			n, err := ph.expr.eval(r.exprLookup(sc, depth, self))
			var ev *errExprVar
			if errors.As(err, &ev) && !ev.found {
				return "", &errMissing{content: ph.raw}
			}
			if err != nil {
				return "", fmt.Errorf("invalid expression {%s}: %v", ph.raw, err)
			}
			return formatPadded(n, ph.pad), nil
		}
		return "", &errMissing{content: ph.raw}
	case phNullish:
		v, ok, err := r.value(sc, ph.name, depth, self)
		if err != nil {
			return "", err
		}
		if Falsy(v, ok) {
			return ph.def, nil
		}
		return Stringify(v), nil
	case phTernary:
		v, ok, err := r.value(sc, ph.name, depth, self)
		if err != nil {
			return "", err
		}
		if Falsy(v, ok) != ph.negate {
			return ph.no, nil
		}
		return ph.yes, nil
	case phIndex:
		if ph.exprErr != nil {
			return "", fmt.Errorf("in {%s}: %v", ph.raw, ph.exprErr)
		}
		v, ok, err := r.value(sc, ph.name, depth, self)
		if err != nil {
			return "", err
		}
		arr, isArr := v.([]any)
		if s, isStr := v.(string); ok && isStr {
			if d, err := DecodeJSON([]byte(s)); err == nil {
				arr, isArr = d.([]any)
			}
		}
		if !ok || !isArr {
			return "", &errMissing{content: ph.raw}
		}
		i, err := ph.index.eval(r.exprLookup(sc, depth, self))
		if err != nil {
			return "", fmt.Errorf("in {%s}: %v", ph.raw, err)
		}
		if i < 0 || i >= int64(len(arr)) {
			return "", &errMissing{content: ph.raw}
		}
		return Stringify(arr[i]), nil
	case phExpr:
		if ph.exprErr != nil {
			return "", ph.exprErr
		}
		return r.arith(sc, ph, ph.expr, depth, self)
	}
	return "{" + ph.raw + "}", nil
}

func (r *resolver) arith(sc *scope, ph *placeholder, e *expr, depth int, self selfRef) (string, error) {
	n, err := e.eval(r.exprLookup(sc, depth, self))
	if err != nil {
		return "", fmt.Errorf("invalid expression {%s}: %v", ph.raw, err)
	}
	return formatPadded(n, ph.pad), nil
}

func (r *resolver) exprLookup(sc *scope, depth int, self selfRef) func(string) (string, bool, error) {
	return func(name string) (string, bool, error) {
		v, ok, err := r.value(sc, name, depth, self)
		if err != nil || !ok {
			return "", ok, err
		}
		return Stringify(v), true, nil
	}
}

// Expand substitutes the placeholders of free text (an artifact path)
// from values, then defaults, with the same rules as a leaf word. A
// missing value is an *Error naming the placeholder and the fixes that
// work: a value (which a recipe takes only when its args declare the
// name) or a default.
func Expand(s string, values Values, defaults map[string]any) (string, error) {
	sc := &scope{runtime: values}
	if len(defaults) > 0 {
		sc.layer = &layer{vals: defaults}
	}
	out, err := newResolver().text(sc, s, 0, selfRef{})
	var miss *errMissing
	if errors.As(err, &miss) {
		if m := nameFormRe.FindStringSubmatch(miss.content); m != nil {
			name := clip(m[1])
			return "", errf("", "missing value for placeholder {%s}: pass %s=<value> (a recipe takes it only when its args declare %s: args: [\"%s\"]) or give it a default in defaults", clip(miss.content), name, name, name)
		}
	}
	if err != nil {
		return "", placeErr("", err)
	}
	return out, nil
}
