package workflows

import (
	"fmt"
	"strings"

	"github.com/pi-actors/pi-actors/recipes/template"
)

// AgentRecipe is the packaged recipe an agent node runs through, named
// by its packaged path: a user recipe called subagent-prompt never stands
// in for it.
const AgentRecipe = "pkg:subagent-prompt.json"

// literalKeys are spawn parameters whose strings are never templates:
// upstream references in them are left alone.
var literalKeys = map[string]bool{"recipe": true, "file": true, "state_dir": true, "restart": true, "values": true}

// SpawnParams builds the spawn request of a node's child run (run is the
// workflow run's id): the node's spawn parameters as given, with upstream
// references resolved through up — in templates as placeholders the
// template engine substitutes per word, in values and prompts as text —
// and an agent node as the subagent-prompt recipe with the workflow's
// model. The caller adds the attempt (workflow_node).
func (w *Workflow) SpawnParams(n *Node, run string, up func(string) Upstream) map[string]any {
	p := make(map[string]any, len(n.Spawn)+2)
	values := map[string]any{}
	if v, ok := n.Spawn["values"].(map[string]any); ok {
		values = w.expandValues(v, up).(map[string]any)
	}
	for k, v := range n.Spawn {
		if literalKeys[k] {
			p[k] = v
			continue
		}
		p[k] = w.rewriteTemplate(v, up, values)
	}
	if n.Agent != "" {
		p["recipe"] = AgentRecipe
		values["prompt"] = w.agentPrompt(n, run, up)
		if _, set := values["model"]; !set {
			values["model"] = w.modelOf(n)
		}
	}
	if len(values) > 0 {
		p["values"] = values
	}
	p["as"] = "run:" + ChildRun(run, n.ID)
	return p
}

func (w *Workflow) modelOf(n *Node) string {
	if n.Model != "" {
		return n.Model
	}
	return w.Model
}

// agentPrompt is what an agent node's subagent reads: its role, the
// prompt, the node's context and the outputs its context names
// (seed 001's context.upstream_outputs).
func (w *Workflow) agentPrompt(n *Node, run string, up func(string) Upstream) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Role: %s (workflow run:%s, node %s)\n\n%s", n.Agent, run, n.ID, w.expandText(n.Prompt, up))
	if n.Context != nil {
		fmt.Fprintf(&b, "\n\nContext: %s", template.CompactJSON(n.Context))
	}
	for _, id := range upstreamOutputs(n) {
		if w.byID[id] == nil {
			continue
		}
		u := up(id)
		fmt.Fprintf(&b, "\n\nOutput of %s (its last 64 KiB; all of it in %s):\n%s", id, u.OutputFile, u.Output)
	}
	return b.String()
}

// upstreamOutputs lists context.upstream_outputs.
func upstreamOutputs(n *Node) []string {
	ctx, _ := n.Context.(map[string]any)
	list, _ := ctx["upstream_outputs"].([]any)
	var out []string
	for _, v := range list {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
