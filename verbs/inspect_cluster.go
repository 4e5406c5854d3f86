package verbs

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// ClusterNode is one member in `inspect target=cluster view=nodes`.
type ClusterNode struct {
	Node      string    `json:"node"`
	Address   string    `json:"address"`
	Status    string    `json:"status"`
	LiveRuns  int       `json:"live_runs"`
	Load      float64   `json:"load"`
	Version   string    `json:"version"`
	Since     time.Time `json:"since"`
	LastSeen  time.Time `json:"last_seen,omitzero"`
	StartedAt time.Time `json:"started_at,omitzero"`
	MemberID  string    `json:"member_id,omitempty"`
	Self      bool      `json:"self,omitempty"`
}

// ClusterNodes is view=nodes.
type ClusterNodes struct {
	Cluster string        `json:"cluster"`
	Node    string        `json:"node"`
	State   string        `json:"state"`
	Nodes   []ClusterNode `json:"nodes"`
}

// inspectCluster answers target=cluster: view=nodes (every member: node,
// address, status up|unreachable|left, live runs, load, version, since)
// and view=status (this kernel's cluster side).
func inspectCluster(_ context.Context, env *Env, q *inspectQuery) (*inspectOutput, error) {
	if !env.Config.Cluster.Enabled() {
		return nil, env.notClustered("this kernel is not in a cluster: pi-actors.toml has no [cluster] section", "docs/cluster.md")
	}
	if q.view == "status" {
		var st map[string]any
		if err := env.Call("cluster", map[string]any{"view": "status"}, &st); err != nil {
			return nil, err
		}
		var b strings.Builder
		fmt.Fprintf(&b, "cluster=%v node=%v state=%v provider=%v tls=%v", st["cluster"], st["node"], st["state"], st["provider"], st["tls"])
		if a, ok := st["address"]; ok {
			fmt.Fprintf(&b, " address=%v member_id=%v", a, st["member_id"])
		}
		if e, ok := st["error"]; ok {
			fmt.Fprintf(&b, "\nerror: %v", e)
		}
		return &inspectOutput{text: b.String(), details: st}, nil
	}
	var res ClusterNodes
	if err := env.Call("cluster", map[string]any{"view": "nodes"}, &res); err != nil {
		return nil, err
	}
	return &inspectOutput{text: clusterNodesText(&res, time.Now()), details: &res}, nil
}

func clusterNodesText(res *ClusterNodes, now time.Time) string {
	up := 0
	for _, n := range res.Nodes {
		if n.Status == "up" {
			up++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "cluster=%s node=%s state=%s nodes=%d up=%d\n", res.Cluster, res.Node, res.State, len(res.Nodes), up)
	fmt.Fprintf(&b, "%-16s %-12s %-22s %5s %6s %-12s %s\n", "NODE", "STATUS", "ADDRESS", "RUNS", "LOAD", "VERSION", "SINCE")
	for _, n := range res.Nodes {
		name := n.Node
		if n.Self {
			name += "*"
		}
		since := "-"
		if !n.Since.IsZero() {
			since = ShortDuration(now.Sub(n.Since))
		}
		fmt.Fprintf(&b, "%-16s %-12s %-22s %5d %6.2f %-12s %s\n", name, n.Status, n.Address, n.LiveRuns, n.Load, n.Version, since)
	}
	b.WriteString("next=inspect_target=cluster_view=status|ps_--cluster")
	return b.String()
}
