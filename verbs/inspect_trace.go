package verbs

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/sessions"
	"github.com/pi-actors/pi-actors/verbs/wire"
	"github.com/pi-actors/pi-actors/workflows"
)

// view=trace (seed 002: "why did this happen?") joins a session's causal
// record — every spawn and message the kernel accepted, with its cause
// (sessions.TracePath) — with its runs' own events (restarts, readiness,
// suspends, exits) into one timeline. For run:<id> it is the chain from
// the session's root to the run (each run's parent, the run whose leaf
// spawned it) and everything in the tree below the run; for session:<id>
// the whole session. It reads files only.

// TraceRun is a run of a trace: who spawned it and why.
type TraceRun struct {
	Run       string      `json:"run"`
	Parent    string      `json:"parent,omitempty"`
	Status    string      `json:"status"`
	CreatedAt time.Time   `json:"created_at"`
	Cause     *wire.Cause `json:"cause,omitempty"`
	Depth     int         `json:"depth"` // below the trace's run (0 for it and its chain)
}

// TraceEntry is one event of a trace's timeline.
type TraceEntry struct {
	TS   time.Time `json:"ts"`
	Kind string    `json:"kind"` // spawn, message, restart, backoff, ready, unhealthy, suspend, resume, exit, …
	Run  string    `json:"run,omitempty"`
	ID   string    `json:"id,omitempty"`
	To   string    `json:"to,omitempty"`
	Type string    `json:"type,omitempty"`
	// Direction is sent or received (a message, seen from the trace's
	// runs).
	Direction string      `json:"direction,omitempty"`
	Cause     *wire.Cause `json:"cause,omitempty"`
	Text      string      `json:"text"`
}

// TraceView is view=trace.
type TraceView struct {
	Target  string `json:"target"`
	Session string `json:"session"`
	// Chain is the trace's run and the runs above it, the session's root
	// first (run:<id> only).
	Chain   []TraceRun   `json:"chain,omitempty"`
	Runs    []TraceRun   `json:"runs"`
	Entries []TraceEntry `json:"entries"`
	Count   int          `json:"count"`
	// Truncated counts the oldest entries --json leaves out.
	Truncated int `json:"truncated,omitempty"`
	// Record lists where the full record is: the session's causal record
	// (and its rotated part), and each run's events.jsonl.
	Record []string `json:"record"`
}

// traceJSONMax bounds the entries --json returns (the newest).
const traceJSONMax = 5000

// traceEventLines bounds the events read per run (the newest).
const traceEventLines = 2000

// runTraceView answers run:<id> view=trace.
func runTraceView(env *Env, in *runs.Info, lines int) (*inspectOutput, error) {
	session := in.Meta.OwnerID
	t := newTracer(env.AgentDir, session)
	v := &TraceView{Target: "run:" + in.Meta.Run, Session: session}
	// The chain up: each run's parent, to the session's root.
	for cur, seen := in, map[string]bool{}; cur != nil && !seen[cur.Meta.Run] && len(seen) < 64; {
		seen[cur.Meta.Run] = true
		v.Chain = append(v.Chain, t.traceRun(cur, 0))
		cur = t.load(t.parentOf(cur))
	}
	slices.Reverse(v.Chain)
	// The tree below: every run whose parent chain reaches the run.
	scope := map[string]bool{in.Meta.Run: true}
	v.Runs = append(v.Runs, t.traceRun(in, 0))
	for depth, level := 1, []string{in.Meta.Run}; len(level) > 0 && depth < 64; depth++ {
		var next []string
		for _, r := range t.children(level) {
			if !scope[r] {
				scope[r] = true
				next = append(next, r)
				if c := t.load(r); c != nil {
					v.Runs = append(v.Runs, t.traceRun(c, depth))
				}
			}
		}
		level = next
	}
	chain := map[string]bool{}
	for _, c := range v.Chain {
		chain[c.Run] = true
	}
	v.Entries = t.timeline(scope, chain)
	return t.output(v, lines), nil
}

// sessionTraceView answers session:<id> view=trace.
func sessionTraceView(env *Env, session string, lines int) (*inspectOutput, error) {
	if session == "all" {
		return nil, Usagef("view=trace follows one session: target=session:<id> view=trace (or run:<id>)")
	}
	// A session's trace is its runs' messages and causes: as for its
	// runs' views, another session may not read it (an operator's shell,
	// with no session, may).
	if caller := strings.TrimSpace(env.Session); caller != "" && caller != session {
		return nil, sessionDenied("trace", session, caller)
	}
	t := newTracer(env.AgentDir, session)
	v := &TraceView{Target: "session:" + session, Session: session}
	for _, r := range t.sessionRuns() {
		if in := t.load(r); in != nil {
			v.Runs = append(v.Runs, t.traceRun(in, 0))
		}
	}
	v.Entries = t.timeline(nil, nil)
	if len(v.Runs) == 0 && len(v.Entries) == 0 {
		return nil, &Error{Exit: ExitNoInput, Code: "not_found", Message: fmt.Sprintf("session %s has no causal record and no runs", session),
			Hint: "pi-actors session list"}
	}
	return t.output(v, lines), nil
}

// tracer reads what a trace needs of one session.
type tracer struct {
	agentDir string
	session  string
	items    []sessions.Item
	spawned  map[string]sessions.Item // run → its spawn item
	loaded   map[string]*runs.Info
}

func newTracer(agentDir, session string) *tracer {
	t := &tracer{agentDir: agentDir, session: session, spawned: map[string]sessions.Item{}, loaded: map[string]*runs.Info{}}
	path := sessions.TracePath(agentDir, session)
	for _, p := range []string{path + ".1", path} {
		ls, err := mailbox.Read(p)
		if err != nil {
			continue
		}
		for _, l := range ls {
			var it sessions.Item
			if l.Err != nil || json.Unmarshal(l.Raw, &it) != nil || it.Kind == "" {
				continue // a malformed line is left to whoever reads the file
			}
			t.items = append(t.items, it)
			if it.Kind == sessions.KindSpawn {
				t.spawned[it.Run] = it
			}
		}
	}
	return t
}

// load reads a run (its whole run.json: parent and cause), nil when it
// is gone.
func (t *tracer) load(id string) *runs.Info {
	if id == "" {
		return nil
	}
	if in, ok := t.loaded[id]; ok {
		return in
	}
	var in *runs.Info
	if it, ok := t.spawned[id]; ok && it.StateDir != "" {
		in, _ = runs.Load(runs.Dir(it.StateDir))
	}
	if in == nil {
		if dir, err := runs.Resolve(t.agentDir, id); err == nil {
			in, _ = runs.Load(dir)
		}
	}
	t.loaded[id] = in
	return in
}

// parentOf is the run whose leaf spawned in ("" for a root).
func (t *tracer) parentOf(in *runs.Info) string {
	if in.Meta.Parent != "" {
		return in.Meta.Parent
	}
	if c := in.Meta.Cause; c != nil {
		return c.Run
	}
	return ""
}

// sessionRuns lists the session's runs: the causal record's spawns, then
// the runs index's runs of the session it does not name (runs spawned
// before the record existed), oldest first.
func (t *tracer) sessionRuns() []string {
	var out []string
	seen := map[string]bool{}
	for _, it := range t.items {
		if it.Kind == sessions.KindSpawn && !seen[it.Run] {
			seen[it.Run] = true
			out = append(out, it.Run)
		}
	}
	if list, err := runs.NewIndex(t.agentDir).List("all"); err == nil {
		slices.SortStableFunc(list, func(a, b *runs.Info) int { return a.Meta.CreatedAt.Compare(b.Meta.CreatedAt) })
		for _, in := range list {
			if in.Meta.OwnerID == t.session && !seen[in.Meta.Run] {
				seen[in.Meta.Run] = true
				out = append(out, in.Meta.Run)
			}
		}
	}
	return out
}

// children lists the runs the given runs spawned.
func (t *tracer) children(parents []string) []string {
	want := map[string]bool{}
	for _, p := range parents {
		want[p] = true
	}
	var out []string
	for _, r := range t.sessionRuns() {
		parent := ""
		if it, ok := t.spawned[r]; ok && it.Cause != nil {
			parent = it.Cause.Run
		} else if in := t.load(r); in != nil {
			parent = t.parentOf(in)
		}
		if want[parent] {
			out = append(out, r)
		}
	}
	return out
}

func (t *tracer) traceRun(in *runs.Info, depth int) TraceRun {
	return TraceRun{Run: in.Meta.Run, Parent: t.parentOf(in), Status: in.Status, CreatedAt: in.Meta.CreatedAt, Cause: in.Meta.Cause, Depth: depth}
}

// timeline merges the causal record's items that concern scope (all of
// them when scope is nil) — its runs' spawns, the messages they sent and
// received — and the spawns of the chain above it with the events of
// scope's runs, oldest first.
func (t *tracer) timeline(scope, chain map[string]bool) []TraceEntry {
	in := func(r string) bool { return scope == nil || scope[r] }
	// earlier: an item about r from before r's run was created belongs to
	// an earlier run of that id (spawned again since): a run's trace
	// leaves it out (it listed both runs' spawns and messages). A
	// workflow node's run counts from its workflow's start: its earlier
	// attempts (the same id) are part of the story.
	earlier := func(r string, ts time.Time) bool {
		if scope == nil || r == "" {
			return false
		}
		info := t.load(r)
		if info == nil {
			return false
		}
		since := info.Meta.CreatedAt
		if wn := info.Meta.WorkflowNode; wn != nil {
			if start, err := time.Parse(time.RFC3339Nano, wn.Instance); err == nil {
				since = start
			}
		}
		return ts.Before(since)
	}
	from, until := t.lifetime(scope)
	var out []TraceEntry
	spawnSeen := map[string]bool{}
	for _, it := range t.items {
		switch it.Kind {
		case sessions.KindSpawn:
			if (in(it.Run) || chain[it.Run]) && !earlier(it.Run, it.TS) {
				spawnSeen[it.Run] = true
				out = append(out, TraceEntry{TS: it.TS, Kind: it.Kind, Run: it.Run, ID: it.ID, Cause: it.Cause,
					Text: fmt.Sprintf("spawn run:%s (%s)%s", it.Run, it.Detail, causeText(it.Cause))})
			}
		case sessions.KindMessage:
			sender := messageSender(it)
			target := addressRun(it.To)
			inTarget := in(target) && !earlier(target, it.TS)
			inSender := in(sender) && !earlier(sender, it.TS)
			dir := ""
			switch {
			case scope == nil:
			case inTarget && inSender:
				dir = "within"
			case inTarget:
				dir = "received"
			case inSender:
				dir = "sent"
			default:
				continue
			}
			text := fmt.Sprintf("message %s → %s type=%s", orSession(sender, t.session), it.To, it.Type)
			if it.ID != "" {
				text += " id=" + it.ID
			}
			text += " " + it.Outcome
			out = append(out, TraceEntry{TS: it.TS, Kind: it.Kind, Run: target, ID: it.ID, To: it.To, Type: it.Type, Direction: dir, Cause: it.Cause,
				Text: strings.TrimSpace(text) + causeText(it.Cause)})
		case sessions.KindSuspend, sessions.KindResume:
			if scope != nil && (from.IsZero() || it.TS.Before(from) || !until.IsZero() && it.TS.After(until)) {
				continue // the session's, while none of scope's runs existed
			}
			out = append(out, TraceEntry{TS: it.TS, Kind: it.Kind, ID: it.ID, Cause: it.Cause, Text: fmt.Sprintf("session %s %s: %s", t.session, it.Kind, it.Detail)})
		}
	}
	runsIn := []string{}
	if scope == nil {
		runsIn = t.sessionRuns()
	} else {
		for r := range scope {
			runsIn = append(runsIn, r)
		}
		for r := range chain {
			if !scope[r] {
				runsIn = append(runsIn, r)
			}
		}
	}
	for _, r := range runsIn {
		info := t.load(r)
		if info == nil {
			continue
		}
		if !spawnSeen[r] {
			// Spawned before the causal record existed: run.json says by whom.
			out = append(out, TraceEntry{TS: info.Meta.CreatedAt, Kind: sessions.KindSpawn, Run: r, Cause: info.Meta.Cause,
				Text: fmt.Sprintf("spawn run:%s%s", r, causeText(&wire.Cause{Run: t.parentOf(info), Session: t.session}))})
		}
		switch {
		case in(r):
			out = append(out, runEvents(info, nil)...)
		case info.Meta.Workflow != nil:
			// The workflow of a node run in scope: that node's attempts
			// (why its run ran again; each attempt's run starts its own
			// events afresh).
			out = append(out, runEvents(info, func(ev map[string]any) bool {
				node, _ := ev["node"].(string)
				return ev["event"] == "workflow.node" && in(workflows.ChildRun(r, node))
			})...)
		}
	}
	slices.SortStableFunc(out, func(a, b TraceEntry) int { return a.TS.Compare(b.TS) })
	return out
}

// lifetime is when scope's runs existed: from the first one's creation
// until the last one ended (zero while one is live); zero from when none
// of them can be read.
func (t *tracer) lifetime(scope map[string]bool) (from, until time.Time) {
	live := false
	for r := range scope {
		info := t.load(r)
		if info == nil {
			continue
		}
		if from.IsZero() || info.Meta.CreatedAt.Before(from) {
			from = info.Meta.CreatedAt
		}
		switch {
		case info.Result == nil || info.Live():
			live = true
		case info.Result.CompletedAt.After(until):
			until = info.Result.CompletedAt
		}
	}
	if live {
		until = time.Time{}
	}
	return from, until
}

// runEvents are the trace entries of a run's own events: restarts,
// backoffs, readiness, health, suspends, control messages, a workflow's
// node attempts and its end; only those keep takes when it is set.
func runEvents(in *runs.Info, keep func(ev map[string]any) bool) []TraceEntry {
	var out []TraceEntry
	r := in.Meta.Run
	for _, line := range runs.TailLines(in.FilesDir().Path(runs.EventsFile), traceEventLines) {
		var ev map[string]any
		if json.Unmarshal([]byte(line), &ev) != nil {
			continue
		}
		ts, err := time.Parse(time.RFC3339Nano, fmt.Sprint(ev["ts"]))
		if err != nil || keep != nil && !keep(ev) {
			continue
		}
		name, _ := ev["event"].(string)
		e := TraceEntry{TS: ts, Run: r}
		switch name {
		case "run.restart":
			e.Kind, e.Text = "restart", fmt.Sprintf("restart run:%s attempt=%v reason=%v", r, ev["attempt"], ev["reason"])
		case "run.backoff":
			e.Kind, e.Text = "backoff", fmt.Sprintf("backoff run:%s exit=%v next attempt %v in %vms", r, ev["code"], ev["attempt"], ev["delay_ms"])
		case "run.ready":
			e.Kind, e.Text = "ready", fmt.Sprintf("ready run:%s after %vms (%v)", r, ev["after_ms"], ev["probe"])
		case "run.unhealthy":
			e.Kind, e.Text = "unhealthy", fmt.Sprintf("unhealthy run:%s %v: %v", r, ev["reason"], ev["error"])
		case "run.suspend", "run.resume", "run.held":
			e.Kind, e.Text = strings.TrimPrefix(name, "run."), fmt.Sprintf("%s run:%s%s", strings.TrimPrefix(name, "run."), r, eventDetail(ev, "by", "paused_ms", "reason"))
		case "run.control":
			e.Kind, e.Text = "control", fmt.Sprintf("control run:%s %v from %v", r, ev["type"], orDash(ev["from"]))
		case "workflow.node":
			attempt := fmt.Sprintf(" attempt %v", ev["attempt"])
			if n, _ := ev["attempt"].(float64); n == 0 {
				attempt = "" // skipped before it ran
			}
			e.Kind, e.Text = "node", fmt.Sprintf("node %v%s %v%s", ev["node"], attempt, ev["status"], eventDetail(ev, "run", "code", "reason", "error", "retry_at"))
		case "run.done", "run.failed", "run.exited", "run.kill", "run.cancel":
			status := map[string]string{"run.done": "done", "run.failed": "failed", "run.exited": "exited", "run.kill": "killed", "run.cancel": "cancelled"}[name]
			e.Kind, e.Text = "exit", fmt.Sprintf("exit run:%s %s%s", r, status, eventDetail(ev, "code", "reason", "type"))
		default:
			continue
		}
		out = append(out, e)
	}
	return out
}

// output bounds the view: the text shows the chain and the newest lines
// entries; --json all of them up to traceJSONMax.
func (t *tracer) output(v *TraceView, lines int) *inspectOutput {
	v.Count = len(v.Entries)
	path := sessions.TracePath(t.agentDir, t.session)
	v.Record = []string{path}
	if e := path + ".1"; fileExists(e) {
		v.Record = append(v.Record, e)
	}
	v.Record = append(v.Record, "<state_dir>/events.jsonl of each run")
	if v.Runs == nil {
		v.Runs = []TraceRun{}
	}
	text := traceText(v, lines)
	if n := len(v.Entries) - traceJSONMax; n > 0 {
		v.Entries, v.Truncated = v.Entries[n:], n
	}
	if v.Entries == nil {
		v.Entries = []TraceEntry{}
	}
	return &inspectOutput{text: text, details: v}
}

func traceText(v *TraceView, lines int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "trace %s session=%s runs=%d entries=%d", v.Target, v.Session, len(v.Runs), v.Count)
	if len(v.Chain) > 0 {
		names := make([]string, len(v.Chain))
		for i, c := range v.Chain {
			names[i] = c.Run
		}
		fmt.Fprintf(&b, " chain=%s", strings.Join(names, ">"))
	}
	b.WriteString(" record=" + v.Record[0])
	sameDay := true
	for _, e := range v.Entries {
		if len(v.Entries) > 0 && e.TS.UTC().YearDay() != v.Entries[0].TS.UTC().YearDay() {
			sameDay = false
		}
	}
	stamp := func(t time.Time) string {
		if sameDay {
			return t.UTC().Format("15:04:05.000")
		}
		return t.UTC().Format("2006-01-02T15:04:05.000Z")
	}
	if len(v.Chain) > 0 {
		b.WriteString("\nchain (the session's root first):")
		for _, c := range v.Chain {
			fmt.Fprintf(&b, "\n  run:%s %s created %s%s", c.Run, c.Status, c.CreatedAt.UTC().Format(time.RFC3339Nano), causeText(c.Cause))
		}
	}
	if len(v.Entries) > 0 {
		day := ""
		if sameDay {
			day = " " + v.Entries[0].TS.UTC().Format("2006-01-02") + " UTC"
		}
		fmt.Fprintf(&b, "\ntimeline%s:", day)
	}
	from := max(0, len(v.Entries)-lines)
	if from > 0 {
		fmt.Fprintf(&b, "\n  (+%d earlier; lines=%d shows them, --json gives them all, the full record is %s)", from, len(v.Entries), v.Record[0])
	}
	for _, e := range v.Entries[from:] {
		dir := ""
		if e.Direction != "" {
			dir = " [" + e.Direction + "]"
		}
		fmt.Fprintf(&b, "\n  %s %s%s", stamp(e.TS), e.Text, dir)
	}
	if len(v.Entries) == 0 {
		b.WriteString("\n(no spawns, messages or run events recorded)")
	}
	return b.String()
}

// causeText renders a cause: " ← run:p msg=m tool_call=t mcp=r node=n"
// (the session itself when no run).
func causeText(c *wire.Cause) string {
	if c.Empty() {
		return ""
	}
	var parts []string
	if c.Run != "" {
		parts = append(parts, "run:"+c.Run)
	} else if c.Session != "" {
		parts = append(parts, "session "+c.Session)
	}
	for _, kv := range [][2]string{{"msg", c.Message}, {"tool_call", c.ToolCall}, {"mcp", c.MCPRequest}, {"node", c.Node}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+"="+kv[1])
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " ← " + strings.Join(parts, " ")
}

// messageSender is the run a message came from: the run whose process
// sent it, else its from.
func messageSender(it sessions.Item) string {
	if it.Cause != nil && it.Cause.Run != "" {
		return it.Cause.Run
	}
	return addressRun(it.From)
}

// addressRun is the run an address belongs to: run:<id>, room:<id>,
// branch:<id>/<b> ("" for others).
func addressRun(addr string) string {
	a, err := mailbox.Parse(addr)
	if err != nil {
		return ""
	}
	switch a.Kind {
	case "run", "room", "branch":
		return a.ID
	}
	return ""
}

func orSession(run, session string) string {
	if run != "" {
		return "run:" + run
	}
	return "session " + session
}

func orDash(v any) string {
	if s, ok := v.(string); ok && s != "" {
		return s
	}
	return "-"
}

// eventDetail renders the given fields of an event as " k=v" pairs.
func eventDetail(ev map[string]any, keys ...string) string {
	var b strings.Builder
	for _, k := range keys {
		if v, ok := ev[k]; ok && v != nil && fmt.Sprint(v) != "" {
			fmt.Fprintf(&b, " %s=%v", k, v)
		}
	}
	return b.String()
}

// inspectSessionTrace wires view=trace and view=sessions for session
// targets.
func inspectSessionViews(_ context.Context, env *Env, q *inspectQuery) (*inspectOutput, error) {
	switch q.view {
	case "trace":
		return sessionTraceView(env, q.target.id, q.lines)
	case "sessions":
		only := q.target.id
		if only == "all" {
			only = ""
		}
		l, err := ListSessions(env.AgentDir, only)
		if err != nil {
			return nil, err
		}
		return &inspectOutput{text: sessionListText(l, q.lines), details: l}, nil
	}
	return nil, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
