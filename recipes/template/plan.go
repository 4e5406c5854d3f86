package template

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Step kinds.
const (
	StepLeaf     = "leaf"
	StepSequence = "sequence"
	StepParallel = "parallel"
	StepSkipped  = "skipped"
)

// Step is one resolved node of a plan: every placeholder substituted, every
// control checked. Executing a plan needs no values.
type Step struct {
	Path     string
	Kind     string
	Label    string
	Argv     []string // leaf: the words after substitution, empty args dropped
	Exe      string   // leaf: the resolved executable, "" when not found
	Stdin    string   // where the step's stdin comes from (for plans)
	When     string   // how `when` was decided, when set
	Delay    time.Duration
	Timeout  time.Duration
	Retry    int // attempts, including the first; at least 1
	Failure  Scope
	Output   *string // selected output value; nil = stdout
	Recover  *Step
	Children []*Step
	// ChildrenCut counts the children a cut copy leaves out (Cut).
	ChildrenCut int
	Risk        []string // leaf risk labels
	Warnings    []string // leaf warnings
	Context     map[string]any
}

// Plan is a fully resolved template, ready to run.
type Plan struct {
	Root       *Step
	RiskLabels []string // union over the leaves, in the fixed label order
	Warnings   []string // deduplicated leaf warnings
	Leaves     int
	Values     Values // the caller's values after type normalization
}

// Options bound and locate planning.
type Options struct {
	Dir         string // working directory for relative executables
	Home        string // for ~ in the command word; default $HOME
	MaxParallel int    // fan-out limit per parallel node; default 64
	MaxLeaves   int    // total leaves per plan; default 10000
	Types       map[string]Type
	// CallerStdin says the first step reads the caller's stdin.
	CallerStdin bool
	// NoLookup leaves every Step.Exe empty: the plan only checks the
	// template (the kernel's check of a spawn; its supervisor resolves
	// the commands with the run's own PATH).
	NoLookup bool
}

// DefaultMaxParallel is the default fan-out limit of a parallel node.
const DefaultMaxParallel = 64

// DefaultMaxLeaves bounds the leaves of one plan.
const DefaultMaxLeaves = 10000

type planner struct {
	opts    Options
	res     *resolver
	leaves  int
	lookups map[string]string
	risk    map[string]bool
	warn    []string
	warned  map[string]bool
}

// NewPlan resolves node against the caller's values. Declared argument
// types (opts.Types, then the root's args, then inline {name:type}) are
// applied to the caller's values first. Nothing is executed; every error is
// an *Error naming the field or placeholder.
func NewPlan(node *Node, values Values, opts Options) (*Plan, error) {
	if opts.MaxParallel <= 0 {
		opts.MaxParallel = DefaultMaxParallel
	}
	if opts.MaxLeaves <= 0 {
		opts.MaxLeaves = DefaultMaxLeaves
	}
	if opts.Home == "" {
		opts.Home, _ = os.UserHomeDir()
	}
	if opts.Dir == "" {
		opts.Dir, _ = os.Getwd()
	}
	norm, err := normalizeValues(node, values, opts.Types)
	if err != nil {
		return nil, err
	}
	p := &planner{opts: opts, res: newResolver(), lookups: map[string]string{}, risk: map[string]bool{}, warned: map[string]bool{}}
	root, err := p.node(node, &scope{runtime: norm}, node.Path)
	if err != nil {
		return nil, err
	}
	stdin := "empty"
	if opts.CallerStdin {
		stdin = "caller stdin"
	}
	annotateStdin(root, stdin)
	plan := &Plan{Root: root, Leaves: p.leaves, Warnings: p.warn, Values: norm}
	for _, l := range riskOrder {
		if p.risk[l] {
			plan.RiskLabels = append(plan.RiskLabels, l)
		}
	}
	return plan, nil
}

// normalizeValues applies declared types to the caller's values: explicit
// types first, then the root's args, then a nested node's args (the
// first that declares the name), then inline placeholder types — declared
// args always win over an inline {name:type}.
func normalizeValues(node *Node, values Values, explicit map[string]Type) (Values, error) {
	types := map[string]Type{}
	for k, t := range node.InlineTypes() {
		types[k] = t
	}
	nested := map[string]Type{}
	node.Walk(func(n *Node) {
		for _, a := range n.Args {
			if _, ok := nested[a.Name]; !ok && n != node {
				nested[a.Name] = a.Type
			}
		}
	})
	maps.Copy(types, nested)
	for _, a := range node.Args {
		types[a.Name] = a.Type
	}
	maps.Copy(types, explicit)
	out := make(Values, len(values))
	for k, v := range values {
		t, ok := types[k]
		if !ok {
			out[k] = v
			continue
		}
		nv, err := t.Normalize(k, v)
		if err != nil {
			return nil, &Error{Path: "values." + k, Msg: err.Error()}
		}
		out[k] = nv
	}
	return out, nil
}

// child returns the scope inside n: n's args defaults, then n's defaults
// merged over the inherited ones.
func (p *planner) child(sc *scope, n *Node) *scope {
	var vals map[string]any
	for _, a := range n.Args {
		if a.HasDefault {
			if vals == nil {
				vals = map[string]any{}
			}
			vals[a.Name] = a.Default
		}
	}
	if n.Context != nil {
		sc = &scope{runtime: sc.runtime, rep: sc.rep, layer: sc.layer, context: n.Context}
	}
	if len(n.Defaults) > 0 {
		if vals == nil {
			vals = n.Defaults
		} else {
			for k, v := range n.Defaults {
				vals[k] = v
			}
		}
	}
	if vals == nil {
		return sc
	}
	return &scope{runtime: sc.runtime, rep: sc.rep, context: sc.context, layer: &layer{parent: sc.layer, vals: vals}}
}

// node plans n; path is where the step sits in the plan (repeat copies
// add #i), while errors name n.Path, its place in the source graph.
func (p *planner) node(n *Node, outer *scope, path string) (*Step, error) {
	sc := p.child(outer, n)
	run, how, err := p.when(n, sc)
	if err != nil {
		return nil, err
	}
	if !run {
		return &Step{Path: path, Kind: StepSkipped, When: how, Label: p.label(n, sc)}, nil
	}
	if n.Repeat == nil {
		s, err := p.body(n, sc, "", false, path)
		if err != nil {
			return nil, err
		}
		s.When = how
		return s, nil
	}
	count, err := p.repeatCount(n, sc)
	if err != nil {
		return nil, err
	}
	// failure belongs to each copy: a failed copy is one failed branch of a
	// soft-quorum join (or stops a sequential repeat), as the scope says.
	group := &Step{Path: path, Kind: StepSequence, When: how, Retry: 1}
	if !hasPlaceholder(n.Label) {
		group.Label = n.Label
	}
	if n.Parallel {
		group.Kind = StepParallel
		if count > p.opts.MaxParallel {
			return nil, p.fanoutErr(n.Path+".repeat", count)
		}
	}
	if count > p.opts.MaxLeaves {
		return nil, &Error{Path: n.Path + ".repeat", Msg: fmt.Sprintf("repeat %d exceeds the plan limit of %d leaves (exec.max_leaves in pi-actors.toml)", count, p.opts.MaxLeaves), Limit: true}
	}
	if group.Delay, err = p.duration(n, sc, "delay", n.Delay); err != nil {
		return nil, err
	}
	if group.Timeout, err = p.duration(n, sc, "timeout", n.Timeout); err != nil {
		return nil, err
	}
	if group.Output, err = p.output(n, sc); err != nil {
		return nil, err
	}
	labelHasPlace := hasPlaceholder(n.Label)
	group.Children = make([]*Step, count)
	for i := range count {
		csc := &scope{runtime: sc.runtime, layer: sc.layer, context: sc.context, rep: &repeatVars{index: i, count: count}}
		label := ""
		switch {
		case labelHasPlace:
			label = p.label(n, csc)
		case n.Label != "":
			label = n.Label + " " + strconv.Itoa(i+1)
		}
		c, err := p.body(n, csc, label, true, path+"#"+strconv.Itoa(i))
		if err != nil {
			return nil, err
		}
		// Controls that bound the whole repeat stay on the group.
		c.Delay, c.Timeout, c.Output = 0, 0, nil
		group.Children[i] = c
	}
	return group, nil
}

// body plans n's own template with its per-attempt controls. Inside a
// repeat, `parallel` belongs to the repeat, so an array body is a sequence.
func (p *planner) body(n *Node, sc *scope, label string, inRepeat bool, path string) (*Step, error) {
	s := &Step{Path: path, Failure: n.Failure, Context: sc.context, Label: label}
	if label == "" {
		s.Label = p.label(n, sc)
	}
	var err error
	if s.Delay, err = p.duration(n, sc, "delay", n.Delay); err != nil {
		return nil, err
	}
	if s.Timeout, err = p.duration(n, sc, "timeout", n.Timeout); err != nil {
		return nil, err
	}
	if s.Retry, err = p.retry(n, sc); err != nil {
		return nil, err
	}
	if s.Output, err = p.output(n, sc); err != nil {
		return nil, err
	}
	if n.Recover != nil {
		r, err := p.node(n.Recover, sc, path+".recover")
		if err != nil {
			return nil, err
		}
		if !n.Recover.HasFailure {
			r.Failure = ScopeRoot
		}
		s.Recover = r
	}
	switch {
	case n.Leaf != nil:
		s.Kind = StepLeaf
		if err := p.leaf(s, n, sc); err != nil {
			return nil, err
		}
	case n.Inner != nil:
		s.Kind = StepSequence
		c, err := p.node(n.Inner, sc, path+strings.TrimPrefix(n.Inner.Path, n.Path))
		if err != nil {
			return nil, err
		}
		s.Children = []*Step{c}
	default:
		s.Kind = StepSequence
		if n.Parallel && !inRepeat {
			s.Kind = StepParallel
			if len(n.Items) > p.opts.MaxParallel {
				return nil, p.fanoutErr(n.Path, len(n.Items))
			}
		}
		s.Children = make([]*Step, len(n.Items))
		for i, item := range n.Items {
			c, err := p.node(item, sc, path+strings.TrimPrefix(item.Path, n.Path))
			if err != nil {
				return nil, err
			}
			s.Children[i] = c
		}
	}
	return s, nil
}

func (p *planner) fanoutErr(path string, n int) error {
	return &Error{Path: path, Limit: true, Msg: fmt.Sprintf(
		"parallel fan-out %d exceeds limit %d; raise exec.max_parallel_branches in pi-actors.toml, or set PI_ACTORS_MAX_PARALLEL_BRANCHES (for exec and call in your environment; for a spawn in the kernel's: the toml key reaches it without a restart)", n, p.opts.MaxParallel)}
}

func (p *planner) leaf(s *Step, n *Node, sc *scope) error {
	p.leaves++
	if p.leaves > p.opts.MaxLeaves {
		return &Error{Path: n.Path, Limit: true, Msg: fmt.Sprintf("plan exceeds %d leaves; raise exec.max_leaves in pi-actors.toml", p.opts.MaxLeaves)}
	}
	argv := make([]string, 0, len(n.Leaf.words))
	for i, segs := range n.Leaf.words {
		w, err := p.res.word(sc, segs, 0, selfRef{})
		if err != nil {
			return placeErr(n.Path, err)
		}
		if w == "" && i > 0 {
			continue
		}
		if strings.IndexByte(w, 0) >= 0 {
			// exec refuses it (it ran as "cannot execute", 126)
			return errf(n.Path, "word %d of %q holds a NUL byte after substitution (from a value given it): no command argument can hold one", i+1, n.Leaf.Source)
		}
		argv = append(argv, w)
	}
	if argv[0] == "" {
		return errf(n.Path, "the command word of %q is empty after substitution", n.Leaf.Source)
	}
	s.Argv = argv
	if !p.opts.NoLookup {
		s.Exe = p.executable(argv[0])
	}
	s.Risk, s.Warnings = RiskLabels(argv, s.Label)
	for _, l := range s.Risk {
		p.risk[l] = true
	}
	for _, w := range s.Warnings {
		if !p.warned[w] {
			p.warned[w] = true
			p.warn = append(p.warn, w)
		}
	}
	return nil
}

// whenMissing says how a `when` placeholder with no value was decided:
// `{flag} (flag unset)`, or `{items[2]} (no value)` for other forms.
func whenMissing(when, content string) string {
	if m := nameFormRe.FindStringSubmatch(content); m != nil {
		return when + " (" + m[1] + " unset)"
	}
	return when + " (no value)"
}

// placeErr turns a resolution error into an *Error at path, with the fix.
func placeErr(path string, err error) error {
	var miss *errMissing
	if errors.As(err, &miss) {
		name := miss.content
		if m := nameFormRe.FindStringSubmatch(name); m != nil {
			name = m[1]
		} else if m := indexRe.FindStringSubmatch(name); m != nil {
			return errf(path, "missing value for placeholder {%s}: %s must be an array with that index", clip(miss.content), clip(m[1]))
		}
		e := errf(path, "missing value for placeholder {%s}: pass %s=<value> or give it a default", clip(miss.content), clip(name))
		e.Missing = name
		return e
	}
	var te *Error
	if errors.As(err, &te) {
		return err
	}
	return errf(path, "%v", err)
}

// executable resolves the command word: ~ and ~/x against the home
// directory, a relative path with a slash against the working directory, a
// bare name through PATH. It returns "" when nothing is found.
func (p *planner) executable(word string) string {
	if exe, ok := p.lookups[word]; ok {
		return exe
	}
	var exe string
	switch {
	case word == "~":
		exe = p.opts.Home
	case strings.HasPrefix(word, "~/"):
		exe = filepath.Join(p.opts.Home, word[2:])
	case filepath.IsAbs(word):
		exe = word
	case strings.Contains(word, "/"):
		exe = filepath.Join(p.opts.Dir, word)
	default:
		if path, err := exec.LookPath(word); err == nil {
			exe = path
		}
	}
	p.lookups[word] = exe
	return exe
}

func (p *planner) when(n *Node, sc *scope) (bool, string, error) {
	switch w := n.When.(type) {
	case nil:
		return true, "", nil
	case bool:
		return w, strconv.FormatBool(w), nil
	case string:
		s := strings.TrimSpace(w)
		if s == "" {
			return false, `""`, nil
		}
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			v, err := p.res.text(sc, s, 0, selfRef{})
			var miss *errMissing
			if errors.As(err, &miss) {
				// A missing value is falsy, as for a bare name.
				return false, whenMissing(s, miss.content), nil
			}
			if err != nil {
				return false, "", placeErr(n.Path+".when", err)
			}
			return !Falsy(v, true), fmt.Sprintf("%s=%q", s, v), nil
		}
		neg := strings.HasPrefix(s, "!")
		name := strings.TrimSpace(strings.TrimPrefix(s, "!"))
		v, ok, err := p.res.value(sc, name, 0, selfRef{})
		if err != nil {
			return false, "", placeErr(n.Path+".when", err)
		}
		run := !Falsy(v, ok) != neg
		if !ok {
			return run, s + " (" + name + " unset)", nil
		}
		return run, fmt.Sprintf("%s (%s=%q)", s, name, Stringify(v)), nil
	}
	return true, "", nil
}

func (p *planner) label(n *Node, sc *scope) string {
	if n.Label == "" || !strings.Contains(n.Label, "{") {
		return n.Label
	}
	s, err := p.res.text(sc, n.Label, 0, selfRef{})
	if err != nil {
		return n.Label
	}
	return s
}

// control resolves a control value (number or placeholder string) to text.
func (p *planner) control(n *Node, sc *scope, key string, v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case json.Number:
		return x.String(), nil
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	case string:
		s, err := p.res.text(sc, x, 0, selfRef{})
		if err != nil {
			return "", placeErr(n.Path+"."+key, err)
		}
		return s, nil
	}
	return "", errf(n.Path+"."+key, "must be a number or a placeholder string")
}

func (p *planner) duration(n *Node, sc *scope, key string, v any) (time.Duration, error) {
	s, err := p.control(n, sc, key, v)
	if err != nil || v == nil {
		return 0, err
	}
	ms, err := controlValue(key, s)
	if err != nil {
		return 0, errf(n.Path+"."+key, "%v", err)
	}
	return time.Duration(ms * float64(time.Millisecond)), nil
}

func (p *planner) retry(n *Node, sc *scope) (int, error) {
	if n.Retry == nil {
		return 1, nil
	}
	s, err := p.control(n, sc, "retry", n.Retry)
	if err != nil {
		return 0, err
	}
	if strings.TrimSpace(s) == "" {
		return 1, nil
	}
	v, err := controlValue("retry", s)
	if err != nil {
		return 0, errf(n.Path+".retry", "%v", err)
	}
	if v > 1000 {
		return 0, errf(n.Path+".retry", "retry %d is more than 1000 attempts", int(v))
	}
	return int(v), nil
}

func (p *planner) output(n *Node, sc *scope) (*string, error) {
	o := strings.TrimSpace(n.Output)
	if o == "" || o == "stdout" {
		return nil, nil
	}
	if !nameRe.MatchString(o) {
		// A template ("{dir}/out.ogg") or a literal path ("/tmp/out.ogg").
		s, err := p.res.text(sc, o, 0, selfRef{})
		if err != nil {
			return nil, placeErr(n.Path+".output", err)
		}
		return &s, nil
	}
	v, ok, err := p.res.value(sc, o, 0, selfRef{})
	if err != nil {
		return nil, placeErr(n.Path+".output", err)
	}
	if !ok {
		return nil, errf(n.Path+".output", "output names value %q, which has no value; pass %s=<value>, give it a default, write a path (\"./%s\") or use \"stdout\"", o, o, o)
	}
	s := Stringify(v)
	return &s, nil
}

func (p *planner) repeatCount(n *Node, sc *scope) (int, error) {
	path := n.Path + ".repeat"
	var s string
	switch x := n.Repeat.(type) {
	case json.Number:
		s = x.String()
	case float64:
		s = strconv.FormatFloat(x, 'f', -1, 64)
	case string:
		s = strings.TrimSpace(x)
		if m := lengthRe.FindStringSubmatch(s); m != nil {
			v, ok, err := p.res.value(sc, m[1], 0, selfRef{})
			if err != nil {
				return 0, placeErr(path, err)
			}
			arr, isArr := v.([]any)
			if str, isStr := v.(string); ok && isStr {
				if d, err := DecodeJSON([]byte(str)); err == nil {
					arr, isArr = d.([]any)
				}
			}
			if !ok {
				return 0, errf(path, "repeat could not be resolved: %s has no value; pass %s:='[…]' or give it an array default", m[1], m[1])
			}
			if !isArr {
				return 0, errf(path, "repeat could not be resolved: %s is not an array (%s)", m[1], CompactJSON(v))
			}
			if len(arr) == 0 {
				return 0, errf(path, "repeat must be a positive integer: %s is an empty array", m[1])
			}
			return len(arr), nil
		}
		var err error
		if s, err = p.res.text(sc, s, 0, selfRef{}); err != nil {
			return 0, placeErr(path, err)
		}
	}
	v, err := controlValue("repeat", s)
	if err != nil {
		return 0, errf(path, "%v", err)
	}
	if v > 1e9 {
		return 0, errf(path, "repeat %s is too large", s)
	}
	return int(v), nil
}

// annotateStdin records where each step's stdin comes from.
func annotateStdin(s *Step, in string) {
	s.Stdin = in
	switch s.Kind {
	case StepSequence:
		cur := in
		for _, c := range s.Children {
			annotateStdin(c, cur)
			if c.Kind != StepSkipped {
				cur = "stdout of " + c.Path
			}
		}
	case StepParallel:
		for _, c := range s.Children {
			annotateStdin(c, in)
		}
	}
	if s.Recover != nil {
		annotateStdin(s.Recover, "stdout of the failed attempt of "+s.Path)
	}
}
