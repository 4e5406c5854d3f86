package verbs

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/recipes/template"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/sessions"
)

// Session lists, suspends and resumes coordinator sessions (seed 001's
// session manager): suspend stops every live run of a session in place,
// with its clocks, and holds its messages and follow-ups; resume
// continues them and hands on what was held, in order.
type Session struct {
	Action  string   `json:"action" jsonschema:"list, suspend or resume"`
	Session string   `json:"session,omitempty" jsonschema:"the session to suspend or resume (default: yours, $PI_ACTORS_SESSION); another session cannot suspend or resume yours (exit 77)"`
	Lines   LooseInt `json:"lines,omitzero" jsonschema:"list: how many sessions the text shows (default 40)"`
}

// Validate checks the action.
func (s *Session) Validate() error {
	switch s.Action {
	case "list", "suspend", "resume":
	case "":
		return Usagef("session takes an action: list, suspend or resume")
	default:
		return Usagef("session action %q is not one of list, suspend, resume", s.Action)
	}
	if s.Action == "list" && s.Session != "" {
		return Usagef("session list lists every session; session= is for suspend and resume (inspect target=session:<id> view=runs shows one session's runs)")
	}
	if s.Session != "" && !mailbox.ValidToken(s.Session) {
		return callerError("session", s.Session, mailbox.MaxToken, "pass session=<token>: the session id as PI_ACTORS_SESSION holds it")
	}
	_, err := lines(s.Lines)
	return err
}

// SessionInfo is one session of a listing.
type SessionInfo struct {
	Session string `json:"session"`
	// State is active (a run is live), suspended, resuming or completed
	// (every run ended).
	State        string    `json:"state"`
	Live         int       `json:"live"`
	Total        int       `json:"total"`
	LastActivity time.Time `json:"last_activity,omitzero"`
	SuspendedAt  time.Time `json:"suspended_at,omitzero"`
	By           string    `json:"by,omitempty"`
	Snapshot     string    `json:"snapshot,omitempty"`
}

// SessionList is every session.
type SessionList struct {
	Count     int           `json:"count"`
	Active    int           `json:"active"`
	Suspended int           `json:"suspended"`
	Completed int           `json:"completed"`
	Sessions  []SessionInfo `json:"sessions"`
}

// SessionResult is the outcome of a suspend or a resume.
type SessionResult struct {
	Session string `json:"session"`
	State   string `json:"state"`
	// Already: the session was in that state before.
	Already bool `json:"already,omitempty"`
	// Runs are the live runs the request stopped or continued, Confirmed
	// those whose supervisor confirmed in time, Pending the others.
	Runs      int      `json:"runs"`
	Confirmed int      `json:"confirmed"`
	Pending   []string `json:"pending,omitempty"`
	// Released counts the held messages handed on (resume).
	Released    int       `json:"released,omitempty"`
	SuspendedAt time.Time `json:"suspended_at,omitzero"`
	// PausedMS is how long the session was suspended (resume).
	PausedMS int64   `json:"paused_ms,omitempty"`
	Snapshot string  `json:"snapshot,omitempty"`
	TookMS   float64 `json:"took_ms"`
	// Elsewhere are the session's live runs on other members of the
	// cluster (run:<id>@<node>): suspend and resume act on this node's
	// runs only.
	Elsewhere []string `json:"elsewhere,omitempty"`
	// ElsewhereMore counts those past the first maxElsewhere (ps --cluster
	// lists them all).
	ElsewhereMore int `json:"elsewhere_more,omitempty"`
	// Unreachable are the members that could not be asked (node → why):
	// the session may have runs there too.
	Unreachable map[string]string `json:"unreachable,omitempty"`
}

// maxElsewhere bounds the runs elsewhere an answer names.
const maxElsewhere = 100

func init() {
	Register(&Spec{
		Name:    "session",
		Summary: "list coordinator sessions; suspend or resume one with all its runs",
		Word:    "action",
		Usage: `pi-actors session list [lines=N] [--json]
pi-actors session suspend [session=<id>] [--json]
pi-actors session resume [session=<id>] [--json]

list: every coordinator session with its state (active: a run is live;
suspended; completed: every run ended), live/total runs and last activity
(the newest of its runs' updates and its CLI/MCP/pi calls).

suspend: every live run of the session — workflow nodes and room members
included — is stopped in place (SIGSTOP to its process groups; its
supervisor keeps answering) and shows status suspended with suspended_at.
Restart policies, timeouts (template timeouts, ready_timeout, liveness,
workflow node timeouts and retry delays) and workflow scheduling pause.
Messages sent to its runs (run:, room:, branch:) are accepted, stored
durably and held; control.kill and control.cancel still apply at once.
Follow-ups are held; new spawns in the session are refused (exit 75).
A snapshot of the session (runs, states, pending messages, workflow
states) is written atomically; the answer names it.

resume: every run continues (SIGCONT), the paused clocks go on with the
time they had left, held messages and follow-ups are handed on in order.

The session is yours ($PI_ACTORS_SESSION) unless session=<id> names
another; a caller of another session is refused (exit 77). A kernel
restart keeps a suspended session suspended. [sessions]
auto_suspend_after in pi-actors.toml suspends a session with live runs
after that long without CLI/MCP/pi activity (off by default).

Examples:
  pi-actors session list
  pi-actors session suspend
  pi-actors session resume session=mcp-1a2b3c`,
		New: func() Request { return new(Session) },
		Run: runSession,
	})
}

func runSession(ctx context.Context, env *Env, req Request) (*Outcome, error) {
	s := req.(*Session)
	if s.Action == "list" {
		n, _ := lines(s.Lines)
		l, err := ListSessions(env.AgentDir, "")
		if err != nil {
			return nil, err
		}
		return &Outcome{Text: sessionListText(l, n), Result: l}, nil
	}
	target := strings.TrimSpace(s.Session)
	if target == "" {
		target = env.Session
	}
	if target == "" {
		return nil, &Error{Exit: ExitUsage, Code: "no_session", Message: "session " + s.Action + " needs a session: yours ($PI_ACTORS_SESSION) or session=<id>",
			Hint: "pi-actors session list"}
	}
	if err := CheckOwner("session", target); err != nil {
		return nil, err // before a kernel is started for it
	}
	if env.Session != "" && env.Session != target {
		return nil, sessionDenied(s.Action, target, env.Session)
	}
	var res SessionResult
	err := env.Call("session", &Session{Action: s.Action, Session: target}, &res)
	if !env.Config.Cluster.Enabled() {
		if err != nil {
			return nil, err
		}
		return &Outcome{Text: sessionResultText(s.Action, &res), Result: &res}, nil
	}
	elsewhere, unreachable := sessionElsewhere(ctx, env, target, s.Action)
	var e *Error
	if err != nil && errors.As(err, &e) && e.Exit == ExitNoInput && (len(elsewhere) > 0 || len(unreachable) > 0) {
		// No run here, but the session has some elsewhere (or may have):
		// say where, rather than that it has none.
		msg := fmt.Sprintf("session %s has no runs on this node; %s acts on this node's runs only", target, s.Action)
		if len(elsewhere) > 0 {
			msg += "; its runs on other nodes: " + shortRuns(elsewhere, 10)
		}
		if len(unreachable) > 0 {
			msg += "; nodes that could not be asked: " + strings.Join(slices.Sorted(maps.Keys(unreachable)), ", ")
		}
		return nil, &Error{Exit: ExitNoInput, Code: e.Code, Message: msg,
			Hint:    "run pi-actors session " + s.Action + " on the node that has them (its agent root); pi-actors ps --cluster lists them",
			Details: map[string]any{"elsewhere": boundedRuns(elsewhere), "unreachable": unreachable}}
	}
	if err != nil {
		return nil, err
	}
	res.Elsewhere, res.Unreachable = boundedRuns(elsewhere), unreachable
	res.ElsewhereMore = len(elsewhere) - len(res.Elsewhere)
	return &Outcome{Text: sessionResultText(s.Action, &res), Result: &res}, nil
}

func boundedRuns(ids []string) []string { return ids[:min(len(ids), maxElsewhere)] }

// sessionElsewhere lists the session's runs on the other members that
// the action did not reach — for suspend the live ones not suspended, for
// resume the suspended ones — and the members that could not be asked.
func sessionElsewhere(ctx context.Context, env *Env, session, action string) ([]string, map[string]string) {
	ids, unreachable, err := runsElsewhere(ctx, env, "active", func(r *RunRow) bool {
		return r.Owner == session && (r.Status == runs.StatusSuspended) == (action == "resume")
	})
	if err != nil {
		return nil, map[string]string{"cluster": Classify(err).Message}
	}
	for i, id := range ids {
		ids[i] = "run:" + id
	}
	return ids, unreachable
}

// sessionDenied refuses a caller of another session.
func sessionDenied(action, target, caller string) *Error {
	return &Error{Exit: ExitNoPerm, Code: "session_mismatch",
		Message: fmt.Sprintf("session %s session=%s: reason=session_mismatch current_session=%s; only the session itself (or a caller without a session) may %s it", action, target, caller, action),
		Hint:    "pi-actors session list"}
}

// SessionDenied is the refusal the kernel gives a caller of another
// session.
func SessionDenied(action, target, caller string) error { return sessionDenied(action, target, caller) }

// lines reads an optional positive line count (default 40).
func lines(v LooseInt) (int, error) {
	if !v.Set || v.V == nil || template.Stringify(v.V) == "" {
		return defaultInspectLines, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(template.Stringify(v.V)))
	if err != nil || n < 1 {
		return 0, Usagef("lines must be a positive integer (got %s)", template.CompactJSON(v.V))
	}
	return n, nil
}

// ListSessions lists every session known from the runs index and the
// session records (only one when only is set), newest activity first.
func ListSessions(agentDir, only string) (*SessionList, error) {
	list, err := runs.NewIndex(agentDir).List("all")
	if err != nil {
		return nil, err
	}
	by := map[string]*SessionInfo{}
	get := func(id string) *SessionInfo {
		si := by[id]
		if si == nil {
			si = &SessionInfo{Session: id}
			by[id] = si
		}
		return si
	}
	for _, in := range list {
		owner := in.Meta.OwnerID
		if owner == "" || only != "" && owner != only {
			continue
		}
		si := get(owner)
		si.Total++
		if in.Live() {
			si.Live++
		}
		if t := runUpdated(in); t.After(si.LastActivity) {
			si.LastActivity = t
		}
	}
	recs, err := sessions.List(agentDir)
	if err != nil {
		return nil, err
	}
	held := map[string]*sessions.Record{}
	for _, r := range recs {
		if only != "" && r.Session != only {
			continue
		}
		get(r.Session)
		held[r.Session] = r
	}
	out := &SessionList{Sessions: []SessionInfo{}}
	for id, si := range by {
		if t := sessions.LastActivity(agentDir, id); t.After(si.LastActivity) {
			si.LastActivity = t
		}
		r := held[id]
		switch {
		case r.Held():
			si.State, si.SuspendedAt, si.By, si.Snapshot = r.State, r.SuspendedAt, r.By, r.Snapshot
		case si.Live > 0:
			si.State = sessions.StateActive
		default:
			si.State = sessions.StateCompleted
		}
		switch si.State {
		case sessions.StateActive:
			out.Active++
		case sessions.StateCompleted:
			out.Completed++
		default:
			out.Suspended++
		}
		out.Sessions = append(out.Sessions, *si)
	}
	slices.SortFunc(out.Sessions, func(a, b SessionInfo) int {
		if c := b.LastActivity.Compare(a.LastActivity); c != 0 {
			return c
		}
		return strings.Compare(a.Session, b.Session)
	})
	out.Count = len(out.Sessions)
	return out, nil
}

// sessionListText is `sessions=N active=A suspended=S completed=C`, then
// at most n lines `session=<id> state=<s> live=L/T last_activity=<t>
// (<ago>)[ suspended_at=<t> snapshot=<path>]`.
func sessionListText(l *SessionList, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "sessions=%d active=%d suspended=%d completed=%d", l.Count, l.Active, l.Suspended, l.Completed)
	now := time.Now()
	for i, s := range l.Sessions {
		if i == n {
			fmt.Fprintf(&b, "\n(+%d more; lines=%d lists them all, --json gives every session)", l.Count-i, l.Count)
			break
		}
		fmt.Fprintf(&b, "\nsession=%s state=%s live=%d/%d", s.Session, s.State, s.Live, s.Total)
		if !s.LastActivity.IsZero() {
			fmt.Fprintf(&b, " last_activity=%s (%s ago)", s.LastActivity.UTC().Format(time.RFC3339), agoText(now.Sub(s.LastActivity)))
		}
		if !s.SuspendedAt.IsZero() {
			fmt.Fprintf(&b, " suspended_at=%s", s.SuspendedAt.UTC().Format(time.RFC3339))
		}
		if s.By != "" && s.State != sessions.StateActive {
			b.WriteString(" by=" + s.By)
		}
		if s.Snapshot != "" && s.State == sessions.StateSuspended {
			b.WriteString(" snapshot=" + s.Snapshot)
		}
	}
	if l.Count == 0 {
		b.WriteString("\n(no sessions)")
	}
	return b.String()
}

// agoText writes a duration roughly: 12s, 5m, 3h, 2d.
func agoText(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// sessionResultText is `session=<id> state=<s> runs=N confirmed=C
// took_ms=T …` and the next step.
func sessionResultText(action string, r *SessionResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "session=%s state=%s runs=%d confirmed=%d", r.Session, r.State, r.Runs, r.Confirmed)
	if r.Already {
		b.WriteString(" already=true")
	}
	if action == "resume" {
		fmt.Fprintf(&b, " released=%d paused_ms=%d", r.Released, r.PausedMS)
	} else if !r.SuspendedAt.IsZero() {
		b.WriteString(" suspended_at=" + r.SuspendedAt.UTC().Format(time.RFC3339Nano))
	}
	fmt.Fprintf(&b, " took_ms=%.1f", r.TookMS)
	if action == "suspend" {
		b.WriteString(nextText([]string{"pi-actors session resume session=" + r.Session}))
	} else {
		b.WriteString(nextText([]string{"pi-actors session list"}))
	}
	if r.Snapshot != "" && action == "suspend" {
		b.WriteString("\nsnapshot: " + r.Snapshot)
	}
	if len(r.Pending) > 0 {
		fmt.Fprintf(&b, "\nnot confirmed yet (their supervisors apply it within a second): %s", shortRuns(r.Pending, 10))
	}
	if len(r.Elsewhere) > 0 {
		done := map[string]string{"suspend": "suspended", "resume": "resumed"}[action]
		fmt.Fprintf(&b, "\non other nodes, not %s (session %s acts on this node's runs; run it there too): %s", done, action, shortRuns(r.Elsewhere, 10))
		if r.ElsewhereMore > 0 {
			fmt.Fprintf(&b, " (and %d more: pi-actors ps --cluster)", r.ElsewhereMore)
		}
	}
	for _, node := range slices.Sorted(maps.Keys(r.Unreachable)) {
		fmt.Fprintf(&b, "\nnode=%s could not be asked (the session may have runs there): %s", node, r.Unreachable[node])
	}
	return b.String()
}

func shortRuns(ids []string, n int) string {
	if len(ids) > n {
		return strings.Join(ids[:n], ", ") + fmt.Sprintf(" (+%d more)", len(ids)-n)
	}
	return strings.Join(ids, ", ")
}
