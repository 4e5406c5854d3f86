package verbs

import (
	"fmt"
	"strings"
	"time"

	"github.com/pi-actors/pi-actors/runs"
)

// treeOrder puts each run's child runs (a workflow's nodes, runs a leaf
// spawned) right after it, in the order given; runs whose parent is not
// listed stay where they are.
func treeOrder(list []*runs.Info) []*runs.Info {
	listed := make(map[string]*runs.Info, len(list))
	for _, in := range list {
		listed[in.Meta.Run] = in
	}
	children := map[string][]*runs.Info{}
	var roots []*runs.Info
	for _, in := range list {
		if p := in.Meta.Parent; p != "" && p != in.Meta.Run && listed[p] != nil && !olderThan(in, listed[p]) {
			children[p] = append(children[p], in)
			continue
		}
		roots = append(roots, in)
	}
	out := make([]*runs.Info, 0, len(list))
	seen := make(map[string]bool, len(list))
	var walk func(in *runs.Info)
	walk = func(in *runs.Info) {
		if seen[in.Meta.Run] {
			return
		}
		seen[in.Meta.Run] = true
		out = append(out, in)
		for _, c := range children[in.Meta.Run] {
			walk(c)
		}
	}
	for _, in := range roots {
		walk(in)
	}
	for _, in := range list { // a parent cycle leaves runs unreached
		if !seen[in.Meta.Run] {
			out = append(out, in)
		}
	}
	return out
}

// olderThan reports whether child started before parent did: its parent
// was an earlier run of the same id (a workflow or a script started again
// under its old name), not the one listed.
func olderThan(child, parent *runs.Info) bool {
	c, p := child.Meta.CreatedAt, parent.Meta.CreatedAt
	return !c.IsZero() && !p.IsZero() && c.Before(p)
}

// treeIDs is the ID cell of each row: indented under the row of its
// parent when that row is shown above it.
func treeIDs(rows []RunRow) []string {
	depth := make(map[string]int, len(rows))
	created := make(map[string]time.Time, len(rows))
	out := make([]string, len(rows))
	for i, r := range rows {
		created[r.Run] = r.CreatedAt
		d, ok := depth[r.Parent]
		p := created[r.Parent]
		if r.Parent == "" || r.Parent == r.Run || !ok || (!r.CreatedAt.IsZero() && !p.IsZero() && r.CreatedAt.Before(p)) {
			depth[r.Run], out[i] = 0, r.Run
			continue
		}
		depth[r.Run] = d + 1
		out[i] = strings.Repeat("  ", d) + "└ " + r.Run
	}
	return out
}

// workflowCommand is what a workflow run runs, as listings show it.
func workflowCommand(wf any) string {
	obj, _ := wf.(map[string]any)
	nodes, _ := obj["nodes"].([]any)
	s := fmt.Sprintf("workflow (%d nodes)", len(nodes))
	if id, _ := obj["id"].(string); id != "" {
		s = fmt.Sprintf("workflow %s (%d nodes)", id, len(nodes))
	}
	return oneLine(s, previewChars)
}
