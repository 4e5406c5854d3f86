package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/pi-actors/pi-actors/actors"
	"github.com/pi-actors/pi-actors/internal/fsutil"
	"github.com/pi-actors/pi-actors/verbs"
)

// Node statuses.
const (
	statusUp          = "up"
	statusUnreachable = "unreachable"
	statusLeft        = "left"
)

// NodeView is one member as `inspect target=cluster view=nodes` shows it
// (the verb layer's type: what the kernel answers is what the CLI reads).
type NodeView = verbs.ClusterNode

// nodeState is what the directory knows of another node.
type nodeState struct {
	NodeView
	Digest string             `json:"digest,omitempty"`
	Runs   []actors.RunDigest `json:"runs,omitempty"`
	// Manage is its automanaged provider's address, as it reported it:
	// a node no longer in cluster.peers is forgotten at the next start.
	Manage string `json:"manage,omitempty"`
	// Cluster and Provider are the cluster it was a member of, as this
	// node was configured when it saved the file: a node of another
	// cluster (pi-actors.toml's [cluster] changed) is forgotten.
	Cluster   string `json:"cluster,omitempty"`
	Provider  string `json:"provider,omitempty"`
	index     map[string]int
	failures  int
	inflight  bool
	fetching  bool
	lastPong  time.Time
	stuckFrom time.Time
	// listening: at its last failed ping, the member's port took a TCP
	// connection — it is alive and not answering this member id (it
	// blocked it), not gone or cut off.
	listening bool
	// answered is the engine (member id) of this node the member last
	// answered a ping from: only a member that answered this member id
	// and stopped can have blocked it.
	answered string
	// leftMember is the member id that said goodbye: a pong of it that
	// was on its way when it left does not make it up again (a new start
	// of the node comes under a new id).
	leftMember string
}

// directory is this node's view of the other members (see the package
// doc): the provider's topology says who is a member, pings over the
// remote say who is reachable and trusted.
type directory struct {
	s     *Side
	path  string
	mu    sync.Mutex
	nodes map[string]*nodeState
	dirty bool
	saved time.Time
	// alone is since when the topology has held no other member while
	// peers are configured; isolations counts renewals for the back-off.
	alone      time.Time
	isolations int
	lastPing   time.Time
	// A batch's placements: each node's live runs when it began, and
	// the runs placed on it since.
	base, assigned map[string]int
	lastPlace      time.Time
	// checked are the member ids with this node's name already pinged.
	checked map[string]bool
}

func newDirectory(s *Side) *directory {
	return &directory{s: s, path: filepath.Join(s.k.AgentDir(), "tmp", "pi-actors", "cluster", "nodes.json"), nodes: map[string]*nodeState{}}
}

// load reads the nodes a previous kernel knew: they start unreachable
// until a ping says otherwise.
func (d *directory) load() {
	b, err := os.ReadFile(d.path)
	if err != nil {
		return
	}
	var list []*nodeState
	if err := json.Unmarshal(b, &list); err != nil {
		d.s.log.Warn("cluster nodes file unreadable; starting empty", "path", d.path, "err", err)
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, n := range list {
		if n.Node == "" || n.Node == d.s.node {
			continue
		}
		if why := d.forgotten(n); why != "" {
			d.s.log.Info("cluster node forgotten", "node", n.Node, "why", why)
			d.dirty = true
			continue
		}
		if n.Status == statusUp {
			n.Status = statusUnreachable
		}
		n.reindex()
		d.nodes[n.Node] = n
	}
}

// forgotten says why a node a previous kernel knew is no member any more
// ("": it is kept): it was a member of another cluster (another name or
// provider); with the automanaged provider, its manage address is not in
// cluster.peers (it was taken out of the cluster); with any, it has not
// been up for forgetAfter.
func (d *directory) forgotten(n *nodeState) string {
	if n.Cluster != "" && (n.Cluster != d.s.cfg.Name || n.Provider != d.s.cfg.Provider) {
		return fmt.Sprintf("it was a member of cluster %s (%s), and this node is in cluster %s (%s) now", n.Cluster, n.Provider, d.s.cfg.Name, d.s.cfg.Provider)
	}
	if d.s.cfg.Provider == "automanaged" && n.Manage != "" && !slices.Contains(d.s.cfg.Peers, n.Manage) {
		return "its manage address " + n.Manage + " is not in cluster.peers"
	}
	if n.Status != statusUp && !n.Since.IsZero() && time.Since(n.Since) > forgetAfter {
		return fmt.Sprintf("%s since %s (more than %s)", n.Status, n.Since.Format(time.RFC3339), forgetAfter)
	}
	return ""
}

// forgetAfter is how long a node that is not up stays known.
const forgetAfter = 30 * 24 * time.Hour

// save writes the directory (atomically), at most every few seconds.
func (d *directory) save() {
	d.mu.Lock()
	if !d.dirty {
		d.mu.Unlock()
		return
	}
	list := make([]*nodeState, 0, len(d.nodes))
	for _, n := range d.nodes {
		n.Cluster, n.Provider = d.s.cfg.Name, d.s.cfg.Provider
		list = append(list, n)
	}
	d.dirty = false
	d.saved = time.Now()
	b, err := json.Marshal(list)
	d.mu.Unlock()
	if err != nil {
		return
	}
	os.MkdirAll(filepath.Dir(d.path), 0o700)
	if err := fsutil.WriteFile(d.path, b, 0o600); err != nil {
		d.s.log.Warn("save cluster nodes", "err", err)
	}
}

func (n *nodeState) reindex() {
	n.index = make(map[string]int, len(n.Runs))
	for i, r := range n.Runs {
		n.index[r.Run] = i
	}
}

func (n *nodeState) setStatus(st string) {
	if n.Status != st {
		n.Status, n.Since = st, time.Now().UTC()
	}
}

// refresh brings the directory up to date with the engine's topology and
// pings members (once a second). It returns why the engine must restart
// under a new member id, or "".
func (d *directory) refresh(eng *engine) string {
	members := eng.cluster.MemberList.Members().Members()
	now := time.Now()
	inTopology := map[string]string{} // node → member id
	addrs := map[string]string{}
	for _, m := range members {
		if systemID(m.Id) == eng.id {
			continue
		}
		node := nodeOf(m.Id)
		if node == d.s.node {
			d.checkDuplicate(eng, m.Address(), m.Id)
			continue
		}
		if prev, ok := inTopology[node]; ok && systemID(prev) > systemID(m.Id) {
			continue // an older start of a restarted node may linger a moment
		}
		inTopology[node] = m.Id
		addrs[node] = m.Address()
	}
	d.mu.Lock()
	defer func() {
		d.mu.Unlock()
		if time.Since(d.saved) > 5*time.Second {
			d.save()
		}
	}()
	for node, id := range inTopology {
		n := d.nodes[node]
		if n == nil {
			n = &nodeState{NodeView: NodeView{Node: node, Status: statusUnreachable, Since: now.UTC()}}
			d.nodes[node] = n
		}
		if n.MemberID != id || n.Address != addrs[node] {
			// A new start of that node: nothing of the old one counts.
			n.MemberID, n.Address, n.failures, n.stuckFrom, n.answered = id, addrs[node], 0, time.Time{}, ""
			d.dirty = true
		}
	}
	for node, n := range d.nodes {
		if _, ok := inTopology[node]; !ok {
			n.stuckFrom, n.failures = time.Time{}, 0
			if n.Status == statusUp {
				n.setStatus(statusUnreachable)
				d.dirty = true
				d.s.log.Info("member unreachable", "node", node)
			}
		}
	}
	// Isolation: no other member while peers are configured. The engine
	// keeps ids it dropped blocked, so a node cut off and reconnected
	// stays out until it joins under a new id.
	if len(inTopology) == 0 && d.expectsPeers() {
		if d.alone.IsZero() {
			d.alone = now
		}
		if now.Sub(d.alone) > isolationBackoff(d.isolations) {
			d.isolations++
			d.alone = time.Time{}
			return "no other member in the topology although peers are configured"
		}
	} else {
		d.alone, d.isolations = time.Time{}, 0
	}
	if now.Sub(d.lastPing) < time.Second {
		return ""
	}
	d.lastPing = now
	answering := 0
	for node := range inTopology {
		if d.nodes[node].Status == statusUp {
			answering++
		}
	}
	for node := range inTopology {
		n := d.nodes[node]
		if n.inflight {
			continue
		}
		n.inflight = true
		go d.ping(eng, n.NodeView.Node, n.Address)
		// A member the topology keeps that answered this member id and
		// no longer does has most likely blocked it (see the package
		// doc): this member renews its id. One that never answered it
		// (another CA's certificate, a manage port alone) stays
		// untrusted: renewing would not help. Every renewal ends this
		// node's streams to every member, so it is the last resort: not
		// for a member whose port takes no connection (gone or cut off,
		// not blocking), and while other members answer only once the
		// silence has lasted stuckLong (a member stopped for a moment,
		// the discovery service down, is no reason to leave the others).
		limit := stuckAfter
		if answering > 0 {
			limit = stuckLong
		}
		if n.Status != statusUp && n.answered == eng.id && n.listening && !n.stuckFrom.IsZero() && now.Sub(n.stuckFrom) > limit {
			n.stuckFrom, n.answered = time.Time{}, ""
			return fmt.Sprintf("member %s is in the topology but has not answered for %s", node, limit)
		}
	}
	return ""
}

// stuckAfter is how long a member may stay in the topology unanswering
// when no other member answers; stuckLong when others do.
const (
	stuckAfter = 3 * time.Second
	stuckLong  = 30 * time.Second
)

func isolationBackoff(n int) time.Duration {
	d := 10 * time.Second << min(n, 3)
	return min(d, 60*time.Second)
}

// expectsPeers reports whether other members are configured (automanaged
// lists them); with a discovery service, a lone member is normal.
func (d *directory) expectsPeers() bool {
	if d.s.cfg.Provider != "automanaged" {
		return len(d.nodes) > 0
	}
	return len(d.s.cfg.Peers) > 1
}

// ping asks one member about itself; an answer over the mutual-TLS
// remote makes it trusted and up.
func (d *directory) ping(eng *engine, node, addr string) {
	e, err := eng.request(addr, &envelope{Kind: kindPing, From: d.s.node}, pingTimeout)
	var p *pong
	listening := false
	if err == nil {
		p = e.Info
	} else if c, derr := net.DialTimeout("tcp", addr, listenProbe); derr == nil {
		c.Close()
		listening = true
	}
	if d.answered(eng.id, node, addr, p, err, listening) {
		d.fetchDigest(eng, node, addr, p.Digest)
	}
}

// answered applies a ping's outcome (p nil when it failed with err) to
// the node; fetch says its runs changed and are to be read.
func (d *directory) answered(engID, node, addr string, p *pong, err error, listening bool) (fetch bool) {
	d.mu.Lock()
	n := d.nodes[node]
	if n == nil {
		d.mu.Unlock()
		return
	}
	n.inflight = false
	if errors.Is(err, errEngineStopped) {
		d.mu.Unlock()
		return // this member restarted: the node is asked again by the new one
	}
	if p == nil || p.Node != node {
		n.failures++
		n.listening = listening
		if n.stuckFrom.IsZero() {
			n.stuckFrom = time.Now()
		}
		if n.Status == statusUp && n.failures >= 3 {
			n.setStatus(statusUnreachable)
			d.dirty = true
			d.s.log.Info("member unreachable", "node", node, "err", err)
		}
		d.mu.Unlock()
		return
	}
	if n.Status == statusLeft && p.MemberID == n.leftMember {
		d.mu.Unlock()
		return
	}
	if n.Status != statusUp {
		d.s.log.Info("member up", "node", node, "address", addr, "member", p.MemberID)
		d.dirty = true
	}
	n.setStatus(statusUp)
	n.failures, n.stuckFrom, n.answered = 0, time.Time{}, engID
	n.LiveRuns, n.Load, n.Version, n.StartedAt = p.LiveRuns, p.Load1, p.Version, p.StartedAt
	if p.Manage != "" && p.Manage != n.Manage {
		n.Manage, d.dirty = p.Manage, true
	}
	n.LastSeen, n.lastPong = time.Now().UTC(), time.Now()
	fetch = p.Digest != n.Digest && !n.fetching
	if fetch {
		n.fetching = true
	}
	d.mu.Unlock()
	return fetch
}

const pingTimeout = time.Second

// listenProbe bounds the TCP connect that tells a member that is alive
// but not answering from one that is gone or cut off.
const listenProbe = 300 * time.Millisecond

// byeTimeout bounds each goodbye; members are told at once, so a kernel
// stop waits at most this long for them.
const byeTimeout = time.Second

// fetchDigest reads a member's runs.
func (d *directory) fetchDigest(eng *engine, node, addr, version string) {
	e, err := eng.request(addr, &envelope{Kind: kindDigest, From: d.s.node}, 5*time.Second)
	d.mu.Lock()
	defer d.mu.Unlock()
	n := d.nodes[node]
	if n == nil {
		return
	}
	n.fetching = false
	if err != nil {
		return
	}
	n.Runs, n.Digest = e.Runs, version
	n.reindex()
	d.dirty = true
}

// checkDuplicate: another live member with this node's name. The kernel
// started later leaves — by kernel start, not engine start: a kernel
// that renewed its member id is no younger for it (a kernel restarted a
// moment ago may still be listed under its old id: that one does not
// answer, so it is no duplicate). Each member id is checked once, off the
// loop.
func (d *directory) checkDuplicate(eng *engine, addr, id string) {
	d.mu.Lock()
	if d.checked == nil {
		d.checked = map[string]bool{}
	}
	seen := d.checked[id]
	d.checked[id] = true
	d.mu.Unlock()
	if seen {
		return
	}
	go func() {
		e, err := eng.request(addr, &envelope{Kind: kindPing, From: d.s.node}, 2*pingTimeout)
		if err != nil {
			d.mu.Lock()
			delete(d.checked, id) // it may answer later
			d.mu.Unlock()
			return
		}
		if e.Info == nil || e.Info.MemberID == eng.id {
			return
		}
		if e.Info.StartedAt.Before(d.s.k.Started()) {
			d.s.duplicate(fmt.Errorf("%w: node %q is already a member (member %s at %s, started %s); give this kernel another [cluster] node", errDuplicate, d.s.node, id, addr, e.Info.StartedAt.Format(time.RFC3339)))
		}
	}()
}

// left records a member's goodbye.
func (d *directory) left(node string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if n := d.nodes[node]; n != nil {
		n.setStatus(statusLeft)
		n.leftMember = n.MemberID
		d.dirty = true
	}
}

// goodbye tells every member this node leaves.
func (d *directory) goodbye(eng *engine) {
	d.mu.Lock()
	var addrs []string
	for _, n := range d.nodes {
		if n.Status == statusUp {
			addrs = append(addrs, n.Address)
		}
	}
	d.mu.Unlock()
	var wg sync.WaitGroup
	for _, a := range addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			eng.request(a, &envelope{Kind: kindBye, From: d.s.node}, byeTimeout)
		}()
	}
	wg.Wait()
}

// view lists every node, this one first.
func (d *directory) view(self NodeView) []NodeView {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := []NodeView{self}
	names := make([]string, 0, len(d.nodes))
	for n := range d.nodes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		out = append(out, d.nodes[n].NodeView)
	}
	return out
}

// member is a node's state for a request to it.
func (d *directory) member(node string) (NodeView, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	n, ok := d.nodes[node]
	if !ok {
		return NodeView{}, false
	}
	return n.NodeView, true
}

// lastKnown is the last digest entry of a run on node.
func (d *directory) lastKnown(node, run string) (actors.RunDigest, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := d.nodes[node]
	if n == nil {
		return actors.RunDigest{}, false
	}
	i, ok := n.index[run]
	if !ok {
		return actors.RunDigest{}, false
	}
	return n.Runs[i], true
}

// noteRun records a run on node before its next digest says so.
func (d *directory) noteRun(node string, r actors.RunDigest) {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := d.nodes[node]
	if n == nil {
		return
	}
	if n.index == nil {
		n.index = map[string]int{}
	}
	if i, ok := n.index[r.Run]; ok {
		n.Runs[i] = r
		return
	}
	n.Runs = append(n.Runs, r)
	n.index[r.Run] = len(n.Runs) - 1
	d.dirty = true
}

// locate lists the nodes whose digest has run: the members that are not
// known to have left, else those that left (their kernel stopped on
// purpose; the run may still run there, and a request to it is refused
// as to a node that is not up — not handled here as a run that does not
// exist).
func (d *directory) locate(run string) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out, left []string
	for name, n := range d.nodes {
		if _, ok := n.index[run]; !ok {
			continue
		}
		if n.Status == statusLeft {
			left = append(left, name)
		} else {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		return left
	}
	return out
}

// place picks the node for a new run (this one included): the fewest
// live runs, then the lowest load average. Placements close together (a
// batch) are counted against the live runs each node had when the batch
// began, so a batch spreads evenly whatever the order its spawns finish
// in.
func (d *directory) place(selfLive int, selfLoad float64) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := time.Now()
	if now.Sub(d.lastPlace) > placeWindow {
		d.base = map[string]int{d.s.node: selfLive}
		d.assigned = map[string]int{}
		for name, n := range d.nodes {
			d.base[name] = n.LiveRuns
		}
	}
	d.lastPlace = now
	best, bestLive, bestLoad := "", 0, 0.0
	consider := func(name string, load float64) {
		live := d.base[name] + d.assigned[name]
		if best == "" || live < bestLive || live == bestLive && load < bestLoad {
			best, bestLive, bestLoad = name, live, load
		}
	}
	consider(d.s.node, selfLoad)
	for name, n := range d.nodes {
		if n.Status == statusUp && time.Since(n.lastPong) < 5*time.Second {
			consider(name, n.Load)
		}
	}
	d.assigned[best]++
	return best
}

// placeWindow is how long after a placement the next one still counts
// as the same batch.
const placeWindow = 2 * time.Second
