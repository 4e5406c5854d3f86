package verbs

import "encoding/json"

// RoutedOutcome is a verb's outcome carried between kernels: the verb ran
// on Node for a caller on another node, and this is what that caller's
// front door renders (the same text, --json result and exit code as a
// local run of the verb).
type RoutedOutcome struct {
	Node   string          `json:"node"`
	Result json.RawMessage `json:"result,omitempty"`
	Text   string          `json:"text,omitempty"`
	Exit   int             `json:"exit,omitempty"`
	Fail   *Error          `json:"fail,omitempty"`
}

// Routed packs an outcome that ran on node.
func Routed(out *Outcome, node string) *RoutedOutcome {
	r := &RoutedOutcome{Node: node, Text: out.Text, Exit: out.Exit, Fail: out.Fail}
	if out.Result != nil {
		r.Result, _ = json.Marshal(out.Result)
	}
	return r
}

// Outcome unpacks a routed outcome.
func (r *RoutedOutcome) Outcome() *Outcome {
	out := &Outcome{Text: r.Text, Exit: r.Exit, Fail: r.Fail}
	if len(r.Result) > 0 {
		out.Result = r.Result
	}
	return out
}
