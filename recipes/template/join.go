package template

import (
	"bytes"
	"strings"

	"github.com/pi-actors/pi-actors/internal/lazyre"
)

// joinHeaderRe is a branch report's first line in a parallel join's text
// (docs/command-templates.md, "Parallel joins").
var joinHeaderRe = lazyre.New(`(?m)^--- branch: (.*) status: (done|failed|timeout|aborted) ---$`)

// JoinBranches reads the branch reports back from a parallel join's text,
// in order (Label and Status). Only the engine writes a header line: one
// in a branch's output is written quoted (quoteHeaders).
func JoinBranches(join string) []Branch {
	var out []Branch
	for _, m := range joinHeaderRe.FindAllStringSubmatch(join, -1) {
		out = append(out, Branch{Label: m[1], Status: m[2]})
	}
	return out
}

// joinLabel is a branch label as its header line carries it: on one line.
func joinLabel(label string) string {
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(label)
}

// quoteHeaders writes a line of branch output (stdout or stderr) that
// reads as a branch report header with a leading space, so a branch (a
// sub-agent quoting a join, say) cannot add reports to the join: stage
// quorum counts what the engine wrote.
func quoteHeaders(b []byte) []byte {
	if !bytes.Contains(b, []byte("--- branch: ")) {
		return b
	}
	return joinHeaderRe.ReplaceAll(b, []byte(" $0"))
}
