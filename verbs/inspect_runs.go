package verbs

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/pi-actors/pi-actors/internal/config"
	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/rooms"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/workflows"
)

// The run:<id> views read the run's state files directly, so they work
// while the kernel is down. They never write a file or signal a process.

// runViews are the views of run:<id>, in the order errors list them.
var runViews = []string{"status", "tail", "events", "messages", "artifacts", "files", "mailbox", "dag", "trace"}

// Bounds of the run views' text.
const (
	previewChars  = 160  // summaries, last output line, leaf commands
	tailLineChars = 2000 // one line of view=tail
	leafLines     = 8    // live leaves listed by view=status
	statusNextMax = 3    // next= actions of view=status
)

// inspectRun answers target=run:<id>.
func inspectRun(_ context.Context, env *Env, q *inspectQuery) (*inspectOutput, error) {
	in, err := loadInspectRun(env, q.target.id)
	if err != nil {
		return nil, err
	}
	switch q.view {
	case "status":
		return runStatusView(env, in), nil
	case "tail":
		return runTailView(in, q.lines), nil
	case "events":
		return runEventsView(in, q.lines)
	case "messages":
		return runMessagesView(in, q.lines)
	case "artifacts", "files":
		return runFilesView(in, q.view, env.JSON || q.verbose), nil
	case "mailbox":
		return runMailboxView(in, q.lines)
	case "dag":
		return runDagView(in, q.lines)
	case "trace":
		return runTraceView(env, in, q.lines)
	}
	return nil, Usagef("inspect run:<id> supports %s.", inspectViewList(runViews))
}

// loadInspectRun finds run:<id>, derives its status now and checks that
// the calling session may see it.
func loadInspectRun(env *Env, id string) (*runs.Info, error) {
	in, err := runs.Access(env.AgentDir, id, env.Session)
	if errors.Is(err, runs.ErrNotFound) {
		if e := nodeNotRun(env, id); e != nil {
			return nil, e
		}
	}
	if err == nil && in.Meta.WorkflowNode != nil {
		// A node run of an earlier instance of its workflow (spawned
		// again since): this instance's node has not run (it showed the
		// old run's status and output).
		wf, werr := runs.Access(env.AgentDir, in.Meta.WorkflowNode.Workflow, env.Session)
		if werr == nil && wf.Meta.Workflow != nil && WorkflowInstance(wf.Meta) != in.Meta.WorkflowNode.Instance {
			if e := nodeNotRun(env, id); e != nil {
				return nil, e
			}
		}
	}
	return in, err
}

// nodeNotRun explains a missing run:<wf>-<node> whose workflow <wf> (one
// the session may see) has a node <node> that has not run yet: skipped or
// waiting, it has no run until it starts. Nil when id is no such node.
func nodeNotRun(env *Env, id string) *Error {
	for i := strings.LastIndexByte(id, '-'); i > 0; i = strings.LastIndexByte(id[:i], '-') {
		wf, node := id[:i], id[i+1:]
		in, err := runs.Access(env.AgentDir, wf, env.Session)
		if err != nil {
			continue
		}
		st, err := workflows.Load(string(in.FilesDir()))
		if err != nil {
			continue
		}
		n := st.Node(node)
		if n == nil || n.Run != "" && n.Run != id {
			continue
		}
		why := n.Status
		if n.Reason != "" {
			why += " (" + n.Reason + ")"
		}
		return &Error{Exit: ExitNoInput, Code: "not_found",
			Message: fmt.Sprintf("run:%s has not run: it is node %s of workflow run:%s, which is %s", id, node, wf, why),
			Hint:    "inspect target=run:" + wf + " view=dag (view=trace says why)",
			Details: map[string]any{"workflow": "run:" + wf, "node": node, "node_status": n.Status}}
	}
	return nil
}

// inspectConfig is the agent root's config; a broken config file does not
// stop inspect (it reads state, it does not act on limits).
func (env *Env) inspectConfig() config.Config {
	if env.Config.Runs.StalledAfterS == 0 {
		return config.Defaults()
	}
	return env.Config
}

// runStatus is everything view=status reports about a run.
type runStatus struct {
	in         *runs.Info
	elapsed    time.Duration
	hasElapsed bool
	stalled    bool
	lastAct    time.Time
	stream     string
	lastLine   string
	leaves     []runs.Leaf
	leftover   []runs.Leaf // leaves still running of a run whose supervisor is gone (no kernel has cleaned up yet)
	usage      *runs.Usage
	next       []string
}

func collectRunStatus(env *Env, in *runs.Info, now time.Time) *runStatus {
	s := &runStatus{in: in}
	m := in.Meta
	d := in.FilesDir()
	if start := m.StartedAt(); !start.IsZero() {
		if in.Live() {
			s.elapsed, s.hasElapsed = now.Sub(start), true
		} else if end := runEnd(in); !end.IsZero() {
			s.elapsed, s.hasElapsed = end.Sub(start), true
		}
	}
	s.lastAct = runs.LastActivity(d)
	if in.Status == runs.StatusRunning {
		limit := time.Duration(env.inspectConfig().Runs.StalledAfterS) * time.Second
		since := s.lastAct
		if since.IsZero() {
			since = m.CreatedAt
		}
		s.stalled = limit > 0 && !since.IsZero() && now.Sub(since) > limit
	}
	s.stream, s.lastLine = runs.LastOutput(d)
	if !in.Live() && in.Result == nil && in.Reason == "supervisor_lost" {
		// Read with no kernel to notice the loss yet: what the lost
		// supervisor left may still run until one starts.
		s.leftover = runs.LiveLeaves(in)
	}
	if in.Live() {
		s.leaves = runs.LiveLeaves(in)
		if m.Pid > 0 {
			u := runs.TreeUsage(m.Pid)
			s.usage = &u
		}
	}
	s.next = runStatusNext(in, s.stalled)
	return s
}

// runEnd is when an ended run ended: result.json's completedAt, else the
// terminal-handled record, else the last progress update.
func runEnd(in *runs.Info) time.Time {
	switch {
	case in.Result != nil && !in.Result.CompletedAt.IsZero():
		return in.Result.CompletedAt
	case in.Handled != nil && !in.Handled.TS.IsZero():
		return in.Handled.TS
	case in.Progress != nil:
		return in.Progress.UpdatedAt
	}
	return time.Time{}
}

// runStatusNext picks the next actions the status supports.
func runStatusNext(in *runs.Info, stalled bool) []string {
	addr := "run:" + in.Meta.Run
	view := func(v string) string { return "inspect target=" + addr + " view=" + v }
	var next []string
	switch {
	case in.Status == runs.StatusArchived:
		next = []string{view("files"), view("messages")}
	case in.Status == runs.StatusSuspended:
		next = []string{"session resume session=" + in.Meta.OwnerID, view("trace")}
	case stalled:
		next = []string{view("tail"), view("events"), "message to=" + addr + " type=control.kill"}
	case in.Live():
		next = []string{view("tail"), view("messages"), "message to=" + addr + " type=<channel.action>"}
	case in.Status == runs.StatusDone:
		if len(in.Meta.Artifacts) > 0 {
			next = append(next, view("artifacts"))
		}
		next = append(next, view("messages"), view("tail"))
	default: // failed, exited, killed, cancelled
		next = []string{view("tail") + " lines=80", view("events"), view("messages")}
	}
	if len(next) > statusNextMax {
		next = next[:statusNextMax]
	}
	return next
}

// runStatusView is `run=<r> status=<s> …facts… next=…`, then the last
// output line and the live leaves.
func runStatusView(env *Env, in *runs.Info) *inspectOutput {
	s := collectRunStatus(env, in, time.Now())
	m := in.Meta
	var b strings.Builder
	fmt.Fprintf(&b, "run=%s status=%s", m.Run, in.Status)
	b.WriteString(statusHealthText(in))
	kv := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, " %s=%s", k, inspectPreview(v, previewChars))
		}
	}
	num := func(k string, n int) {
		if n > 0 {
			fmt.Fprintf(&b, " %s=%d", k, n)
		}
	}
	kv("tool", m.Tool)
	kv("recipe", m.Recipe)
	kv("retire_when", m.RetireWhen)
	if in.Live() {
		num("pid", m.Pid)
	}
	restarts := 0
	if p := in.Progress; p != nil {
		// An ended run's progress may still say running for a moment
		// (result.json is written first): a live phase is stale then.
		if p.Phase != in.Status && (in.Live() || !livePhase(p.Phase)) {
			kv("phase", p.Phase)
		}
		num("completed", p.Completed)
		num("failures", len(p.Failures))
		restarts = p.Restarts
		if !p.SuspendedAt.IsZero() && in.Live() {
			kv("suspended_at", p.SuspendedAt.UTC().Format(time.RFC3339Nano))
		}
		num("paused_ms", int(p.PausedMS))
	}
	if in.Live() {
		// Leaves alive now, not as last written (an ended run has none,
		// whatever a supervisor killed mid-run last wrote).
		num("active", len(s.leaves))
	}
	if res := in.Result; res != nil {
		fmt.Fprintf(&b, " code=%d", res.Code)
		if res.Killed {
			b.WriteString(" killed=true")
		}
		restarts = max(restarts, res.Restarts)
	}
	if !in.Live() {
		kv("reason", in.Reason)
	}
	num("restarts", restarts)
	kv("draft_recipe", m.DraftRecipe)
	if s.hasElapsed {
		b.WriteString(" elapsed=" + formatElapsed(s.elapsed))
	}
	if s.stalled {
		b.WriteString(" stalled=true")
	}
	if s.usage != nil && s.usage.Pids > 0 {
		fmt.Fprintf(&b, " cpu=%.1f%% rss=%s", s.usage.CPUPercent, formatBytes(s.usage.RSSBytes))
	}
	if in.Archived != nil {
		kv("archive_dir", in.Archived.ArchiveDir)
	}
	b.WriteString(inspectNext(s.next))
	if s.lastLine != "" {
		fmt.Fprintf(&b, "\noutput stream=%s last=%s", s.stream, inspectPreview(s.lastLine, previewChars))
	}
	for i, l := range s.leaves {
		if i == leafLines {
			fmt.Fprintf(&b, "\n(+%d more leaves; --json lists all)", len(s.leaves)-i)
			break
		}
		fmt.Fprintf(&b, "\nleaf pid=%d command=%s", l.Pid, inspectPreview(l.Command, previewChars))
	}
	for i, l := range s.leftover {
		if i == leafLines {
			fmt.Fprintf(&b, "\n(+%d more leftover leaves; --json lists all)", len(s.leftover)-i)
			break
		}
		fmt.Fprintf(&b, "\nleftover pid=%d command=%s", l.Pid, inspectPreview(l.Command, previewChars))
	}
	if len(s.leftover) > 0 {
		b.WriteString("\n(the run's supervisor is gone but these still run: the kernel kills them when it starts — pi-actors kernel start)")
	}
	return &inspectOutput{text: b.String(), details: runStatusDetails(env, s)}
}

// livePhase reports whether a progress phase belongs to a live run.
func livePhase(phase string) bool {
	switch phase {
	case "starting", "running", runs.StatusBackoff:
		return true
	}
	return false
}

// runStatusDetails is the full status: run.json's fields, the derived
// status (and reason), progress, result and the inspect findings.
func runStatusDetails(env *Env, s *runStatus) map[string]any {
	in := s.in
	d := in.FilesDir()
	out := map[string]any{}
	if b, err := json.Marshal(in.Meta); err == nil {
		// Large values (a long prompt in values, an inline script as the
		// template) are cut, each saying where the whole is.
		if bb, cut := boundObject(b, cutWhere{File: in.Dir.Path(runs.RunFile)}, []string{"values"}); cut {
			b = bb
		}
		json.Unmarshal(b, &out)
	}
	out["status"] = in.Status
	if in.Reason != "" && !in.Live() {
		out["reason"] = in.Reason
	}
	out["progress"] = boundRecord(in.Progress, cutWhere{File: d.Path(runs.ProgressFile)})
	out["result"] = boundRecord(in.Result, cutWhere{File: d.Path(runs.ResultFile)})
	if in.Handled != nil {
		out["terminal_handled"] = in.Handled
	}
	if in.Archived != nil {
		out["archived"] = in.Archived
	}
	out["state_dir"] = string(in.Dir)
	out["files_dir"] = string(d)
	out["stdoutLog"], out["stderrLog"] = d.Path(runs.StdoutLog), d.Path(runs.StderrLog)
	out["eventsFile"], out["outboxFile"], out["inboxFile"] = d.Path(runs.EventsFile), d.Path(runs.OutboxFile), d.Path(runs.InboxFile)
	if s.hasElapsed {
		out["elapsed_ms"] = s.elapsed.Milliseconds()
	}
	if !s.lastAct.IsZero() {
		out["last_activity_at"] = s.lastAct.UTC().Format(time.RFC3339Nano)
	}
	if in.Status == runs.StatusRunning {
		out["stalled"] = s.stalled
		out["stalled_after_s"] = env.inspectConfig().Runs.StalledAfterS
	}
	if s.lastLine != "" {
		out["last_output"] = map[string]any{"stream": s.stream, "line": cutLine(s.lastLine, tailLineChars)}
	}
	if in.Live() {
		leaves := s.leaves
		if leaves == nil {
			leaves = []runs.Leaf{}
		}
		out["active_leaves"] = leaves
	}
	if len(s.leftover) > 0 {
		out["leftover_leaves"] = s.leftover
	}
	if s.usage != nil {
		out["usage"] = map[string]any{"pids": s.usage.Pids, "cpu_percent": s.usage.CPUPercent, "rss_bytes": s.usage.RSSBytes,
			"cpu_basis": "sum over the process tree of each process's average CPU since it started"}
	}
	statusHealthDetails(in, out)
	out["next_actions"] = s.next
	return out
}

// formatElapsed writes a duration to the second (to the millisecond below
// one second), as time.ParseDuration reads it.
func formatElapsed(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// formatBytes writes a size in B, KiB, MiB or GiB with one decimal.
func formatBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%dB", n)
	}
	v, suffix := float64(n)/unit, "KiB"
	for _, s := range []string{"MiB", "GiB", "TiB"} {
		if v < unit {
			break
		}
		v, suffix = v/unit, s
	}
	return fmt.Sprintf("%.1f%s", v, suffix)
}

// runTailView is the last lines of stdout.log, then of stderr.log, each
// under a label (C10: the logs, not events.jsonl; see view=events);
// `logs <run>` prints the same.
func runTailView(in *runs.Info, n int) *inspectOutput {
	q := &logsQuery{lines: n, streams: []string{runs.StdoutLog, runs.StderrLog}}
	got, cut := readLogs(in, q)
	text, details := logsText(in, q, got, cut)
	return &inspectOutput{text: text, details: details}
}

// cutLine bounds one raw line, saying how much was cut.
func cutLine(s string, max int) string {
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	return string(r[:max]) + fmt.Sprintf("…[+%d chars]", len(r)-max)
}

// runEventsView is the tail of events.jsonl, one raw record per line.
func runEventsView(in *runs.Info, n int) (*inspectOutput, error) {
	path := in.FilesDir().Path(runs.EventsFile)
	lines, err := mailbox.Tail(path, n+1)
	if err != nil {
		return nil, err
	}
	earlier := len(lines) > n // one more than asked: there are earlier events
	if earlier {
		lines = lines[1:]
	}
	events := []map[string]any{}
	corrupted := 0
	var b strings.Builder
	fmt.Fprintf(&b, "run=%s status=%s events=%d", in.Meta.Run, in.Status, len(lines))
	for _, l := range lines {
		if l.Err != nil {
			corrupted++
		} else {
			events = append(events, l.Value)
		}
		b.WriteString("\n" + cutLine(string(l.Raw), tailLineChars))
	}
	if len(lines) == 0 {
		b.WriteString("\n(no run events)")
	}
	if corrupted > 0 {
		fmt.Fprintf(&b, "\ncorrupted=%d", corrupted)
	}
	// An event's large values (a command of 100 KB) are cut as the
	// message views cut them, saying where the whole is.
	bounded := boundRecords(events, func(map[string]any) cutWhere { return cutWhere{File: path} })
	details := map[string]any{"run": in.Meta.Run, "events": bounded, "corrupted": corrupted}
	if earlier {
		fmt.Fprintf(&b, "\n(earlier events: lines=%d shows more; all of them are in %s)", 2*n, path)
		details["earlier_in"] = path
	}
	return &inspectOutput{text: b.String(), details: details}, nil
}

// runMessagesView is the outbox tail, normalized: `run=<r> type=<event>
// level=<l> summary=<underscored>` per record.
func runMessagesView(in *runs.Info, n int) (*inspectOutput, error) {
	path := in.FilesDir().Path(runs.OutboxFile)
	lines, err := mailbox.Tail(path, n)
	if err != nil {
		return nil, err
	}
	index := outboxIndexes(path, lines)
	msgs := []mailbox.OutboxRecord{}
	corrupted := 0
	var out []string
	for i, l := range lines {
		rec, err := mailbox.ParseOutbox(l.Raw, in.Meta.Run, index[i])
		if err != nil {
			corrupted++
			continue
		}
		msgs = append(msgs, rec)
		out = append(out, fmt.Sprintf("run=%s type=%s level=%s summary=%s", in.Meta.Run, inspectPreview(rec.Event, previewChars), rec.Level, inspectPreview(rec.Summary, previewChars)))
	}
	if len(out) == 0 {
		out = append(out, "(no actor messages)")
	}
	if corrupted > 0 {
		out = append(out, fmt.Sprintf("corrupted=%d", corrupted))
	}
	// --json: each record bounded (boundRecord); a legacy record without
	// an id (<run>:<index>) is found by its line.
	bounded := boundRecords(msgs, func(r mailbox.OutboxRecord) cutWhere {
		if idx, ok := strings.CutPrefix(r.ID, in.Meta.Run+":"); ok {
			if n, err := strconv.Atoi(idx); err == nil && n >= 0 && r.ID == fmt.Sprintf("%s:%d", in.Meta.Run, n) {
				return cutWhere{File: path, Line: n + 1}
			}
		}
		return cutWhere{File: path, ID: r.ID}
	})
	return &inspectOutput{text: strings.Join(out, "\n"), details: map[string]any{"run": in.Meta.Run, "messages": bounded, "corrupted": corrupted}}, nil
}

// outboxIndexes is each tail line's 0-based line index in the file (blank
// lines counted, as the kernel's follow-up ids count them). It is needed
// only when a record has no id (legacy records are named <run>:<index>):
// then it counts the newlines before each line; otherwise all are 0.
func outboxIndexes(path string, lines []mailbox.Line) []int {
	needed := false
	for _, l := range lines {
		if l.Err == nil && mailbox.Record(l.Value).ID() == "" {
			needed = true
			break
		}
	}
	idx := make([]int, len(lines))
	if !needed {
		return idx
	}
	f, err := os.Open(path)
	if err != nil {
		return idx
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	var off int64
	count := 0
	for i, l := range lines {
		for off < l.Off {
			c, err := r.ReadByte()
			if err != nil {
				return idx
			}
			if c == '\n' {
				count++
			}
			off++
		}
		idx[i] = count
	}
	return idx
}

// runFilesView is `run=<r>[ artifacts=name:path,…] files=…[ next=…]`; for
// view=artifacts one line per declared artifact follows. The details hold
// the artifact manifest (with sha256 when they are shown).
func runFilesView(in *runs.Info, view string, hash bool) *inspectOutput {
	m := in.Meta
	addr := "run:" + m.Run
	files := in.Files()
	names := runs.ArtifactNames(m.Artifacts)
	var b strings.Builder
	fmt.Fprintf(&b, "run=%s", m.Run)
	if len(names) > 0 {
		parts := make([]string, len(names))
		for i, n := range names {
			parts[i] = n + ":" + runs.ArtifactPath(m.Artifacts[n])
		}
		b.WriteString(" artifacts=" + strings.Join(parts, ","))
	}
	b.WriteString(" files=" + strings.Join(files, ","))
	details := map[string]any{"run": m.Run, "status": in.Status, "state_dir": string(in.Dir), "files": files}
	if len(names) > 0 {
		next := []string{"inspect target=" + addr + " view=artifacts verbose=true", "inspect target=" + addr + " view=messages"}
		b.WriteString(inspectNext(next))
		manifest := runs.Manifest(in, hash)
		details["artifacts"] = m.Artifacts
		details["artifact_manifest"] = manifest
		details["next_actions"] = next
		if view == "artifacts" {
			for _, n := range names {
				e := manifest[n]
				fmt.Fprintf(&b, "\nartifact=%s exists=%t", n, e.Exists)
				if e.Size != nil {
					fmt.Fprintf(&b, " size=%d", *e.Size)
				}
				if e.Kind != "" {
					b.WriteString(" kind=" + inspectPreview(e.Kind, previewChars))
				}
				if e.MediaType != "" {
					b.WriteString(" media_type=" + inspectPreview(e.MediaType, previewChars))
				}
				if e.Required {
					b.WriteString(" required=true")
				}
				if e.SHA256 != "" {
					b.WriteString(" sha256=" + e.SHA256)
				}
				b.WriteString(" path=" + e.Path)
			}
		}
	} else if view == "artifacts" {
		b.WriteString("\n(no declared artifacts)")
	}
	return &inspectOutput{text: b.String(), details: details}
}

// runMailboxView is `run=<r> accepts=… emits=…`, then the run inbox tail:
// `id= status= type= from= to=[ queued_at=][ sent_at=][ claimed_at=]
// [ handled_at=][ failed_at=]`, and `corrupted=N` when lines are malformed.
func runMailboxView(in *runs.Info, n int) (*inspectOutput, error) {
	path := in.FilesDir().Path(runs.InboxFile)
	recs, corrupted, err := mailbox.NewInbox(path).List(n)
	if err != nil {
		return nil, err
	}
	total, err := mailbox.CountLines(path) // a record per line
	if err != nil {
		return nil, err
	}
	accepts, emits := mailboxTypes(in.Meta.Mailbox, "accepts"), mailboxTypes(in.Meta.Mailbox, "emits")
	lines := []string{fmt.Sprintf("run=%s accepts=%s emits=%s", in.Meta.Run, strings.Join(accepts, ","), strings.Join(emits, ","))}
	for _, rec := range recs {
		lines = append(lines, inboxLine(rec))
	}
	if len(recs) == 0 {
		lines = append(lines, "(no run inbox messages)")
	}
	if corrupted > 0 {
		lines = append(lines, fmt.Sprintf("corrupted=%d", corrupted))
	}
	if recs == nil {
		recs = []mailbox.Record{}
	}
	return &inspectOutput{text: rooms.JoinWithMore(lines, len(recs)+corrupted, total, path), details: map[string]any{
		"run": in.Meta.Run, "mailbox": in.Meta.Mailbox,
		"normalized_mailbox": map[string]any{"accepts": nonNil(accepts), "emits": nonNil(emits)},
		"messages":           boundRecords(recs, func(r mailbox.Record) cutWhere { return cutWhere{File: path, ID: r.ID()} }),
		"corrupted":          corrupted, "total": total, "file": path,
	}}, nil
}

// mailboxTypes lists the message types of run.json's mailbox.accepts or
// .emits (entries are {type, …} objects or bare strings).
func mailboxTypes(mb any, key string) []string {
	m, _ := mb.(map[string]any)
	list, _ := m[key].([]any)
	var out []string
	for _, e := range list {
		var t string
		switch x := e.(type) {
		case string:
			t = x
		case map[string]any:
			t, _ = x["type"].(string)
		}
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, inspectPreview(t, previewChars))
		}
	}
	return out
}

// inboxLine renders one inbox record.
func inboxLine(rec mailbox.Record) string {
	field := func(k string) string {
		s, _ := rec[k].(string)
		return inspectPreview(s, previewChars)
	}
	line := fmt.Sprintf("id=%s status=%s type=%s from=%s to=%s", inspectPreview(rec.ID(), previewChars), rec.Status(), inspectPreview(rec.Type(), previewChars), field("from"), field("to"))
	for _, k := range []string{"queued_at", "sent_at", "claimed_at", "handled_at", "failed_at"} {
		if v := field(k); v != "" {
			line += " " + k + "=" + v
		}
	}
	return line
}
