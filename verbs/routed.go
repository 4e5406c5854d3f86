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
// run:<run> addresses name the node (in the text and in the result, next
// actions included), and an object result carries "node".
func (r *RoutedOutcome) Qualified(run string) *Outcome {
	out := r.Outcome()
	out.Text = QualifyRun(out.Text, run, r.Node)
	if len(r.Result) > 0 {
		out.Result = QualifyResult(r.Result, run, r.Node)
	}
	return out
}

// QualifyResult is a JSON answer about run from node as a caller on
// another node reads it: every run:<run> in it names the node, and an
// object gets "node" when it has none. Anything it cannot read comes back
// as it was.
func QualifyResult(raw json.RawMessage, run, node string) json.RawMessage {
	if len(raw) == 0 || raw[0] != '{' {
		return raw
	}
	q := json.RawMessage(QualifyRun(string(raw), run, node))
	var m map[string]json.RawMessage
	if json.Unmarshal(q, &m) != nil {
		return raw // never break an answer
	}
	if _, ok := m["node"]; ok {
		return q
	}
	m["node"], _ = json.Marshal(node)
	b, err := json.Marshal(m)
	if err != nil {
		return q
	}
	return b
}
