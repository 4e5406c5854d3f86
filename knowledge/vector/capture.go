package vector

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/api/vectorop"
	"github.com/pi-actors/pi-actors/knowledge/store"
)

// Capture bounds: what one history node keeps of a run or a message.
const (
	captureLines    = 40   // last output lines
	captureLineLen  = 240  // characters per output line
	captureTemplate = 600  // characters of the template summary
	captureText     = 4096 // bytes of a message's text or a follow-up summary
	captureArtifact = 50   // artifacts linked per run
)

// RunRecord is what the kernel knows about a run that reached a terminal
// status, read from its state files.
type RunRecord struct {
	RunID      string
	Recipe     string // recipe name; "" for an inline command
	Template   string // a summary of the command template
	Status     string // the terminal status (exited, failed, stopped, …)
	ExitCode   *int
	StartedAt  time.Time
	EndedAt    time.Time
	Duration   time.Duration // 0: EndedAt - StartedAt
	Artifacts  []string      // files the run produced (absolute, or relative to Cwd)
	LastOutput []string      // the last lines of its output
	FollowUp   string        // the follow-up summary
	Session    string
	Cwd        string
	// Resumes counts the times the run was started again on its state
	// directory (a restart of an ended run): each is a run instance of
	// its own, with the same StartedAt.
	Resumes int
}

// MessageRecord is a message worth remembering: a task.result, or an
// outbox decision.
type MessageRecord struct {
	ID      string // the message id (captures are idempotent by it)
	RunID   string // the run it belongs to
	Type    string // task.result, or the outbox record's kind (decision, …)
	From    string
	To      string
	Text    string // the body as text
	At      time.Time
	Session string
}

// runKey is a run node's natural key: run id plus start time, so a
// capture is idempotent and a run id reused after a restart is a new
// node.
func runKey(r *RunRecord) string {
	key := "run:" + r.RunID + "@" + r.StartedAt.UTC().Format(time.RFC3339Nano)
	if r.Resumes > 0 {
		key += fmt.Sprintf("#r%d", r.Resumes)
	}
	return key
}

// CaptureRun records a run's terminal transition as a history outcome
// node (trust 80, verified: it comes from the supervisor's state files)
// with edges produced_by → its recipe's workflow node (created on first
// use) and created → a code file node per artifact (an existing node of
// that path, else a placeholder that a later ingest supersedes); an
// earlier run with the same id gets followed_by → this one, and messages
// already captured for the run get produced_by → it. A run already
// captured (same id and start time) is left as is. One transaction, no
// network (a non-local embedder embeds in the background).
func (s *Store) CaptureRun(ctx context.Context, r RunRecord) error {
	if r.RunID == "" {
		return op.Invalid("runId", "a run record needs a run id")
	}
	key := runKey(&r)
	if id, _, err := liveByKey(ctx, s.r, key); err != nil || id != "" {
		return err
	}
	run := runNode(&r, key)
	nodes := []*nodeIn{run}
	var recipe *nodeIn
	if r.Recipe != "" {
		recipe = &nodeIn{key: "recipe:" + r.Recipe, domain: vectorop.DomainHistory, typ: "workflow", name: "recipe " + r.Recipe,
			content: "recipe " + r.Recipe + "\n" + clipRunes(r.Template, captureTemplate), trust: vectorop.TrustRecent,
			verified: true, source: vectorop.SourceHistory, ref: "recipe:" + r.Recipe}
		nodes = append(nodes, recipe)
	}
	arts := artifactNodes(&r)
	nodes = append(nodes, arts...)
	s.embedNodes(nodes)
	_, err := s.writeGraph(ctx, func(tx *vtx) (any, error) {
		if id, _, err := liveByKey(ctx, tx, key); err != nil || id != "" {
			return nil, err // captured meanwhile
		}
		now := store.Now()
		prev, err := queryRefs(ctx, tx, `SELECT `+refCols+` FROM vg_nodes n WHERE n.run_id = ? AND n.run_id != '' AND n.type = 'outcome' ORDER BY n.seq`, r.RunID)
		if err != nil {
			return nil, err
		}
		if err := tx.insertNode(ctx, run, now); err != nil {
			return nil, err
		}
		for _, p := range prev {
			if err := tx.addEdge(ctx, p.ID, "followed_by", run.id, now); err != nil {
				return nil, err
			}
		}
		if recipe != nil {
			if err := tx.linkOrInsert(ctx, recipe, run.id, "produced_by", false, now); err != nil {
				return nil, err
			}
		}
		for _, a := range arts {
			if err := tx.linkOrInsert(ctx, a, run.id, "created", false, now); err != nil {
				return nil, err
			}
		}
		_, err = tx.ExecContext(ctx, `INSERT OR IGNORE INTO vg_edges(source_id, type, target_id, created_at)
			SELECT id, 'produced_by', ?, ? FROM vg_nodes WHERE run_id = ? AND run_id != '' AND key LIKE 'msg:%'`, run.id, now, r.RunID)
		if err != nil {
			return nil, fmt.Errorf("link messages of run %s: %w", r.RunID, err)
		}
		return nil, nil
	})
	if err != nil {
		return fmt.Errorf("capture run %s: %w", r.RunID, err)
	}
	return nil
}

// linkOrInsert makes sure the node with n's key exists (inserting n when
// it does not) and adds from --typ--> it; reverse turns the edge around.
func (tx *vtx) linkOrInsert(ctx context.Context, n *nodeIn, from, typ string, reverse bool, now string) error {
	id, _, err := liveByKey(ctx, tx, n.key)
	if err != nil {
		return err
	}
	if id == "" {
		if err := tx.insertNode(ctx, n, now); err != nil {
			return err
		}
		id = n.id
	}
	if reverse {
		return tx.addEdge(ctx, id, typ, from, now)
	}
	return tx.addEdge(ctx, from, typ, id, now)
}

func runNode(r *RunRecord, key string) *nodeIn {
	d := r.Duration
	if d == 0 && !r.EndedAt.IsZero() && !r.StartedAt.IsZero() {
		d = r.EndedAt.Sub(r.StartedAt)
	}
	what := r.Recipe
	if what == "" {
		what = clipRunes(strings.Join(strings.Fields(r.Template), " "), 80)
	}
	exit := "none"
	if r.ExitCode != nil {
		exit = fmt.Sprint(*r.ExitCode)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "run %s of %s: %s, exit %s, took %s\n", r.RunID, orDashText(what), r.Status, exit, d.Round(time.Millisecond))
	if r.Template != "" {
		fmt.Fprintf(&b, "template: %s\n", clipRunes(r.Template, captureTemplate))
	}
	if r.Cwd != "" {
		fmt.Fprintf(&b, "cwd: %s\n", r.Cwd)
	}
	if len(r.Artifacts) > 0 {
		fmt.Fprintf(&b, "artifacts: %s\n", strings.Join(r.Artifacts[:min(len(r.Artifacts), captureArtifact)], ", "))
	}
	if r.FollowUp != "" {
		fmt.Fprintf(&b, "follow-up: %s\n", clipBytes(r.FollowUp, captureText))
	}
	if lines := r.LastOutput[max(0, len(r.LastOutput)-captureLines):]; len(lines) > 0 {
		b.WriteString("last output:\n")
		for _, l := range lines {
			b.WriteString(clipRunes(l, captureLineLen))
			b.WriteByte('\n')
		}
	}
	meta := map[string]any{"runId": r.RunID, "status": r.Status, "durationMs": d.Milliseconds(),
		"startedAt": r.StartedAt.UTC().Format(store.TimeLayout)}
	for k, v := range map[string]string{"recipe": r.Recipe, "session": r.Session, "cwd": r.Cwd} {
		if v != "" {
			meta[k] = v
		}
	}
	if r.ExitCode != nil {
		meta["exitCode"] = *r.ExitCode
	}
	if !r.EndedAt.IsZero() {
		meta["endedAt"] = r.EndedAt.UTC().Format(store.TimeLayout)
	}
	return &nodeIn{key: key, domain: vectorop.DomainHistory, typ: "outcome", name: fmt.Sprintf("run %s %s %s (exit %s)", r.RunID, what, r.Status, exit),
		runID: r.RunID, content: strings.TrimSpace(b.String()), meta: meta, trust: vectorop.TrustRecent, verified: true,
		source: vectorop.SourceHistory, ref: "run:" + r.RunID, task: "run:" + r.RunID}
}

// artifactNodes are the placeholder file nodes of a run's artifacts.
func artifactNodes(r *RunRecord) []*nodeIn {
	var out []*nodeIn
	seen := map[string]bool{}
	for _, a := range r.Artifacts[:min(len(r.Artifacts), captureArtifact)] {
		p := a
		if !filepath.IsAbs(p) && r.Cwd != "" {
			p = filepath.Join(r.Cwd, p)
		}
		p = filepath.Clean(p)
		if seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, &nodeIn{key: "file:" + p, domain: vectorop.DomainCode, typ: "file", name: filepath.Base(p), path: p,
			content: "artifact of run " + r.RunID + ": " + p, trust: vectorop.TrustRecent, source: vectorop.SourceHistory,
			ref: "run:" + r.RunID, task: "run:" + r.RunID})
	}
	return out
}

// CaptureMessage records a task.result message or an outbox decision as a
// history node (entry, or decision for outbox decisions; trust 20,
// unverified: it is an agent's statement) linked produced_by → its run's
// captured node when there is one (CaptureRun links it otherwise).
// Idempotent by message id.
func (s *Store) CaptureMessage(ctx context.Context, m MessageRecord) error {
	if m.ID == "" {
		return op.Invalid("id", "a message record needs a message id")
	}
	key := "msg:" + m.ID
	if id, _, err := liveByKey(ctx, s.r, key); err != nil || id != "" {
		return err
	}
	typ := "entry"
	if strings.Contains(m.Type, "decision") {
		typ = "decision"
	}
	first, _, _ := strings.Cut(strings.TrimSpace(m.Text), "\n")
	text := clipBytes(m.Text, captureText)
	n := &nodeIn{key: key, domain: vectorop.DomainHistory, typ: typ, runID: m.RunID,
		name:    clipRunes(fmt.Sprintf("%s from %s: %s", m.Type, orDashText(m.From), first), 200),
		content: fmt.Sprintf("%s from %s to %s (run %s)\n%s", m.Type, orDashText(m.From), orDashText(m.To), orDashText(m.RunID), text),
		meta:    map[string]any{"messageId": m.ID, "type": m.Type, "from": m.From, "to": m.To, "runId": m.RunID},
		trust:   vectorop.TrustModel, source: vectorop.SourceModel, ref: key}
	if m.RunID != "" {
		n.task = "run:" + m.RunID
	}
	s.embedNodes([]*nodeIn{n})
	_, err := s.writeGraph(ctx, func(tx *vtx) (any, error) {
		if id, _, err := liveByKey(ctx, tx, key); err != nil || id != "" {
			return nil, err
		}
		now := store.Now()
		if err := tx.insertNode(ctx, n, now); err != nil {
			return nil, err
		}
		if m.RunID == "" {
			return nil, nil
		}
		_, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO vg_edges(source_id, type, target_id, created_at)
			SELECT ?, 'produced_by', id, ? FROM vg_nodes WHERE run_id = ? AND run_id != '' AND type = 'outcome' AND superseded_by IS NULL`,
			n.id, now, m.RunID)
		if err != nil {
			return nil, fmt.Errorf("link message %s to run %s: %w", m.ID, m.RunID, err)
		}
		return nil, nil
	})
	if err != nil {
		return fmt.Errorf("capture message %s: %w", m.ID, err)
	}
	return nil
}

func orDashText(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// clipBytes shortens s to at most n bytes on a rune boundary, marking the
// cut with "…".
func clipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && s[i]&0xc0 == 0x80 {
		i--
	}
	return s[:i] + "…"
}
