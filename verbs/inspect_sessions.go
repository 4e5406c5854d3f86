package verbs

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pi-actors/pi-actors/internal/termtext"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// The session:<id>, session:all and coordinator views list runs from the
// runs index (runs.Index.List: terminal entries are final and read from the
// index alone, live ones are re-derived now), so a listing of thousands of
// ended runs reads one file. coordinator view=followups is the one view
// that asks the kernel (it drains the session's follow-up queue).

// StatusFilters lists the status filters of listings (runs.ValidFilter),
// for errors and completion.
const StatusFilters = "all, active, terminal, running, backoff, suspended, done, failed, cancelled, killed, exited, archived"

// noCoordinatorSession is the PARITY message for coordinator without a
// session.
const noCoordinatorSession = "inspect coordinator requires a current coordinator session; use session:<id> or session:all for explicit session inventory."

// sessionRun is one run of a session listing (the --json form).
type sessionRun struct {
	Run        string    `json:"run"`
	Status     string    `json:"status"`
	Reason     string    `json:"reason,omitempty"`
	OwnerID    string    `json:"ownerId,omitempty"`
	Recipe     string    `json:"recipe,omitempty"`
	Tool       string    `json:"tool,omitempty"`
	RetireWhen string    `json:"retire_when,omitempty"`
	StateDir   string    `json:"state_dir"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// sessionListing is the result of a session or coordinator listing.
type sessionListing struct {
	Session       string       `json:"session"`
	Filter        string       `json:"status_filter"`
	Count         int          `json:"count"`
	OtherSessions *int         `json:"other_sessions,omitempty"`
	OtherRuns     *int         `json:"other_runs,omitempty"`
	Runs          []sessionRun `json:"runs"`
}

// inspectSession answers target=session:<id> and session:all.
func inspectSession(ctx context.Context, env *Env, q *inspectQuery) (*inspectOutput, error) {
	if q.view == "trace" || q.view == "sessions" {
		return inspectSessionViews(ctx, env, q)
	}
	return sessionRuns(env, q, q.target.id)
}

// inspectCoordinator answers target=coordinator: the calling session's
// runs, or its follow-ups.
func inspectCoordinator(ctx context.Context, env *Env, q *inspectQuery) (*inspectOutput, error) {
	session := strings.TrimSpace(env.Session)
	if session == "" {
		return nil, &Error{Exit: ExitUsage, Code: "no_session", Message: noCoordinatorSession,
			Hint: "set PI_ACTORS_SESSION or pass session=<id>; inspect target=session:all view=runs lists every run"}
	}
	if q.view == "followups" {
		return coordinatorFollowups(env, session, q.lines)
	}
	return sessionRuns(env, q, session)
}

// sessionRuns lists the runs of one session (id) or of all ("all"), with
// the status filter of q.
func sessionRuns(env *Env, q *inspectQuery, id string) (*inspectOutput, error) {
	filter := strings.TrimSpace(q.status)
	if !runs.ValidFilter(filter) {
		return nil, Usagef("status filter %q is not one of: %s", filter, StatusFilters)
	}
	if filter == "" {
		filter = "all"
	}
	list, err := env.runIndex().List(filter)
	if err != nil {
		return nil, err
	}
	list = orderRuns(list)
	all := id == "all"
	out := &sessionListing{Session: id, Filter: filter, Runs: []sessionRun{}}
	others := map[string]bool{}
	otherRuns := 0
	for _, in := range list {
		owner := in.Meta.OwnerID
		if !all && owner != id {
			if owner != "" {
				others[owner] = true
				otherRuns++
			}
			continue
		}
		e := sessionRun{Run: in.Meta.Run, Status: in.Status, OwnerID: owner, Recipe: in.Meta.Recipe, Tool: in.Meta.Tool,
			RetireWhen: in.Meta.RetireWhen, StateDir: string(in.Dir), UpdatedAt: runUpdated(in)}
		if !in.Live() {
			e.Reason = in.Reason
		}
		out.Runs = append(out.Runs, e)
	}
	out.Count = len(out.Runs)
	if !all {
		n := len(others)
		out.OtherSessions, out.OtherRuns = &n, &otherRuns
	}
	return &inspectOutput{text: sessionText(out, all, q.lines), details: out}, nil
}

// sessionText is `session=<id> runs=N[ other_sessions=X other_runs=Y]`,
// then at most lines run lines `run=<r> status=<s>[ recipe=][ retire_when=]`
// (session:all adds owner=) and "(+N more …)".
func sessionText(l *sessionListing, all bool, lines int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "session=%s runs=%d", l.Session, l.Count)
	if l.OtherSessions != nil {
		fmt.Fprintf(&b, " other_sessions=%d other_runs=%d", *l.OtherSessions, *l.OtherRuns)
	}
	if l.Filter != "all" {
		b.WriteString(" filter=" + l.Filter)
	}
	for i, e := range l.Runs {
		if i == lines {
			fmt.Fprintf(&b, "\n(+%d more; lines=%d lists them all, --json gives every run)", l.Count-i, l.Count)
			break
		}
		fmt.Fprintf(&b, "\nrun=%s status=%s", e.Run, e.Status)
		if e.Recipe != "" {
			b.WriteString(" recipe=" + inspectPreview(e.Recipe, previewChars))
		}
		if e.RetireWhen != "" {
			b.WriteString(" retire_when=" + inspectPreview(e.RetireWhen, previewChars))
		}
		if all && e.OwnerID != "" {
			b.WriteString(" owner=" + e.OwnerID)
		}
	}
	if l.Count == 0 {
		b.WriteString("\n(no runs)")
	}
	return b.String()
}

// coordinatorFollowups drains the session's follow-up queue through the
// kernel (started if needed: the queue lives on disk) and prints each
// follow-up's text.
func coordinatorFollowups(env *Env, session string, lines int) (*inspectOutput, error) {
	if lines <= 0 {
		lines = followupsShown
	}
	res, settle, err := env.takeFollowups(lines)
	if err != nil {
		return nil, err
	}
	if res.Followups == nil {
		res.Followups = []Followup{}
	}
	if res.Session == "" {
		res.Session = session
	}
	res.Count = len(res.Followups)
	var b strings.Builder
	fmt.Fprintf(&b, "session=%s followups=%d", session, res.Count)
	bounded := make([]any, len(res.Followups))
	for i, f := range res.Followups {
		bounded[i] = boundRecord(f, followupWhere(f.Run, f.Kind, f.ID, f.StateDir))
	}
	if res.Corrupted > 0 {
		fmt.Fprintf(&b, " corrupted=%d", res.Corrupted)
	}
	if res.Held {
		b.WriteString(" held=true\n(the session is suspended: its follow-ups wait for pi-actors session resume)")
	} else if res.Count == 0 {
		b.WriteString("\n(no follow-ups)")
	}
	for i, f := range res.Followups {
		text := f.Text
		if text == "" {
			text = f.Summary
		}
		if i > 0 {
			b.WriteString("\n")
		}
		text = termtext.VisibleLines(strings.TrimRight(text, "\n"))
		if r := []rune(text); len(r) > followupTextChars {
			text = string(r[:followupTextChars]) + "…" + followupWhere(f.Run, f.Kind, f.ID, f.StateDir).note(len(text))
		}
		b.WriteString("\n" + text)
	}
	if res.Corrupted > 0 {
		fmt.Fprintf(&b, "\n\n(corrupted=%d: malformed line(s) in %s, kept there and never delivered; a torn write — read the file for what they held)", res.Corrupted, res.File)
	}
	if res.More > 0 {
		fmt.Fprintf(&b, "\n\n(+%d more queued: they stay queued; run the view again, or pi-actors watch)", res.More)
	}
	return &inspectOutput{text: b.String(), details: &boundedFollowups{Count: res.Count, Followups: bounded, Session: res.Session,
		Held: res.Held, More: res.More, Corrupted: res.Corrupted, File: res.File}, settle: settle}, nil
}

// takeFollowups takes up to max of the session's follow-ups on a
// connection that acknowledges them (wire.Request.Ack): settle(true),
// once they were passed on, acknowledges them; settle(false) hangs up
// without, and the kernel puts them back in the queue (as it does when
// this process dies first). settle closes the connection.
func (env *Env) takeFollowups(max int) (*Followups, func(bool), error) {
	c, err := env.Dial(true)
	if err != nil {
		return nil, nil, err
	}
	var res Followups
	resp, err := env.exchange(c, wire.Request{Op: "followups", Ack: true}, map[string]int{"max": max})
	if err == nil {
		err = resp.Decode(&res)
	}
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	settle := func(passedOn bool) {
		if passedOn && len(res.Followups) > 0 {
			ids := make([]string, len(res.Followups))
			for i, f := range res.Followups {
				ids[i] = f.ID
			}
			c.Ack(ids...)
		}
		c.Close()
	}
	return &res, settle, nil
}

// boundedFollowups is Followups in --json, each follow-up bounded
// (boundRecord): the same keys in the same order.
type boundedFollowups struct {
	Count     int    `json:"count"`
	Followups []any  `json:"followups"`
	Session   string `json:"session"`
	Held      bool   `json:"held,omitempty"`
	More      int    `json:"more,omitempty"`
	Corrupted int    `json:"corrupted,omitempty"`
	File      string `json:"file,omitempty"`
}

// followupTextChars bounds one follow-up's text in view=followups (its
// summary and body are a run's message: --json and the run's outbox have
// them).
const followupTextChars = 2000

// followupWhere is where the whole of a follow-up is: a message's record
// in its run's outbox.jsonl (the follow-up id is <run>.<start>.<record
// id>, or <run>.<start>.outbox.<0-based line>), a transition's
// result.json.
func followupWhere(run, kind, id, stateDir string) cutWhere {
	if stateDir == "" {
		return cutWhere{}
	}
	if kind != "message" {
		return cutWhere{File: filepath.Join(stateDir, runs.ResultFile)}
	}
	w := cutWhere{File: filepath.Join(stateDir, runs.OutboxFile)}
	rest, ok := strings.CutPrefix(id, run+".")
	if !ok {
		return w // a hashed id (o-…): the file alone
	}
	if _, rest, ok = strings.Cut(rest, "."); !ok {
		return w
	}
	if line, isLine := strings.CutPrefix(rest, "outbox."); isLine {
		if n, err := strconv.Atoi(line); err == nil && n >= 0 {
			w.Line = n + 1
			return w
		}
	}
	w.ID = rest
	return w
}

// boundFollowupJSON bounds one follow-up as the kernel streams it (watch,
// MCP notifications) like view=followups does.
func boundFollowupJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) <= viewValueBytes {
		return raw
	}
	var f struct {
		ID       string `json:"id"`
		Kind     string `json:"kind"`
		Run      string `json:"run"`
		StateDir string `json:"state_dir"`
	}
	if json.Unmarshal(raw, &f) != nil {
		return raw
	}
	if out, cut := boundObject(raw, followupWhere(f.Run, f.Kind, f.ID, f.StateDir), nil); cut {
		return out
	}
	return raw
}

// followupsShown is how many follow-ups view=followups takes by default
// (lines= changes it); the rest stay queued.
const followupsShown = 50

// orderRuns puts live runs first, then the newest first by their last
// update. The index order is nearly that already (only runs re-derived
// since their index record may move), so the stable sort is cheap.
func orderRuns(list []*runs.Info) []*runs.Info {
	type keyed struct {
		in      *runs.Info
		live    bool
		updated time.Time
	}
	ks := make([]keyed, len(list))
	for i, in := range list {
		ks[i] = keyed{in, in.Live(), runUpdated(in)}
	}
	slices.SortStableFunc(ks, func(a, b keyed) int {
		if a.live != b.live {
			if a.live {
				return -1
			}
			return 1
		}
		return b.updated.Compare(a.updated)
	})
	out := make([]*runs.Info, len(ks))
	for i, k := range ks {
		out[i] = k.in
	}
	return out
}

// runUpdated is a run's last update: its creation, last progress or end
// (for runs listed from the index alone, the index record's time).
func runUpdated(in *runs.Info) time.Time {
	t := in.Meta.CreatedAt
	if in.Progress != nil && in.Progress.UpdatedAt.After(t) {
		t = in.Progress.UpdatedAt
	}
	if in.Result != nil && in.Result.CompletedAt.After(t) {
		t = in.Result.CompletedAt
	}
	return t
}
