package workflows

import (
	"strconv"
	"strings"
)

// order finds cycles, computes each node's layer (one past its deepest
// dependency) and checks a given execution_order against depends_on; a
// given order is the layering used.
func (w *Workflow) order(given any) error {
	if err := w.findCycle(); err != nil {
		return err
	}
	for _, n := range w.topo() {
		n.Layer = 0
		for _, d := range n.Deps {
			n.Layer = max(n.Layer, w.byID[d.Node].Layer+1)
		}
	}
	if given == nil {
		w.Layers = nil
		for _, n := range w.Nodes {
			for len(w.Layers) <= n.Layer {
				w.Layers = append(w.Layers, nil)
			}
			w.Layers[n.Layer] = append(w.Layers[n.Layer], n.ID)
		}
		return nil
	}
	layers, err := w.parseOrder(given)
	if err != nil {
		return err
	}
	at := map[string]int{}
	for i, layer := range layers {
		for _, id := range layer {
			at[id] = i
		}
	}
	for _, n := range w.Nodes {
		for _, d := range n.Deps {
			if at[d.Node] >= at[n.ID] {
				return invalid(n.ID, "execution_order", "layer %d runs it before or beside its dependency %s (layer %d); depends_on needs %s in an earlier layer", at[n.ID], d.Node, at[d.Node], d.Node)
			}
		}
	}
	w.Layers = layers
	for _, n := range w.Nodes {
		n.Layer = at[n.ID]
	}
	return nil
}

// parseOrder reads execution_order: an array of layers, each an array of
// node ids, every node in exactly one layer.
func (w *Workflow) parseOrder(given any) ([][]string, error) {
	list, ok := given.([]any)
	if !ok || len(list) == 0 {
		return nil, invalid("", "execution_order", "must be an array of layers, each an array of node ids (got %s)", kindOf(given))
	}
	seen := map[string]int{}
	var layers [][]string
	for i, l := range list {
		items, ok := l.([]any)
		if !ok || len(items) == 0 {
			return nil, invalid("", "execution_order["+strconv.Itoa(i)+"]", "must be a non-empty array of node ids (got %s)", kindOf(l))
		}
		var layer []string
		for _, item := range items {
			id, _ := item.(string)
			switch prev, dup := seen[id]; {
			case w.byID[id] == nil:
				return nil, invalid("", "execution_order["+strconv.Itoa(i)+"]", "names unknown node %v", item)
			case dup:
				return nil, invalid(id, "execution_order", "is in layer %d and layer %d; a node runs once", prev, i)
			}
			seen[id] = i
			layer = append(layer, id)
		}
		layers = append(layers, layer)
	}
	for _, n := range w.Nodes {
		if _, ok := seen[n.ID]; !ok {
			return nil, invalid(n.ID, "execution_order", "is in no layer; every node must be in one")
		}
	}
	return layers, nil
}

// findCycle reports the first cycle of depends_on, named node by node.
func (w *Workflow) findCycle() error {
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var stack []string
	var visit func(n *Node) []string
	visit = func(n *Node) []string {
		color[n.ID] = grey
		stack = append(stack, n.ID)
		for _, d := range n.Deps {
			switch color[d.Node] {
			case grey:
				i := len(stack) - 1
				for stack[i] != d.Node {
					i--
				}
				return append(append([]string{}, stack[i:]...), d.Node)
			case white:
				if c := visit(w.byID[d.Node]); c != nil {
					return c
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[n.ID] = black
		return nil
	}
	for _, n := range w.Nodes {
		if color[n.ID] != white {
			continue
		}
		if c := visit(n); c != nil {
			// The path runs along depends_on: each node depends on the next.
			return invalid(c[0], "depends_on", "cycle %s; a workflow is a DAG: remove one of these dependencies", strings.Join(c, " → "))
		}
	}
	return nil
}

// topo lists the nodes dependencies first (the graph has no cycle).
func (w *Workflow) topo() []*Node {
	done := map[string]bool{}
	out := make([]*Node, 0, len(w.Nodes))
	var visit func(n *Node)
	visit = func(n *Node) {
		if done[n.ID] {
			return
		}
		done[n.ID] = true
		for _, d := range n.Deps {
			visit(w.byID[d.Node])
		}
		out = append(out, n)
	}
	for _, n := range w.Nodes {
		visit(n)
	}
	return out
}

// Ancestors lists every node n depends on, directly or not.
func (w *Workflow) Ancestors(n *Node) map[string]bool {
	out := map[string]bool{}
	var walk func(m *Node)
	walk = func(m *Node) {
		for _, d := range m.Deps {
			if !out[d.Node] {
				out[d.Node] = true
				walk(w.byID[d.Node])
			}
		}
	}
	walk(n)
	return out
}

// Dependents lists every node that depends on n, directly or not.
func (w *Workflow) Dependents(n *Node) map[string]bool {
	out := map[string]bool{}
	changed := true
	for changed {
		changed = false
		for _, m := range w.Nodes {
			if out[m.ID] {
				continue
			}
			for _, d := range m.Deps {
				if d.Node == n.ID || out[d.Node] {
					out[m.ID], changed = true, true
					break
				}
			}
		}
	}
	return out
}
