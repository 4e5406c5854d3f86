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

// Qualified is the outcome as the caller on another node sees it: its
// run:<run> addresses name the node, and an object result carries
// "node".
func (r *RoutedOutcome) Qualified(run string) *Outcome {
	out := r.Outcome()
	out.Text = QualifyRun(out.Text, run, r.Node)
	if len(r.Result) > 0 && r.Result[0] == '{' {
		var m map[string]json.RawMessage
		if json.Unmarshal(r.Result, &m) == nil {
			if _, ok := m["node"]; !ok {
				m["node"], _ = json.Marshal(r.Node)
				if b, err := json.Marshal(m); err == nil {
					out.Result = json.RawMessage(b)
				}
			}
		}
	}
	return out
}
