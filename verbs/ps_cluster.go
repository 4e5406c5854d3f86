package verbs

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// psCluster is ps --cluster: this node's rows and every up member's,
// asked in parallel through the kernels (op verb), merged newest first
// with a NODE column. A member that does not answer is named, not
// waited on past the kernel's own timeout.
func psCluster(ctx context.Context, env *Env, p *Ps) (*Outcome, error) {
	merged, _, err := ClusterPs(ctx, env, p, "")
	if err != nil {
		return nil, err
	}
	_, lines, _ := p.query() // ClusterPs checked it
	// Newest first across nodes, as ps orders one node's runs: lines=
	// keeps the newest, whichever node they are on.
	sort.SliceStable(merged.Runs, func(i, j int) bool {
		a, b := &merged.Runs[i], &merged.Runs[j]
		if !a.CreatedAt.Equal(b.CreatedAt) {
			return a.CreatedAt.After(b.CreatedAt)
		}
		return a.Node < b.Node
	})
	if len(merged.Runs) > lines {
		merged.More += len(merged.Runs) - lines
		merged.Runs = merged.Runs[:lines]
	}
	if len(merged.Unreachable) == 0 {
		merged.Unreachable = nil
	}
	text := psTable(merged, time.Now(), env.Width)
	if len(merged.Unreachable) > 0 {
		var names []string
		for n, why := range merged.Unreachable {
			names = append(names, fmt.Sprintf("%s (%s)", n, why))
		}
		sort.Strings(names)
		text += "\nnot listed: " + strings.Join(names, ", ")
	}
	return &Outcome{Text: text, Result: merged}, nil
}

// ClusterPs asks every up member but skip ("": none) for its rows — ps
// with p's filter and lines, each member answering for itself — in
// parallel through this node's kernel (op verb). It returns the rows
// (Node set; in no order, not cut to lines) and the members as
// view=nodes has them. A member that is not up or does not answer is in
// Unreachable with why (never nil). ps --cluster and top's cluster scope
// (which skips its own node: its rows come from the runs stream) use it.
func ClusterPs(_ context.Context, env *Env, p *Ps, skip string) (*PsResult, *ClusterNodes, error) {
	if !env.Config.Cluster.Enabled() {
		return nil, nil, env.notClustered("ps --cluster needs a cluster: pi-actors.toml has no [cluster] section", "docs/cluster.md")
	}
	if _, _, err := p.query(); err != nil {
		return nil, nil, err
	}
	var nodes ClusterNodes
	if err := env.Call("cluster", map[string]any{"view": "nodes"}, &nodes); err != nil {
		return nil, nil, err
	}
	one := *p
	one.Cluster = false
	var (
		mu     sync.Mutex
		wg     sync.WaitGroup
		merged = &PsResult{Runs: []RunRow{}, Unreachable: map[string]string{}}
	)
	for _, n := range nodes.Nodes {
		if n.Node == skip && skip != "" {
			continue
		}
		if n.Status != "up" {
			merged.Unreachable[n.Node] = n.Status
			continue
		}
		wg.Add(1)
		go func(node string) {
			defer wg.Done()
			var ro RoutedOutcome
			err := env.CallNode(node, "verb", map[string]any{"verb": "ps", "params": &one}, &ro)
			var res PsResult
			if err == nil {
				err = json.Unmarshal(ro.Result, &res)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				merged.Unreachable[node] = err.Error()
				return
			}
			merged.Session, merged.Filter = res.Session, res.Filter
			merged.Count += res.Count
			merged.More += res.More
			for _, r := range res.Runs {
				r.Node = node
				merged.Runs = append(merged.Runs, r)
			}
		}(n.Node)
	}
	wg.Wait()
	return merged, &nodes, nil
}
