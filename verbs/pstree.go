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

// nodeCommand is the command a workflow node's run runs as the workflow
// wrote it ({upstream.<node>.output}, not the placeholder the run's
// template has in its place), when its workflow run is listed too and the
// node has a template of its own.
func nodeCommand(in *runs.Info, listed map[string]*runs.Info) (string, bool) {
	ref := in.Meta.WorkflowNode
	if ref == nil {
		return "", false
	}
	wf := listed[ref.Workflow]
	if wf == nil {
		return "", false
	}
	if wf.Meta.Workflow == nil {
		// Listed from the index alone: read its run.json (once).
		full, err := runs.Load(wf.Dir)
		if err != nil {
			return "", false
		}
		wf = full
		listed[ref.Workflow] = full
	}
	if ref.Instance != "" && WorkflowInstance(wf.Meta) != ref.Instance {
		return "", false // an earlier workflow of the same id
	}
	obj, _ := wf.Meta.Workflow.(map[string]any)
	nodes, _ := obj["nodes"].([]any)
	for _, n := range nodes {
		node, _ := n.(map[string]any)
		if id, _ := node["id"].(string); id != ref.Node {
			continue
		}
		if tmpl, ok := node["template"]; ok && tmpl != nil {
			return commandOf(tmpl), true
		}
		return "", false
	}
	return "", false
}
