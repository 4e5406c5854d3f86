package top

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/pi-actors/pi-actors/verbs"
)

// clusterScope is the cluster scope: every node's runs, with a NODE
// column. This node's rows keep coming from the runs stream; the other
// nodes' are polled (ps through each node's kernel, verbs.ClusterPs)
// every clusterEvery while the scope is on, and never otherwise.
type clusterScope struct {
	enabled bool   // the kernel is clustered ([cluster] in pi-actors.toml)
	on      bool   // the scope is shown
	name    string // the cluster's name
	self    string // this node's name
	gen     int    // the current poll chain: answers of older ones are dropped
	polled  bool   // an answer came since the scope was turned on

	rows        []verbs.RunRow    // the other nodes' runs, Node set
	up, total   int               // members up, members known
	unreachable map[string]string // node → why its runs are not listed
	more        int               // rows the other nodes did not send (past clusterLines)
	err         string            // the last poll's error
}

// How often, and how many rows per node, the cluster scope asks the
// other nodes for.
const (
	clusterEvery = 2 * time.Second
	clusterLines = 1000
)

// Messages of the cluster scope.
type (
	clusterMsg struct {
		gen   int
		res   *verbs.PsResult
		nodes *verbs.ClusterNodes
		err   error
	}
	clusterTickMsg struct{ gen int }
)

// newClusterScope reads the cluster's name and this node's from env's
// config.
func newClusterScope(env *verbs.Env) clusterScope {
	cl := env.Config.Cluster
	if !cl.Enabled() {
		return clusterScope{}
	}
	return clusterScope{enabled: true, name: cl.Name, self: cl.NodeName()}
}

// notClustered is what the c key and --cluster say without a cluster.
const notClustered = "cluster scope: not clustered (pi-actors.toml has no [cluster]; docs/cluster.md)"

// errNoCluster is --cluster without a cluster.
var errNoCluster = &verbs.Error{Exit: verbs.ExitConfig, Code: "not_clustered",
	Message: "top --cluster needs a cluster: pi-actors.toml has no [cluster] section", Hint: "docs/cluster.md"}

// StartInCluster turns the cluster scope on before the program runs
// (--cluster); Init asks the other nodes.
func (m *Model) StartInCluster() error {
	if !m.cl.enabled {
		return errNoCluster
	}
	m.cl.on = true
	m.cl.gen++
	return nil
}

// pollOnce asks the other nodes once and applies the answer (--once).
func (m *Model) pollOnce() error {
	msg := pollCluster(m.env, m.cl.self, m.cl.gen)().(clusterMsg)
	m.applyCluster(msg)
	return msg.err
}

// toggleCluster switches the cluster scope on or off; on, it asks the
// other nodes at once.
func (m *Model) toggleCluster() tea.Cmd {
	if !m.cl.enabled {
		m.note = notClustered
		return nil
	}
	m.cl.on = !m.cl.on
	m.cl.gen++
	m.note = ""
	if !m.cl.on {
		was := m.selKey
		m.cl.rows, m.cl.polled, m.cl.err, m.cl.unreachable = nil, false, "", nil
		m.rebuild()
		if m.selKey != was {
			m.detail = nil // another node's run was selected: its pane goes
			return m.refreshPane(false)
		}
		return nil
	}
	m.rebuild()
	return pollCluster(m.env, m.cl.self, m.cl.gen)
}

// pollCluster asks every other node for its runs: every session's,
// ended ones too (the scopes and the filter apply here, as to the
// stream's rows).
func pollCluster(env *verbs.Env, self string, gen int) tea.Cmd {
	return func() tea.Msg {
		e := *env
		e.Session = ""
		p := &verbs.Ps{All: true, Lines: verbs.LooseInt{Value: verbs.Value{V: clusterLines, Set: true}}}
		res, nodes, err := verbs.ClusterPs(context.Background(), &e, p, self)
		return clusterMsg{gen: gen, res: res, nodes: nodes, err: err}
	}
}

// applyCluster takes a poll's answer and schedules the next poll.
func (m *Model) applyCluster(msg clusterMsg) tea.Cmd {
	if msg.gen != m.cl.gen || !m.cl.on {
		return nil
	}
	next := tea.Tick(clusterEvery, func(time.Time) tea.Msg { return clusterTickMsg{gen: msg.gen} })
	m.cl.polled = true
	if msg.err != nil {
		// The other nodes' rows stay as last seen; the header says why.
		m.cl.err = verbs.Classify(msg.err).Message
		return next
	}
	m.cl.err = ""
	m.cl.rows, m.cl.unreachable, m.cl.more = msg.res.Runs, msg.res.Unreachable, msg.res.More
	if msg.nodes != nil {
		m.cl.name, m.cl.self = orElse(msg.nodes.Cluster, m.cl.name), orElse(msg.nodes.Node, m.cl.self)
		m.cl.total, m.cl.up = len(msg.nodes.Nodes), 0
		for _, n := range msg.nodes.Nodes {
			if n.Status == "up" {
				m.cl.up++
			}
		}
	}
	m.rebuild()
	return next
}

// clusterTick starts the next poll of the current chain.
func (m *Model) clusterTick(msg clusterTickMsg) tea.Cmd {
	if msg.gen != m.cl.gen || !m.cl.on {
		return nil
	}
	return pollCluster(m.env, m.cl.self, m.cl.gen)
}

// pollNow restarts the poll chain at once (after a kill or restart of
// another node's run, so its new status shows without waiting).
func (m *Model) pollNow() tea.Cmd {
	if !m.cl.on {
		return nil
	}
	m.cl.gen++
	return pollCluster(m.env, m.cl.self, m.cl.gen)
}

// nodeOf is the node a row's run is on: this node for the stream's rows.
func (m *Model) nodeOf(r *verbs.RunRow) string {
	if r.Node == "" {
		return m.cl.self
	}
	return r.Node
}

// clusterHeader is the header's cluster part: the cluster, its members
// up of known, and what is not listed (the nodes that did not answer,
// the rows past clusterLines).
func (m *Model) clusterHeader() string {
	h := "cluster " + m.cl.name
	switch {
	case m.cl.err != "":
		return h + ": " + m.cl.err
	case !m.cl.polled:
		return h + ": asking the nodes…"
	}
	h += fmt.Sprintf(" %d/%d up", m.cl.up, m.cl.total)
	var missing []string
	if len(m.cl.unreachable) > 0 {
		missing = append(missing, "not listed: "+m.unreachableNames())
	}
	if m.cl.more > 0 {
		missing = append(missing, fmt.Sprintf("%d more runs not shown", m.cl.more))
	}
	if len(missing) > 0 {
		h += " (" + strings.Join(missing, "; ") + ")"
	}
	return h
}

// unreachableNames lists the nodes whose runs are not listed, sorted.
func (m *Model) unreachableNames() string {
	names := make([]string, 0, len(m.cl.unreachable))
	for n := range m.cl.unreachable {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// unreachableLine is the footer's note when nodes are not listed: each
// with why.
func (m *Model) unreachableLine() string {
	names := make([]string, 0, len(m.cl.unreachable))
	for n, why := range m.cl.unreachable {
		names = append(names, n+" ("+why+")")
	}
	slices.Sort(names)
	return "not listed: " + strings.Join(names, ", ")
}

func orElse(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
