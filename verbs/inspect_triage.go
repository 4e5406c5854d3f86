package verbs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"github.com/pi-actors/pi-actors/internal/config"
	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/recipes"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// tool:pi-actors is the runtime itself: view=status says which binary and
// kernel answer, view=triage gathers what needs attention across runs and
// recipes. Both are read-only: triage repairs nothing, and neither starts
// the kernel.

// Bounds of triage.
const (
	staleClaimAge     = 5 * time.Minute
	staleClaimLines   = 200 // inbox lines read per run
	attentionLines    = 80  // outbox lines read per run
	attentionKeep     = 10
	failedRunsKeep    = 5
	triageNextMax     = 5
	triageDetailLines = 5 // detail lines per finding kind
)

// packagedRecipeRoot names the packaged library: it is embedded in the
// binary (recipe paths read pkg:<file>).
const packagedRecipeRoot = "pkg: (embedded)"

// inspectPiActors answers target=tool:pi-actors.
func inspectPiActors(_ context.Context, env *Env, q *inspectQuery) (*inspectOutput, error) {
	rt := runtimeInfo(env)
	if q.view == "triage" {
		return triage(env, rt)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "pi-actors version=%s mode=%s path=%s", rt.Version, rt.Mode, rt.Path)
	if rt.Kernel.Running {
		fmt.Fprintf(&b, " kernel=running kernel_pid=%d", rt.Kernel.Pid)
	} else {
		b.WriteString(" kernel=stopped")
	}
	fmt.Fprintf(&b, " agent=%s recipe_root=%s packaged_recipes=embedded", rt.AgentRoot, rt.RecipeRoot)
	return &inspectOutput{text: b.String(), details: rt}, nil
}

// runtimeStatus is view=status's details.
type runtimeStatus struct {
	Version      string       `json:"version"`
	Mode         string       `json:"mode"`
	Path         string       `json:"path"`
	Go           string       `json:"go"`
	Commit       string       `json:"git_commit,omitempty"`
	Kernel       kernelStatus `json:"kernel"`
	AgentRoot    string       `json:"agent_root"`
	ConfigFile   string       `json:"config_file"`
	RecipeRoot   string       `json:"recipe_root"`
	PackagedRoot string       `json:"packaged_recipe_root"`
}

// kernelStatus is what kernel.json says, checked against the process.
type kernelStatus struct {
	Running   bool      `json:"running"`
	Pid       int       `json:"pid,omitempty"`
	Socket    string    `json:"socket,omitempty"`
	StartedAt time.Time `json:"started_at,omitzero"`
	Version   string    `json:"version,omitempty"`
}

func runtimeInfo(env *Env) *runtimeStatus {
	rt := &runtimeStatus{Version: env.Version, Mode: "binary", Go: runtime.Version(), AgentRoot: env.AgentDir,
		ConfigFile: filepath.Join(env.AgentDir, config.FileName), RecipeRoot: recipes.UserRoot(env.AgentDir), PackagedRoot: packagedRecipeRoot}
	if exe, err := os.Executable(); err == nil {
		rt.Path = exe
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				rt.Commit = s.Value[:12]
			}
		}
	}
	var info wire.Info
	if runs.Dir(wire.TmpDir(env.AgentDir)).ReadJSON("kernel.json", &info) == nil && runs.Alive(info.Pid, info.PidStart) {
		rt.Kernel = kernelStatus{Running: true, Pid: info.Pid, Socket: info.Socket, StartedAt: info.StartedAt, Version: info.Version}
	}
	return rt
}

// triageRun names a run in triage findings.
type triageRun struct {
	Run     string `json:"run"`
	OwnerID string `json:"ownerId,omitempty"`
	Recipe  string `json:"recipe,omitempty"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
}

// staleClaim is an inbox record claimed long ago and never finished.
type staleClaim struct {
	Run       string `json:"run"`
	ID        string `json:"id"`
	ClaimedAt string `json:"claimed_at"`
	ClaimedBy string `json:"claimed_by,omitempty"`
	Type      string `json:"type,omitempty"`
}

// attentionMessage is an outbox record that asks for a response.
type attentionMessage struct {
	Run     string `json:"run"`
	ID      string `json:"id"`
	Event   string `json:"event"`
	Level   string `json:"level"`
	Summary string `json:"summary"`
	From    string `json:"from,omitempty"`
	To      string `json:"to,omitempty"`
	TS      string `json:"ts"`
}

type highRisk struct {
	ID         string   `json:"id"`
	Path       string   `json:"path"`
	RiskLabels []string `json:"risk_labels"`
}

// triageReport is view=triage's details.
type triageReport struct {
	Runtime          *runtimeStatus           `json:"runtime"`
	CurrentSession   string                   `json:"current_session"`
	ActiveRuns       []triageRun              `json:"active_runs"`
	OtherSessionRuns int                      `json:"other_session_runs"`
	InvalidRecipes   []recipes.SummaryInvalid `json:"invalid_recipes"`
	BlockingRecipes  []recipes.Remediation    `json:"blocking_recipes"`
	HighRiskRecipes  []highRisk               `json:"high_risk_recipes"`
	DraftRecipes     []*recipes.Draft         `json:"draft_recipes"`
	StaleClaims      []staleClaim             `json:"stale_claims"`
	FailedRuns       int                      `json:"failed_runs"`
	RecentFailedRuns []triageRun              `json:"recent_failed_runs"`
	Attention        []attentionMessage       `json:"attention_messages"`
	NextActions      []string                 `json:"next_actions"`
}

// triage gathers, for the runs the session may see (its own and unowned
// ones; every run without a session), the live runs, failed runs, stale
// inbox claims and messages that ask for a response, and the recipe
// problems of the discovery summary.
func triage(env *Env, rt *runtimeStatus) (*inspectOutput, error) {
	session := strings.TrimSpace(env.Session)
	t := &triageReport{Runtime: rt, CurrentSession: session, ActiveRuns: []triageRun{}, InvalidRecipes: []recipes.SummaryInvalid{},
		BlockingRecipes: []recipes.Remediation{}, HighRiskRecipes: []highRisk{}, DraftRecipes: []*recipes.Draft{},
		StaleClaims: []staleClaim{}, RecentFailedRuns: []triageRun{}, Attention: []attentionMessage{}}
	list, err := env.runIndex().List("all")
	if err != nil {
		return nil, err
	}
	list = orderRuns(list)
	now := time.Now()
	for _, in := range list {
		owner := in.Meta.OwnerID
		if session != "" && owner != "" && owner != session {
			t.OtherSessionRuns++
			continue
		}
		tr := triageRun{Run: in.Meta.Run, OwnerID: owner, Recipe: in.Meta.Recipe, Status: in.Status, Reason: in.Reason}
		switch {
		case in.Live():
			t.ActiveRuns = append(t.ActiveRuns, tr)
		case in.Status == runs.StatusFailed || in.Status == runs.StatusExited:
			t.FailedRuns++
			if len(t.RecentFailedRuns) < failedRunsKeep {
				t.RecentFailedRuns = append(t.RecentFailedRuns, tr)
			}
		}
		d := in.FilesDir()
		t.StaleClaims = append(t.StaleClaims, staleClaims(in.Meta.Run, d, now)...)
		t.Attention = append(t.Attention, attentionMessages(in.Meta.Run, d)...)
	}
	sort.SliceStable(t.Attention, func(i, j int) bool { return t.Attention[i].TS < t.Attention[j].TS })
	if len(t.Attention) > attentionKeep {
		t.Attention = t.Attention[len(t.Attention)-attentionKeep:]
	}
	if g, err := recipes.Discover(env.AgentDir); err == nil {
		s := recipes.Summarize(g, env.resolver())
		t.InvalidRecipes = append(t.InvalidRecipes, s.Invalid...)
		for _, rem := range s.Remediations {
			if strings.HasPrefix(rem.Kind, "blocking_") {
				t.BlockingRecipes = append(t.BlockingRecipes, rem)
			}
		}
		for _, e := range s.Active {
			if !e.Tool || recipes.IsPackaged(e.Path) {
				continue
			}
			for _, l := range e.RiskLabels {
				if l != "risk.long_running" {
					t.HighRiskRecipes = append(t.HighRiskRecipes, highRisk{ID: e.ID, Path: e.Path, RiskLabels: e.RiskLabels})
					break
				}
			}
		}
		t.DraftRecipes = append(t.DraftRecipes, s.Drafts...)
	}
	t.NextActions = triageNext(t)
	return &inspectOutput{text: triageText(t), details: t}, nil
}

// staleClaims lists the records among the last inbox lines of a run that
// were claimed more than staleClaimAge ago and are still claimed.
func staleClaims(run string, d runs.Dir, now time.Time) []staleClaim {
	path := d.Path(runs.InboxFile)
	if st, err := os.Stat(path); err != nil || st.Size() == 0 {
		return nil
	}
	recs, _, err := mailbox.NewInbox(path).List(staleClaimLines)
	if err != nil {
		return nil
	}
	var out []staleClaim
	for _, rec := range recs {
		if rec.Status() != mailbox.StatusClaimed {
			continue
		}
		at, _ := rec["claimed_at"].(string)
		ts, err := time.Parse(time.RFC3339Nano, at)
		if err != nil || now.Sub(ts) <= staleClaimAge {
			continue
		}
		by, _ := rec["claimed_by"].(string)
		out = append(out, staleClaim{Run: run, ID: rec.ID(), ClaimedAt: at, ClaimedBy: by, Type: rec.Type()})
	}
	return out
}

// attentionMessages lists the outbox records among a run's last lines
// whose metadata.requires_response is true.
func attentionMessages(run string, d runs.Dir) []attentionMessage {
	path := d.Path(runs.OutboxFile)
	if st, err := os.Stat(path); err != nil || st.Size() == 0 {
		return nil
	}
	lines, err := mailbox.Tail(path, attentionLines)
	if err != nil {
		return nil
	}
	var out []attentionMessage
	var index []int // counted once, when a record needs it
	for i, l := range lines {
		if l.Err != nil || !strings.Contains(string(l.Raw), "requires_response") {
			continue
		}
		if index == nil {
			index = outboxIndexes(path, lines)
		}
		rec, err := mailbox.ParseOutbox(l.Raw, run, index[i])
		if err != nil || rec.Metadata["requires_response"] != true {
			continue
		}
		out = append(out, attentionMessage{Run: run, ID: rec.ID, Event: rec.Event, Level: rec.Level, Summary: rec.Summary, From: rec.From, To: rec.To, TS: rec.TS})
	}
	return out
}

// triageNext picks at most five next actions, most useful first.
func triageNext(t *triageReport) []string {
	var next []string
	if len(t.InvalidRecipes) > 0 || len(t.BlockingRecipes) > 0 || len(t.HighRiskRecipes) > 0 {
		next = append(next, "inspect target=recipes view=doctor")
	}
	if len(t.DraftRecipes) > 0 {
		next = append(next, "inspect target=recipes view=summary verbose=true")
	}
	if len(t.RecentFailedRuns) > 0 {
		next = append(next, "inspect target=run:"+t.RecentFailedRuns[0].Run+" view=tail lines=80")
	}
	if len(t.Attention) > 0 {
		next = append(next, "inspect target=run:"+t.Attention[len(t.Attention)-1].Run+" view=messages")
	}
	if len(t.StaleClaims) > 0 {
		next = append(next, "inspect target=run:"+t.StaleClaims[0].Run+" view=mailbox")
	}
	if len(t.ActiveRuns) > 0 {
		next = append(next, "inspect target=session:all view=runs status=active")
	}
	if len(next) > triageNextMax {
		next = next[:triageNextMax]
	}
	return next
}

// triageText is the counts line, then a few lines per finding.
func triageText(t *triageReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "triage version=%s mode=%s active_runs=%d other_runs=%d invalid_recipes=%d blocking_recipes=%d high_risk_recipes=%d drafts=%d stale_claims=%d failed_runs=%d attention=%d%s",
		t.Runtime.Version, t.Runtime.Mode, len(t.ActiveRuns), t.OtherSessionRuns, len(t.InvalidRecipes), len(t.BlockingRecipes),
		len(t.HighRiskRecipes), len(t.DraftRecipes), len(t.StaleClaims), t.FailedRuns, len(t.Attention), inspectNext(t.NextActions))
	section := func(n int, line func(i int) string) {
		for i := 0; i < n; i++ {
			if i == triageDetailLines {
				fmt.Fprintf(&b, "\n(+%d more; --json lists all)", n-i)
				return
			}
			b.WriteString("\n" + line(i))
		}
	}
	section(len(t.ActiveRuns), func(i int) string {
		e := t.ActiveRuns[i]
		return "active run=" + e.Run + " status=" + e.Status + optKV("recipe", e.Recipe)
	})
	section(len(t.RecentFailedRuns), func(i int) string {
		e := t.RecentFailedRuns[i]
		return "failed run=" + e.Run + " status=" + e.Status + optKV("reason", e.Reason) + optKV("recipe", e.Recipe)
	})
	section(len(t.StaleClaims), func(i int) string {
		e := t.StaleClaims[i]
		return "stale_claim run=" + e.Run + " id=" + e.ID + optKV("type", e.Type) + optKV("claimed_by", e.ClaimedBy) + " claimed_at=" + e.ClaimedAt
	})
	section(len(t.Attention), func(i int) string {
		e := t.Attention[len(t.Attention)-1-i]
		return "attention run=" + e.Run + " type=" + inspectPreview(e.Event, previewChars) + " level=" + e.Level + " summary=" + inspectPreview(e.Summary, previewChars)
	})
	section(len(t.InvalidRecipes), func(i int) string {
		e := t.InvalidRecipes[i]
		return "invalid_recipe id=" + e.ID + " path=" + e.Path
	})
	section(len(t.BlockingRecipes), func(i int) string {
		e := t.BlockingRecipes[i]
		return "blocking_recipe id=" + e.ID + " kind=" + e.Kind + " path=" + e.Path
	})
	section(len(t.HighRiskRecipes), func(i int) string {
		e := t.HighRiskRecipes[i]
		return "high_risk_recipe id=" + e.ID + " risks=" + strings.Join(e.RiskLabels, ",") + " path=" + e.Path
	})
	section(len(t.DraftRecipes), func(i int) string {
		e := t.DraftRecipes[i]
		return "draft id=" + e.ID + " path=" + e.Path
	})
	return b.String()
}

// optKV is " k=<preview>" or "" for an empty value.
func optKV(k, v string) string {
	if v == "" {
		return ""
	}
	return " " + k + "=" + inspectPreview(v, previewChars)
}
