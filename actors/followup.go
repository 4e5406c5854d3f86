package actors

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/recipes"
	"github.com/pi-actors/pi-actors/recipes/template"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/sessions"
	"github.com/pi-actors/pi-actors/verbs"
)

// Followup is one item of a coordinator session's queue (the verb
// layer's type: watch and inspect view=followups return it).
type Followup = verbs.Followup

// sessionFile is the durable follow-up queue of a session.
func (k *Kernel) sessionFile(session string) string {
	return filepath.Join(k.tmp, "sessions", sessions.Name(session)+sessions.QueueSuffix)
}

var tokenRe = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// enqueue appends a follow-up to the session's durable queue (idempotent
// by id, so a retry after a crash does not duplicate it), then wakes the
// session's watchers.
func (k *Kernel) enqueue(session string, f Followup) {
	q := mailbox.NewInbox(k.sessionFile(session))
	// The follow-up travels as the record's body: the queue's own fields
	// (status, claimed_at…) never mix with the follow-up's.
	rec := map[string]any{"id": f.ID, "type": "run.followup", "body": f}
	if _, dup, err := q.Append(rec); err != nil {
		k.log.Warn("queue follow-up", "session", session, "err", err)
		return
	} else if dup {
		return
	}
	k.queued(session)
}

// queued wakes whoever delivers a session's newly queued follow-ups: the
// cluster side when the session's coordinator is on another node, else
// the session's watchers here.
func (k *Kernel) queued(session string) {
	if home, _ := k.SessionHome(session); k.cluster != nil && home != "" {
		k.cluster.Pending(session)
		return
	}
	k.system.Root.Send(k.sess, &notifySession{session: session})
}

func runFiles(dir runs.Dir) []string {
	return []string{dir.Path(runs.StdoutLog), dir.Path(runs.StderrLog), dir.Path(runs.ResultFile), dir.Path(runs.EventsFile), dir.Path(runs.OutboxFile)}
}

// terminalFollowup describes a terminal transition.
func terminalFollowup(agentDir string, in *runs.Info) Followup {
	m := in.Meta
	id := fmt.Sprintf("%s.%d.%s", m.Run, m.CreatedAt.UnixNano(), in.Status)
	if m.Resumes > 0 {
		id += fmt.Sprintf(".r%d", m.Resumes) // a resumed run ends anew
	}
	f := Followup{
		ID:   id,
		Kind: "transition", Run: m.Run, Address: m.Address, Status: in.Status, Reason: in.Reason,
		Delivery: "followup", Event: "run." + in.Status, StateDir: string(in.Dir), RunFiles: runFiles(in.Dir), TS: time.Now().UTC(),
	}
	if in.Result != nil {
		code := in.Result.Code
		f.Code = &code
	}
	if len(m.Artifacts) > 0 {
		f.Artifacts = m.Artifacts
	}
	var lines []string
	switch in.Status {
	case runs.StatusDone:
		f.Level = "info"
		f.Summary = fmt.Sprintf("run:%s completed successfully", m.Run)
	case runs.StatusFailed:
		f.Level = "error"
		f.Summary = fmt.Sprintf("run:%s failed", m.Run)
		if f.Code != nil {
			f.Summary += fmt.Sprintf(" (exit %d)", *f.Code)
		}
		if in.Reason != "" {
			f.Summary += " reason=" + in.Reason
		}
		if in.Result != nil && in.Result.Error != "" {
			lines = append(lines, "Error: "+previewEnds(in.Result.Error, 800))
		}
	case runs.StatusKilled:
		f.Level = "warning"
		f.Summary = fmt.Sprintf("run:%s was killed", m.Run)
	default:
		f.Level = "warning"
		f.Summary = fmt.Sprintf("run:%s exited without a result (%s)", m.Run, in.Reason)
	}
	view := "tail"
	if in.Status == runs.StatusDone && len(m.Artifacts) > 0 {
		view = "artifacts"
	}
	f.NextActions = []string{
		"inspect target=run:" + m.Run + " view=status",
		"inspect target=run:" + m.Run + " view=" + view,
		"inspect target=run:" + m.Run + " view=messages",
	}
	if len(m.Artifacts) > 0 {
		lines = append(lines, "Artifacts: "+artifactList(m.Artifacts))
	}
	if m.Workflow != nil {
		if line := workflowSummary(in); line != "" {
			lines = append(lines, line)
		}
	}
	lines = append(lines, "Run files: "+string(in.Dir)+"/{stdout.log, stderr.log, result.json, events.jsonl, outbox.jsonl}")
	lines = append(lines, "Next: "+strings.Join(f.NextActions, " | "))
	if note := persistenceNote(agentDir, in); note != "" {
		lines = append(lines, note)
	}
	f.Text = f.Summary + ".\n" + strings.Join(lines, "\n")
	return f
}

// persistenceNote suggests keeping a successful ad hoc or inline run as a
// recipe — only a suggestion: the operator decides.
func persistenceNote(agentDir string, in *runs.Info) string {
	m := in.Meta
	if in.Status != runs.StatusDone {
		return ""
	}
	user := recipes.UserRoot(agentDir) + string(filepath.Separator)
	switch {
	case m.Workflow != nil && m.RecipeFile == "":
		return "Agent note: this workflow was given inline and succeeded. If it recurs, ask the operator before saving it as a recipe (a file <agent>/recipes/<name>.json holding {\"workflow\": …}); do not save it unasked."
	case m.RecipeFile != "" && !strings.HasPrefix(m.RecipeFile, user) && !recipes.IsPackaged(m.RecipeFile):
		return fmt.Sprintf("Agent note: this run succeeded from recipe %s. If it fits a recurring workflow on this machine, ask the operator before copying or registering it under ~/.pi/agent/recipes; do not save it unasked.", m.RecipeFile)
	case m.RecipeFile == "" && m.LaunchSource == "spawn":
		return "Agent note: this run was spawned from an inline template and succeeded. If the pattern recurs, ask the operator before saving it as a recipe (register_tool, or promote its draft); do not save it unasked."
	}
	return ""
}

func artifactList(arts map[string]any) string {
	names := make([]string, 0, len(arts))
	for k := range arts {
		names = append(names, k)
	}
	sort.Strings(names)
	var items []string
	for _, n := range names {
		p := arts[n]
		if m, ok := p.(map[string]any); ok {
			p = m["path"]
		}
		items = append(items, fmt.Sprintf("%s=%v", n, p))
	}
	return shortList(items, 8)
}

// outboxFollowup turns an outbox record into a follow-up.
func outboxFollowup(m *runs.Meta, rec mailbox.OutboxRecord, line int) Followup {
	// Ids are queue tokens, unique per run instance: its outbox line, or
	// the record's own id (a caller's id is unique in its run's outbox
	// only: two runs may use the same one) — hashed when it is no token.
	id := fmt.Sprintf("%s.%d.outbox.%d", m.Run, m.CreatedAt.UnixNano(), line)
	if rec.ID != "" && rec.ID != fmt.Sprintf("%s:%d", m.Run, line) {
		id = fmt.Sprintf("%s.%d.%s", m.Run, m.CreatedAt.UnixNano(), rec.ID)
		if !tokenRe.MatchString(id) {
			sum := sha256.Sum256([]byte(m.Run + "\x00" + m.CreatedAt.String() + "\x00" + rec.ID))
			id = "o-" + hex.EncodeToString(sum[:12])
		}
	}
	f := Followup{ID: id, Kind: "message", Run: m.Run, Address: m.Address, Level: rec.Level, Delivery: rec.Delivery,
		Event: rec.Event, Summary: rec.Summary, StateDir: m.StateDir, TS: time.Now().UTC()}
	text := fmt.Sprintf("run:%s: %s", m.Run, rec.Summary)
	if rec.Event != "command.done" && rec.Body != nil {
		f.Body = rec.Body
		body := template.CompactJSON(rec.Body)
		text += "\nBody: " + preview(body, followupBodyChars)
		if n := utf8.RuneCountInString(body); n > followupBodyChars {
			// The rest is in the run's outbox (and the follow-up's body).
			text += fmt.Sprintf(" [%d chars; whole: inspect target=run:%s view=messages --json, or %s id=%s]", n, m.Run, runs.Dir(m.StateDir).Path(runs.OutboxFile), rec.ID)
		}
	}
	f.Text = text
	f.NextActions = []string{"inspect target=run:" + m.Run + " view=messages"}
	return f
}

// followupBodyChars bounds the body a message follow-up's text shows.
const followupBodyChars = 500

// previewEnds is s cut to n runes keeping both ends (a failure's
// command first, the end of its stderr — the cause — last).
func previewEnds(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	head := n / 4
	return string(r[:head]) + " … " + string(r[len(r)-(n-head-3):])
}

func preview(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
