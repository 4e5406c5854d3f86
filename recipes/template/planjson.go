package template

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// stepJSON is the documented shape of a plan step (--dry-run --json).
type stepJSON struct {
	Path       string   `json:"path"`
	Kind       string   `json:"kind"`
	Label      string   `json:"label,omitempty"`
	Argv       []string `json:"argv,omitempty"`
	Executable *string  `json:"executable,omitempty"`
	Stdin      string   `json:"stdin"`
	When       string   `json:"when,omitempty"`
	DelayMS    float64  `json:"delay_ms,omitempty"`
	TimeoutMS  float64  `json:"timeout_ms,omitempty"`
	Retry      int      `json:"retry,omitempty"`
	Failure    string   `json:"failure"`
	Output     *string  `json:"output,omitempty"`
	Recover    *Step    `json:"recover,omitempty"`
	Children   []*Step  `json:"children,omitempty"`
	Cut        int      `json:"children_cut,omitempty"`
	RiskLabels []string `json:"risk_labels,omitempty"`
	Warnings   []string `json:"warnings,omitempty"`
	Context    any      `json:"actor_recipe_context,omitempty"`
}

// MarshalJSON renders a step with durations in milliseconds and the
// failure scope by name.
func (s *Step) MarshalJSON() ([]byte, error) {
	j := stepJSON{
		Path: s.Path, Kind: s.Kind, Label: s.Label, Argv: s.Argv, Stdin: s.Stdin,
		When: s.When, DelayMS: ms(s.Delay.Seconds()), TimeoutMS: ms(s.Timeout.Seconds()),
		Failure: s.Failure.String(), Output: s.Output, Recover: s.Recover, Children: s.Children, Cut: s.ChildrenCut,
		RiskLabels: s.Risk, Warnings: s.Warnings,
	}
	if s.Context != nil {
		j.Context = s.Context
	}
	if s.Retry > 1 {
		j.Retry = s.Retry
	}
	if s.Kind == StepLeaf {
		exe := s.Exe
		j.Executable = &exe
	}
	return json.Marshal(j)
}

func ms(sec float64) float64 { return sec * 1000 }

// Cut is a copy of the step tree that keeps at most n children of each
// step (ChildrenCut counts those it leaves out), and whether it left any.
func (s *Step) Cut(n int) (*Step, bool) {
	if s == nil {
		return nil, false
	}
	c := *s
	var any bool
	c.Recover, any = s.Recover.Cut(n)
	kids := s.Children
	if len(kids) > n {
		c.ChildrenCut, kids, any = len(kids)-n, kids[:n], true
	}
	if kids != nil {
		c.Children = make([]*Step, len(kids))
		for i, k := range kids {
			var below bool
			c.Children[i], below = k.Cut(n)
			any = any || below
		}
	}
	return &c, any
}

// WriteText prints the plan as an indented tree, one step per line.
func (p *Plan) WriteText(w io.Writer) {
	fmt.Fprintf(w, "plan leaves=%d", p.Leaves)
	if len(p.RiskLabels) > 0 {
		fmt.Fprintf(w, " risk_labels=%s", strings.Join(p.RiskLabels, ","))
	}
	fmt.Fprintf(w, " warnings=%d\n", len(p.Warnings))
	writeStep(w, p.Root, 0, "")
	for _, warn := range p.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
}

func writeStep(w io.Writer, s *Step, depth int, role string) {
	ind := strings.Repeat("  ", depth)
	fmt.Fprintf(w, "%s%s%s %s", ind, role, s.Kind, s.Path)
	if s.Label != "" {
		fmt.Fprintf(w, " label=%q", s.Label)
	}
	if s.When != "" {
		fmt.Fprintf(w, " when=%s", s.When)
	}
	if s.Kind == StepLeaf {
		fmt.Fprintf(w, " argv=%s", CompactJSON(s.Argv))
		if s.Exe == "" {
			fmt.Fprint(w, " executable=NOT_FOUND")
		} else if s.Exe != s.Argv[0] {
			fmt.Fprintf(w, " executable=%s", s.Exe)
		}
	}
	if s.Kind != StepSkipped {
		fmt.Fprintf(w, " stdin=%q", s.Stdin)
	}
	if s.Delay > 0 {
		fmt.Fprintf(w, " delay=%s", s.Delay)
	}
	if s.Timeout > 0 {
		fmt.Fprintf(w, " timeout=%s", s.Timeout)
	}
	if s.Retry > 1 {
		fmt.Fprintf(w, " retry=%d", s.Retry)
	}
	if s.Failure != ScopeContinue {
		fmt.Fprintf(w, " failure=%s", s.Failure)
	}
	if s.Output != nil {
		fmt.Fprintf(w, " output=%q", *s.Output)
	}
	if len(s.Risk) > 0 {
		fmt.Fprintf(w, " risk=%s", strings.Join(s.Risk, ","))
	}
	fmt.Fprintln(w)
	for _, c := range s.Children {
		writeStep(w, c, depth+1, "")
	}
	if s.Recover != nil {
		writeStep(w, s.Recover, depth+1, "recover: ")
	}
}
