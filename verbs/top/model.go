package top

import (
	"cmp"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/pi-actors/pi-actors/verbs"
)

// mode is what fills the screen.
type mode int

const (
	modeList mode = iota // the run tree (with the detail or follow-ups pane)
	modeLogs             // the selected run's log, full screen, following
	modeHelp             // the keys
)

// pane is what the lower part of the list screen shows.
type pane int

const (
	paneNone pane = iota
	paneDetail
	paneFollowups
)

// item is one line of the run tree.
type item struct {
	row    *verbs.RunRow
	prefix string // tree drawing before the id
}

// confirm is a pending kill or restart, waiting for y.
type confirm struct {
	verb string // kill or restart
	run  string // the row's address
}

// Model is top's state. Only Bubble Tea's event loop touches it.
type Model struct {
	env   *verbs.Env
	now   func() time.Time
	width int
	high  int
	style styles

	rows   map[string]verbs.RunRow // this node's runs (the stream's), by state dir
	items  []item                  // the visible tree, in order
	sel    int                     // selected item
	selKey string                  // the selected run's rowKey (kept across rebuilds)
	offset int                     // first item shown
	cl     clusterScope            // the cluster scope and the other nodes' runs

	mode      mode
	pane      pane
	mine      bool // scope: only the session's runs
	filter    string
	filtering bool // typing the filter
	ask       *confirm
	note      string // the last action's outcome, or an error

	kernel    *verbs.KernelFigures
	connected bool
	streamErr string

	detail    *detail
	logs      *logView
	followups []verbs.QueuedFollowup
	followErr string
}

// New returns a model for env's agent root and session, laid out at
// width×height until the terminal says otherwise.
func New(env *verbs.Env, width, height int, colour bool) *Model {
	return &Model{env: env, now: time.Now, width: width, high: height, style: newStyles(colour),
		rows: map[string]verbs.RunRow{}, mine: env.Session != "", cl: newClusterScope(env)}
}

// Init starts the clock that refreshes elapsed times and open panes,
// and in the cluster scope (--cluster) asks the other nodes.
func (m *Model) Init() tea.Cmd {
	if m.cl.on {
		return tea.Batch(tick(), pollCluster(m.env, m.cl.self, m.cl.gen))
	}
	return tick()
}

// Messages the model receives besides keys and sizes.
type (
	frameMsg  struct{ f *verbs.EventsFrame }
	streamMsg struct {
		connected bool
		err       error
	}
	tickMsg   time.Time
	detailMsg struct {
		dir string // the row's rowKey
		d   *detail
	}
	logsMsg struct {
		dir string // the row's rowKey
		l   *logView
	}
	followupsMsg struct {
		list []verbs.QueuedFollowup
		err  error
	}
	actionMsg struct{ note string }
)

// tickEvery is how often elapsed times, the open pane and the log view
// refresh.
const tickEvery = 500 * time.Millisecond

func tick() tea.Cmd {
	return tea.Tick(tickEvery, func(t time.Time) tea.Msg { return tickMsg(t) })
}

// Update applies one message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.high = msg.Width, msg.Height
		m.scroll()
	case frameMsg:
		m.apply(msg.f)
		if m.pane == paneDetail && m.mode == modeList && frameHas(msg.f, m.selKey) {
			return m, m.refreshPane(false)
		}
	case streamMsg:
		m.connected = msg.connected
		m.streamErr = ""
		if msg.err != nil {
			m.streamErr = msg.err.Error()
		}
	case tickMsg:
		return m, tea.Batch(tick(), m.refreshPane(true))
	case detailMsg:
		if r := m.selected(); r != nil && rowKey(r) == msg.dir {
			m.detail = msg.d
		}
	case logsMsg:
		if m.logs != nil && m.logs.dir == msg.dir {
			msg.l.stream, msg.l.run = m.logs.stream, m.logs.run
			m.logs = msg.l
		}
	case followupsMsg:
		m.followups, m.followErr = msg.list, ""
		if msg.err != nil {
			m.followErr = msg.err.Error()
		}
	case actionMsg:
		m.note = msg.note
		return m, m.pollNow()
	case clusterMsg:
		return m, m.applyCluster(msg)
	case clusterTickMsg:
		return m, m.clusterTick(msg)
	case tea.KeyPressMsg:
		return m.key(msg)
	}
	return m, nil
}

// Apply merges a frame of the runs stream (what the program does with
// each frame; benchmarks call it directly).
func (m *Model) Apply(f *verbs.EventsFrame) { m.apply(f) }

// apply merges a frame of the runs stream.
func (m *Model) apply(f *verbs.EventsFrame) {
	m.connected = true
	if f.Snapshot {
		clear(m.rows)
	}
	for _, r := range f.Runs {
		m.rows[r.StateDir] = r
	}
	for _, d := range f.Gone {
		delete(m.rows, d)
	}
	if f.Kernel != nil {
		m.kernel = f.Kernel
	}
	m.rebuild()
}

// frameHas reports whether a frame changes the run in dir (a stream
// row's rowKey is its state dir).
func frameHas(f *verbs.EventsFrame, dir string) bool {
	for _, r := range f.Runs {
		if r.StateDir == dir {
			return true
		}
	}
	return false
}

// visible reports whether a row passes the scope and the filter.
func (m *Model) visible(r *verbs.RunRow) bool {
	if m.mine && m.env.Session != "" && r.Owner != m.env.Session {
		return false
	}
	if m.filter == "" {
		return true
	}
	f := strings.ToLower(m.filter)
	for _, s := range []string{r.Run, r.Status, r.Recipe, r.Tool, r.Command, statusWord(r)} {
		if strings.Contains(strings.ToLower(s), f) {
			return true
		}
	}
	return m.cl.on && strings.Contains(strings.ToLower(m.nodeOf(r)), f)
}

// rowKey is a row's identity: its state dir, with its node for another
// node's run (the same path can exist on two machines).
func rowKey(r *verbs.RunRow) string {
	if r.Node == "" {
		return r.StateDir
	}
	return r.Node + "\x00" + r.StateDir
}

// address names a row's run for the verbs: <id>, or <id>@<node> for
// another node's run (the verbs route it there).
func address(r *verbs.RunRow) string {
	if r.Node == "" {
		return r.Run
	}
	return r.Run + "@" + r.Node
}

// before orders runs: live ones first, oldest first (a stable list);
// then ended ones, the last to end first.
func before(a, b *verbs.RunRow) int {
	if a.Live() != b.Live() {
		if a.Live() {
			return -1
		}
		return 1
	}
	if a.Live() {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.Run, b.Run))
	}
	return cmp.Or(b.EndedAt.Compare(a.EndedAt), strings.Compare(a.Run, b.Run))
}

// rebuild lays the visible runs out as a tree (a filter shows matches
// flat), keeping the selection on the same run.
func (m *Model) rebuild() {
	var shown []*verbs.RunRow
	for d := range m.rows {
		r := m.rows[d]
		if m.visible(&r) {
			shown = append(shown, &r)
		}
	}
	if m.cl.on {
		for i := range m.cl.rows {
			if r := &m.cl.rows[i]; m.visible(r) {
				shown = append(shown, r)
			}
		}
	}
	slices.SortFunc(shown, before)
	m.items = m.items[:0]
	if m.filter != "" {
		for _, r := range shown {
			m.items = append(m.items, item{row: r})
		}
	} else {
		m.items = tree(shown, m.items)
	}
	// The same run stays selected; when it is gone, the same line.
	m.sel = max(0, min(m.sel, len(m.items)-1))
	for i, it := range m.items {
		if rowKey(it.row) == m.selKey {
			m.sel = i
			break
		}
	}
	if len(m.items) > 0 {
		m.selKey = rowKey(m.items[m.sel].row)
	}
	m.scroll()
}

// treeKey names a run in the tree: its id, with its node for another
// node's run (ids are unique per node only; an id has no NUL). This
// node's runs cost no allocation: outside the cluster scope the tree is
// what it always was.
func treeKey(node, run string) string {
	if node == "" {
		return run
	}
	return node + "\x00" + run
}

// tree orders rows parent first, each parent's children under it. A
// parent is looked for on the child's node first, then as the one run
// with that id on another node (a run spawned across nodes).
func tree(rows []*verbs.RunRow, out []item) []item {
	ids := make(map[string]bool, len(rows))
	var where map[string][]string // id → the nodes that have it, when rows span nodes
	for _, r := range rows {
		ids[treeKey(r.Node, r.Run)] = true
		if r.Node != "" && where == nil {
			where = map[string][]string{}
		}
	}
	if where != nil {
		for _, r := range rows {
			where[r.Run] = append(where[r.Run], r.Node)
		}
	}
	parentOf := func(r *verbs.RunRow) (string, bool) {
		if r.Parent == "" || r.Parent == r.Run {
			return "", false
		}
		if k := treeKey(r.Node, r.Parent); ids[k] {
			return k, true
		}
		if nodes := where[r.Parent]; len(nodes) == 1 {
			return treeKey(nodes[0], r.Parent), true
		}
		return "", false
	}
	children := map[string][]*verbs.RunRow{}
	var roots []*verbs.RunRow
	for _, r := range rows {
		if k, ok := parentOf(r); ok {
			children[k] = append(children[k], r)
		} else {
			roots = append(roots, r)
		}
	}
	seen := map[string]bool{}
	var walk func(r *verbs.RunRow, indent string, last, root bool)
	walk = func(r *verbs.RunRow, indent string, last, root bool) {
		prefix, next := "", ""
		if !root {
			prefix, next = indent+"├─", indent+"│ "
			if last {
				prefix, next = indent+"└─", indent+"  "
			}
		}
		out = append(out, item{row: r, prefix: prefix})
		k := treeKey(r.Node, r.Run)
		if seen[k] {
			return // a cycle of parents: each run once
		}
		seen[k] = true
		kids := children[k]
		for i, c := range kids {
			walk(c, next, i == len(kids)-1, false)
		}
	}
	for _, r := range roots {
		walk(r, "", false, true)
	}
	return out
}

// selected is the selected run's row, or nil.
func (m *Model) selected() *verbs.RunRow {
	if m.sel < 0 || m.sel >= len(m.items) {
		return nil
	}
	return m.items[m.sel].row
}

// move changes the selection by delta items.
func (m *Model) move(delta int) tea.Cmd {
	if len(m.items) == 0 {
		return nil
	}
	old := m.sel
	m.sel = max(0, min(len(m.items)-1, m.sel+delta))
	m.selKey = rowKey(m.items[m.sel].row)
	m.scroll()
	if m.sel != old {
		m.detail = nil
		return m.refreshPane(false)
	}
	return nil
}

// scroll keeps the selection within the shown lines.
func (m *Model) scroll() {
	n := m.listLines()
	if m.sel < m.offset {
		m.offset = m.sel
	}
	if m.sel >= m.offset+n {
		m.offset = m.sel - n + 1
	}
	m.offset = max(0, min(m.offset, len(m.items)-n))
}
