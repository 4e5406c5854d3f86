package verbs

import (
	"strings"
	"time"

	"github.com/pi-actors/pi-actors/runs"
)

// RunRow is one run as listings show it (ps, the kernel's events stream,
// top): who it is, its status, what it runs, for how long, and what it
// costs.
type RunRow struct {
	Run string `json:"run"`
	// Node is the node that supervises the run (ps --cluster).
	Node   string `json:"node,omitempty"`
	Status string `json:"status"`
	// Reason says why an ended run ended (control.kill, start_limit, …).
	Reason string `json:"reason,omitempty"`
	Owner  string `json:"owner,omitempty"`
	// Parent is the run whose leaf spawned this one.
	Parent  string `json:"parent,omitempty"`
	Recipe  string `json:"recipe,omitempty"`
	Tool    string `json:"tool,omitempty"`
	Command string `json:"command,omitempty"`
	Pid     int    `json:"pid,omitempty"`
	// CreatedAt is when the run started; ResumedAt when a restart of the
	// ended run (or a workflow's resume) started it again; EndedAt when it
	// ended (zero while it is live).
	CreatedAt time.Time `json:"created_at,omitzero"`
	ResumedAt time.Time `json:"resumed_at,omitzero"`
	EndedAt   time.Time `json:"ended_at,omitzero"`
	// ElapsedMS is how long it has run (until it ended), at listing time.
	ElapsedMS int64 `json:"elapsed_ms"`
	Restarts  int   `json:"restarts"`
	// CPUPercent and RSSBytes are the run's process tree (100 is one
	// core); zero for an ended run.
	CPUPercent float64 `json:"cpu_percent"`
	RSSBytes   uint64  `json:"rss_bytes"`
	// LastLine is the last line the run printed, on LastStream.
	LastLine   string `json:"last_line,omitempty"`
	LastStream string `json:"last_stream,omitempty"`
	// Stalled: running, but silent for runs.stalled_after_s.
	Stalled bool `json:"stalled,omitempty"`
	// ReadyState is a live run's readiness (waiting, ready, timed_out)
	// and ReadySince when it last changed; "" for a run without a
	// readiness probe.
	ReadyState string    `json:"ready_state,omitempty"`
	ReadySince time.Time `json:"ready_since,omitzero"`
	StateDir   string    `json:"state_dir"`
}

// Live reports whether the row's run is live.
func (r *RunRow) Live() bool { return !runs.Terminal(r.Status) }

// What is the recipe, else the tool, else the command the run runs.
func (r *RunRow) What() string {
	switch {
	case r.Recipe != "":
		return r.Recipe
	case r.Tool != "":
		return "tool:" + r.Tool
	}
	return r.Command
}

// Elapsed is how long the run has run (until it ended).
func (r *RunRow) Elapsed(now time.Time) time.Duration {
	if r.CreatedAt.IsZero() {
		return 0
	}
	end := now
	if !r.EndedAt.IsZero() {
		end = r.EndedAt
	} else if !r.Live() {
		return 0
	}
	start := r.CreatedAt
	if r.ResumedAt.After(start) {
		start = r.ResumedAt
	}
	return max(0, end.Sub(start))
}

// RowOf describes a loaded run. The last output line and the stalled
// marker are read when output is set (a few small reads); CPU and RSS are
// left for the caller to measure.
func RowOf(in *runs.Info, now time.Time, stalledAfter time.Duration, output bool) RunRow {
	m := in.Meta
	r := RunRow{Run: m.Run, Status: in.Status, Owner: m.OwnerID, Parent: m.Parent, Recipe: m.Recipe, Tool: m.Tool,
		CreatedAt: m.CreatedAt, ResumedAt: m.ResumedAt, StateDir: string(in.Dir)}
	if in.Live() {
		r.Pid = m.Pid
	} else {
		r.Reason = in.Reason
		r.EndedAt = runEnd(in)
	}
	if m.Recipe == "" && m.Template != nil {
		r.Command = commandOf(m.Template)
	}
	if m.Workflow != nil && m.Recipe == "" {
		r.Command = workflowCommand(m.Workflow)
	}
	if n := m.WorkflowNode; n != nil && n.Command != "" && m.Recipe == "" {
		r.Command = n.Command // as the workflow wrote it
	}
	if p := in.Progress; p != nil {
		r.Restarts = p.Restarts
	}
	rowHealth(in, &r)
	if res := in.Result; res != nil {
		r.Restarts = max(r.Restarts, res.Restarts)
	}
	r.ElapsedMS = r.Elapsed(now).Milliseconds()
	if output {
		d := in.FilesDir()
		r.LastStream, r.LastLine = LastLine(d)
		r.LastLine = oneLine(r.LastLine, previewChars)
		if in.Status == runs.StatusRunning && stalledAfter > 0 {
			since := runs.LastActivity(d)
			if since.IsZero() {
				since = m.StartedAt()
			}
			r.Stalled = !since.IsZero() && now.Sub(since) > stalledAfter
		}
	}
	return r
}

// commandOf is a run template's command line: the string itself, or the
// graph's first command (… when more steps follow), or the graph as
// compact JSON, cut short.
func commandOf(tmpl any) string {
	if s := firstCommand(tmpl, 0); s != "" {
		return oneLine(s, previewChars)
	}
	return oneLine(compactJSON(tmpl), previewChars) // not HTML-escaped: > stays >
}

// firstCommand is the first command string of a template graph (a string,
// a sequence's or parallel's first item, a node's template), "" when
// there is none within a few levels.
func firstCommand(v any, depth int) string {
	if depth > 8 {
		return ""
	}
	switch t := v.(type) {
	case string:
		return t
	case []any:
		if len(t) == 1 {
			return firstCommand(t[0], depth+1)
		}
		if first := firstCommand(t[0], depth+1); len(t) > 1 && first != "" {
			return first + " …" // more steps follow
		}
	case map[string]any:
		return firstCommand(t["template"], depth+1)
	}
	return ""
}

// oneLine writes whitespace runs as one space and cuts to max runes (the
// last one …): a cell of a table.
func oneLine(s string, max int) string {
	return cutRunes(strings.Join(strings.Fields(s), " "), max)
}
