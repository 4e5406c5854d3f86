package verbs

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/pi-actors/pi-actors/knowledge/api/vectorop"
)

// defaultClusterTimeout is how long recall/search_all scope=cluster waits
// for a member.
const defaultClusterTimeout = time.Second

// recallLimit is recall's default number of hits.
const recallLimit = 10

// clusterKnowledge answers recall and search_all with scope=cluster: every
// up member's knowledge actor is asked in parallel (through the kernels),
// hits are merged by score and labelled with their node; a member that is
// slower than timeout_ms or cannot be reached is named in nodes, never
// waited for. ok is false for any other request.
func clusterKnowledge(env *Env, kr knowledgeRequest, params json.RawMessage) (json.RawMessage, bool, error) {
	var (
		timeout = defaultClusterTimeout
		ms      *int
	)
	switch r := kr.apiRequest().(type) {
	case *vectorop.Recall:
		if r.Scope != "cluster" {
			return nil, false, nil
		}
		ms = r.TimeoutMS
	case *vectorop.SearchAll:
		if r.Scope != "cluster" {
			return nil, false, nil
		}
		ms = r.TimeoutMS
	default:
		return nil, false, nil
	}
	if ms != nil {
		timeout = time.Duration(*ms) * time.Millisecond
	}
	if !env.Config.Cluster.Enabled() {
		return nil, true, env.notClustered("scope=cluster needs a cluster: pi-actors.toml has no [cluster] section", "leave scope out to ask this node's knowledge")
	}
	var nodes ClusterNodes
	if err := env.Call("cluster", map[string]any{"view": "nodes"}, &nodes); err != nil {
		return nil, true, err
	}
	var p map[string]json.RawMessage
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, true, err
	}
	delete(p, "scope")
	delete(p, "timeout_ms")
	local, _ := json.Marshal(p)
	opName := kr.apiRequest().Op()
	type answer struct {
		node string
		raw  json.RawMessage
		err  error
	}
	status := map[string]string{}
	answers := make(chan answer, len(nodes.Nodes))
	asked := 0
	for _, n := range nodes.Nodes {
		if n.Status != "up" {
			status[n.Node] = n.Status
			continue
		}
		asked++
		go func(node string) {
			var raw json.RawMessage
			err := env.CallNode(node, "knowledge", &KnowledgeCall{Op: opName, Params: local}, &raw)
			answers <- answer{node, raw, err}
		}(n.Node)
	}
	deadline := time.After(timeout)
	got := map[string]json.RawMessage{}
wait:
	for range asked {
		select {
		case a := <-answers:
			if a.err != nil {
				status[a.node] = "error: " + a.err.Error()
				continue
			}
			got[a.node], status[a.node] = a.raw, "ok"
		case <-deadline:
			break wait
		}
	}
	for _, n := range nodes.Nodes {
		if _, ok := status[n.Node]; !ok {
			status[n.Node] = fmt.Sprintf("slow: no answer within %s", timeout)
		}
	}
	var out any
	switch r := kr.apiRequest().(type) {
	case *vectorop.Recall:
		out = mergeRecall(r, got, status)
	case *vectorop.SearchAll:
		out = mergeSearchAll(r, got, status)
	}
	b, err := json.Marshal(out)
	return b, true, err
}

func mergeRecall(r *vectorop.Recall, got map[string]json.RawMessage, status map[string]string) *vectorop.RecallResult {
	res := &vectorop.RecallResult{Query: r.Query, Status: "no_matches", Hits: []vectorop.Hit{}, Stores: []string{}, Nodes: status}
	seen := map[string]bool{}
	for node, raw := range got {
		var one vectorop.RecallResult
		if json.Unmarshal(raw, &one) != nil {
			status[node] = "error: unreadable answer"
			continue
		}
		for _, h := range one.Hits {
			h.Node = node
			res.Hits = append(res.Hits, h)
		}
		for _, s := range one.Stores {
			if !seen[s] {
				seen[s] = true
				res.Stores = append(res.Stores, s)
			}
		}
	}
	limit := recallLimit
	if r.Limit != nil {
		limit = *r.Limit
	}
	res.Hits = topHits(res.Hits, limit)
	if len(res.Hits) > 0 {
		res.Status = "ok"
	}
	return res
}

func mergeSearchAll(r *vectorop.SearchAll, got map[string]json.RawMessage, status map[string]string) *vectorop.SearchAllResult {
	res := &vectorop.SearchAllResult{Query: r.Query, Results: []vectorop.DomainResult{}, Nodes: status}
	byDomain := map[string]*vectorop.DomainResult{}
	var order []string
	for node, raw := range got {
		var one vectorop.SearchAllResult
		if json.Unmarshal(raw, &one) != nil {
			status[node] = "error: unreadable answer"
			continue
		}
		for _, d := range one.Results {
			m := byDomain[d.Domain]
			if m == nil {
				m = &vectorop.DomainResult{Domain: d.Domain, Status: d.Status, Hits: []vectorop.Hit{}}
				byDomain[d.Domain] = m
				order = append(order, d.Domain)
			}
			for _, h := range d.Hits {
				h.Node = node
				m.Hits = append(m.Hits, h)
			}
		}
	}
	limit := vectorop.DefaultLimitPerDomain
	if r.LimitPerDomain != nil {
		limit = *r.LimitPerDomain
	}
	sort.Strings(order)
	for _, d := range order {
		m := byDomain[d]
		m.Hits = topHits(m.Hits, limit)
		if len(m.Hits) > 0 {
			m.Status = "ok"
		}
		res.Results = append(res.Results, *m)
	}
	return res
}

// topHits sorts hits by score (best first; ties by node then id, so the
// order is stable) and keeps the first n.
func topHits(hs []vectorop.Hit, n int) []vectorop.Hit {
	sort.SliceStable(hs, func(i, j int) bool {
		if hs[i].Score != hs[j].Score {
			return hs[i].Score > hs[j].Score
		}
		if hs[i].Node != hs[j].Node {
			return hs[i].Node < hs[j].Node
		}
		return hs[i].ID < hs[j].ID
	})
	if len(hs) > n {
		hs = hs[:n]
	}
	return hs
}
