package verbs

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pi-actors/pi-actors/recipes/template"
	"github.com/pi-actors/pi-actors/runs"
)

// Ps lists runs as a table: live ones, or with all every run, newest
// first.
type Ps struct {
	All     Bool     `json:"all,omitempty" jsonschema:"list ended runs too, not only live ones (--all)"`
	Status  string   `json:"status,omitempty" jsonschema:"only runs with this status: active, terminal, running, backoff, suspended, done, failed, cancelled, killed, exited, archived"`
	Lines   LooseInt `json:"lines,omitzero" jsonschema:"at most this many rows (default 100)"`
	Cluster Bool     `json:"cluster,omitempty" jsonschema:"clustered kernels: every node's runs, with a NODE column (--cluster)"`
}

// defaultPsLines bounds the table when lines is not given.
const defaultPsLines = 100

// Validate checks the filter and the row count.
func (p *Ps) Validate() error {
	_, _, err := p.query()
	return err
}

func (p *Ps) query() (filter string, lines int, err error) {
	filter, lines = strings.TrimSpace(p.Status), defaultPsLines
	if !runs.ValidFilter(filter) {
		return "", 0, Usagef("status filter %q is not one of: %s", filter, StatusFilters)
	}
	if filter == "" || filter == "all" {
		filter = "active"
		if p.All {
			filter = "all"
		}
	}
	if v := p.Lines.V; p.Lines.Set && v != nil && template.Stringify(v) != "" {
		n, err := strconv.Atoi(strings.TrimSpace(template.Stringify(v)))
		if err != nil || n < 1 {
			return "", 0, Usagef("lines must be a positive integer (got %s)", template.CompactJSON(v))
		}
		lines = n
	}
	return filter, lines, nil
}

// PsResult is the listing: the rows shown and how many more matched.
type PsResult struct {
	Session string   `json:"session"`
	Filter  string   `json:"status_filter"`
	Count   int      `json:"count"`
	More    int      `json:"more,omitempty"`
	Runs    []RunRow `json:"runs"`
	// Unreachable lists the nodes ps --cluster could not ask (their runs
	// are not in the table), with why.
	Unreachable map[string]string `json:"unreachable,omitempty"`
}

func init() {
	ps := &Spec{
		Name:    "ps",
		Summary: "a table of runs: id, status, elapsed, restarts, CPU, RSS, recipe or command",
		Flags:   map[string]string{"--all": "all", "-a": "all", "--lines=": "lines", "--status=": "status", "--cluster": "cluster"},
		Usage: `pi-actors ps [--all] [--status=S] [--lines=N] [--cluster] [--json]
pi-actors ls …                (the same)

A table of live runs (with --all ended ones too, newest first; child
runs — a workflow's nodes, runs a run spawned — indented under their
parent): ID,
STATUS, ELAPSED, RESTARTS, CPU (average since the run started, summed
over its process tree; 100% is one core), RSS, and the recipe or command;
READY (ready, not ready or timed out, and for how long) when a listed
run has a readiness probe.
The table fits the terminal; status words are coloured on a terminal
(NO_COLOR or --no-color turn that off). Runs of your session
($PI_ACTORS_SESSION or session=<id>) when you have one, of every session
otherwise (session=all too). At most lines rows (default 100).
--cluster (clustered kernels): every node's runs, asked in parallel,
with a NODE column; a node that cannot be reached is named below the
table.`,
		New: func() Request { return new(Ps) },
		Run: runPs,
	}
	Register(ps)
	ls := *ps
	ls.Name, ls.Summary = "ls", "the same as ps"
	Register(&ls)
}

func runPs(ctx context.Context, env *Env, req Request) (*Outcome, error) {
	if p := req.(*Ps); bool(p.Cluster) && !env.Routed {
		return psCluster(ctx, env, p)
	}
	filter, lines, err := req.(*Ps).query()
	if err != nil {
		return nil, err
	}
	list, err := env.runIndex().List(filter)
	if err != nil {
		return nil, err
	}
	session := strings.TrimSpace(env.Session)
	if session == "" {
		session = "all"
	}
	res := &PsResult{Session: session, Filter: filter, Runs: []RunRow{}}
	// The page: the newest lines runs, each ended one read whole (the
	// index holds neither its parent nor when it started), then each
	// run's child runs put under it.
	page := make([]*runs.Info, 0, min(len(list), lines))
	for _, in := range treeOrder(orderRuns(list)) {
		if session != "all" && in.Meta.OwnerID != session {
			continue
		}
		res.Count++
		if len(page) == lines {
			res.More++
			continue
		}
		if !in.Live() && in.Archived == nil {
			// Listed from the index alone: read the rest of it.
			if full, err := runs.Load(in.Dir); err == nil {
				in = full
			}
		}
		page = append(page, in)
	}
	now := time.Now()
	for _, in := range treeOrder(page) {
		row := RowOf(in, now, 0, false)
		if in.Live() && in.Meta.Pid > 0 {
			u := runs.TreeUsage(in.Meta.Pid)
			row.CPUPercent, row.RSSBytes = u.CPUPercent, u.RSSBytes
		}
		res.Runs = append(res.Runs, row)
	}
	return &Outcome{Text: psTable(res, now, env.Width), Result: res}, nil
}

// psColumn is one column of the table; the last one (the recipe or
// command) takes the width that is left.
type psColumn struct {
	head  string
	cell  func(r *RunRow) string
	right bool
	// drop is the order columns go in when the terminal is narrow (0:
	// never).
	drop int
}

func psColumns(now time.Time) []psColumn {
	live := func(r *RunRow, s string) string {
		if !r.Live() {
			return "-"
		}
		return s
	}
	return []psColumn{
		{head: "NODE", cell: func(r *RunRow) string { return r.Node }},
		{head: "ID", cell: func(r *RunRow) string { return r.Run }},
		{head: "STATUS", cell: func(r *RunRow) string { return r.Status }},
		{head: "ELAPSED", right: true, drop: 4, cell: func(r *RunRow) string { return ShortDuration(r.Elapsed(now)) }},
		{head: "RESTARTS", right: true, drop: 1, cell: func(r *RunRow) string { return strconv.Itoa(r.Restarts) }},
		{head: "CPU", right: true, drop: 3, cell: func(r *RunRow) string { return live(r, fmt.Sprintf("%.1f%%", r.CPUPercent)) }},
		{head: "RSS", right: true, drop: 2, cell: func(r *RunRow) string { return live(r, formatBytes(r.RSSBytes)) }},
		{head: "RECIPE/COMMAND", cell: func(r *RunRow) string { return r.What() }},
	}
}

// psWhatMax bounds the recipe/command cell when there is no terminal.
const psWhatMax = 60

// psTable renders the rows as a table that fits width (0: no terminal).
func psTable(res *PsResult, now time.Time, width int) string {
	if len(res.Runs) == 0 {
		what := "live runs"
		if res.Filter != "active" {
			what = "runs (status " + res.Filter + ")"
		}
		return fmt.Sprintf("(no %s; pi-actors ps --all lists ended runs too)", what)
	}
	cols := withReadyColumn(psColumns(now), res.Runs, now)
	if res.Runs[0].Node == "" {
		cols = cols[1:] // NODE: ps --cluster only
	}
	cells := make([][]string, len(res.Runs))
	widths := make([]int, len(cols))
	for i, c := range cols {
		widths[i] = len(c.head)
	}
	ids := treeIDs(res.Runs) // child runs indented under their parent
	for j := range res.Runs {
		cells[j] = make([]string, len(cols))
		for i, c := range cols {
			cells[j][i] = c.cell(&res.Runs[j])
			if c.head == "ID" {
				cells[j][i] = ids[j]
			}
			widths[i] = max(widths[i], runeLen(cells[j][i]))
		}
	}
	last := len(cols) - 1
	keep := fitColumns(cols, widths, width)
	whatMax := psWhatMax
	if width > 0 {
		used := 0
		for i := range last {
			if keep[i] {
				used += widths[i] + 2
			}
		}
		whatMax = max(width-used, len(cols[last].head))
	}
	widths[last] = min(widths[last], whatMax)
	var b strings.Builder
	row := func(vals []string) {
		var line strings.Builder
		for i, v := range vals {
			if !keep[i] {
				continue
			}
			if i == last {
				line.WriteString(cutRunes(v, widths[i]))
				continue
			}
			pad := strings.Repeat(" ", widths[i]-runeLen(v))
			if cols[i].right {
				line.WriteString(pad + v + "  ")
			} else {
				line.WriteString(v + pad + "  ")
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	heads := make([]string, len(cols))
	for i, c := range cols {
		heads[i] = c.head
	}
	row(heads)
	for _, c := range cells {
		row(c)
	}
	if res.More > 0 {
		fmt.Fprintf(&b, "(+%d more; --lines=%d lists them all, --json gives the rows shown)\n", res.More, res.Count)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// fitColumns drops columns, in their drop order, until the fixed ones
// leave the last column room for its heading (width 0 keeps every one).
func fitColumns(cols []psColumn, widths []int, width int) []bool {
	keep := make([]bool, len(cols))
	for i := range keep {
		keep[i] = true
	}
	if width <= 0 {
		return keep
	}
	last := len(cols) - 1
	need := func() int {
		n := len(cols[last].head)
		for i := range last {
			if keep[i] {
				n += widths[i] + 2
			}
		}
		return n
	}
	for order := 1; need() > width; order++ {
		dropped := false
		for i, c := range cols {
			if c.drop == order {
				keep[i], dropped = false, true
			}
		}
		if !dropped {
			break
		}
	}
	return keep
}

func runeLen(s string) int { return len([]rune(s)) }

// cutRunes cuts s to n runes, the last one … when cut.
func cutRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n || n < 1 {
		return s
	}
	return string(r[:n-1]) + "…"
}

// ShortDuration writes a duration in at most two units: 42s, 5m03s,
// 2h07m, 3d04h.
func ShortDuration(d time.Duration) string {
	s := int64(d / time.Second)
	switch {
	case d <= 0:
		return "0s"
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	case s < 86400:
		return fmt.Sprintf("%dh%02dm", s/3600, s%3600/60)
	}
	return fmt.Sprintf("%dd%02dh", s/86400, s%86400/3600)
}
