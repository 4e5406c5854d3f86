package verbs

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// A log line that reads exactly like the answer's own next action: the
// text's next action names the node (as the JSON's next_actions does); it
// was left bare as content.
func TestQualifyNextActionEqualToALogLine(t *testing.T) {
	next := "pi-actors inspect target=run:x view=status"
	res, _ := json.Marshal(map[string]any{"run": "x", "stdout": []string{next}, "next_actions": []string{next}})
	ro := &RoutedOutcome{Node: "n2", Result: res,
		Text: "run=x status=running\n--- stdout.log ---\n" + next + "\nnext: " + next}
	out := ro.Qualified("x")
	lines := strings.Split(out.Text, "\n")
	if !strings.Contains(lines[len(lines)-1], "run:x@n2") {
		t.Errorf("the answer's own next action is left bare: %q", lines[len(lines)-1])
	}
	var r struct {
		Stdout []string `json:"stdout"`
	}
	json.Unmarshal(out.Result.(json.RawMessage), &r)
	if len(r.Stdout) != 1 || r.Stdout[0] != next {
		t.Errorf("the JSON's log line changed: %q", r.Stdout)
	}
}

// routedLogs is a routed logs answer of n long lines that mention run:x,
// each cut as logs cuts them.
func routedLogs(n int) *RoutedOutcome {
	var lines []string
	for i := range n {
		lines = append(lines, cutLine(fmt.Sprintf("run:x line %d %s", i, strings.Repeat("a", 5000)), tailLineChars))
	}
	res, _ := json.Marshal(map[string]any{"stdout": lines, "stdoutLog": "/s/stdout.log"})
	text := fmt.Sprintf("run=x status=running stdout_lines=%d\n--- stdout.log (/s/stdout.log) ---\n", n) + strings.Join(lines, "\n")
	return &RoutedOutcome{Node: "n2", Result: res, Text: text}
}

// The cut log lines of a routed logs answer are content: the text comes
// back as it was.
func TestQualifyCutLogLinesAreContent(t *testing.T) {
	ro := routedLogs(50)
	if out := ro.Qualified("x"); out.Text != ro.Text {
		t.Errorf("the text of cut log lines was rewritten")
	}
}

// BenchmarkQualifyRoutedLogs: one routed logs answer of 500 lines of 2,000
// characters that mention the run (~1 MB of text); it took 5.5 s when the
// cut previews were found by trying every length.
func BenchmarkQualifyRoutedLogs(b *testing.B) {
	ro := routedLogs(500)
	b.SetBytes(int64(len(ro.Text)))
	for b.Loop() {
		ro.Qualified("x")
	}
}
