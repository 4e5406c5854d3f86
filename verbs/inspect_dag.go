package verbs

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/workflows"
)

// DagView is inspect view=dag of a workflow run: workflow.json (every
// node's status, attempts, exit code, times, run and output file) with the
// run's own status and where the file is.
type DagView struct {
	RunStatus string `json:"run_status"`
	StateFile string `json:"state_file"`
	// PausedSince is when the workflow's session suspended it (zero when
	// it is not suspended): its clocks stand still from then on.
	PausedSince time.Time `json:"paused_since,omitzero"`
	*workflows.State
}

// runDagView answers view=dag: a first line of facts, then one line per
// node in layer order (at most lines), then next= actions for failed
// nodes.
func runDagView(in *runs.Info, lines int) (*inspectOutput, error) {
	m := in.Meta
	if m.Workflow == nil {
		return nil, &Error{Exit: ExitUsage, Code: "usage", Message: fmt.Sprintf("run:%s is not a workflow run: view=dag shows workflow runs (spawn workflow=…)", m.Run),
			Hint: "pi-actors inspect target=run:" + m.Run + " view=status"}
	}
	dir := in.FilesDir()
	st, err := workflows.Load(string(dir))
	if errors.Is(err, fs.ErrNotExist) {
		// Its scheduler has not written the state yet: every node pending.
		w, perr := workflows.Parse(m.Workflow, WorkflowOptions(m.Run))
		if perr != nil {
			return nil, perr
		}
		st = workflows.NewState(w, m.Run, WorkflowInstance(m), m.CreatedAt)
	} else if err != nil {
		return nil, err
	}
	view := &DagView{RunStatus: in.Status, StateFile: dir.Path(workflows.StateFile), State: st}
	if p := in.Progress; p != nil && in.Live() && !p.SuspendedAt.IsZero() {
		view.PausedSince = p.SuspendedAt
	}
	return &inspectOutput{text: dagText(view, lines, time.Now()), details: view}, nil
}

// dagText renders the view at now; while the workflow is suspended its
// clocks (a node's took=, a retry's retry_in=) stand where they stopped.
func dagText(v *DagView, lines int, now time.Time) string {
	st := v.State
	var b strings.Builder
	fmt.Fprintf(&b, "run=%s workflow=%s run_status=%s nodes=%d layers=%d", st.Run, st.Status, v.RunStatus, len(st.Nodes), len(st.Layers))
	if !v.PausedSince.IsZero() {
		fmt.Fprintf(&b, " clocks_paused_since=%s", v.PausedSince.UTC().Format(time.RFC3339))
		now = v.PausedSince
	}
	c := st.Counts()
	for _, s := range []string{workflows.NodeDone, workflows.NodeRunning, workflows.NodeStarting, workflows.NodeBackoff, workflows.NodePending,
		workflows.NodeFailed, workflows.NodeSkipped, workflows.NodeKilled, workflows.NodeCancelled} {
		if c[s] > 0 {
			fmt.Fprintf(&b, " %s=%d", s, c[s])
		}
	}
	fmt.Fprintf(&b, " max_concurrency=%d fail_fast=%v", st.Policy.MaxConcurrency, st.Policy.FailFast)
	if st.Reason != "" {
		fmt.Fprintf(&b, " reason=%s", preview(st.Reason, previewChars))
	}
	var next []string
	for _, id := range st.Failed {
		if len(next) == statusNextMax {
			break
		}
		next = append(next, fmt.Sprintf(`message to=run:%s type=control.retry body:={"node":"%s"}`, st.Run, id))
	}
	if len(st.Failed) > 0 {
		next = append(next, "inspect target=run:"+workflows.ChildRun(st.Run, st.Failed[0])+" view=tail")
	}
	b.WriteString(nextText(next))
	shown := 0
	for li, layer := range st.Layers {
		for _, id := range layer {
			n := st.Node(id)
			if n == nil {
				continue
			}
			if shown == lines {
				fmt.Fprintf(&b, "\n(+%d more nodes; --json or %s has them all)", len(st.Nodes)-shown, v.StateFile)
				return b.String()
			}
			shown++
			fmt.Fprintf(&b, "\nL%d %s %s", li, n.ID, nodeFacts(n, now))
		}
	}
	return b.String()
}

// nodeFacts is one node's line after its id.
func nodeFacts(n *workflows.NodeState, now time.Time) string {
	var b strings.Builder
	b.WriteString(n.Status)
	if n.Service {
		b.WriteString(" service")
	}
	if n.ExitCode != nil {
		fmt.Fprintf(&b, " exit=%d", *n.ExitCode)
	}
	if n.Attempts > 0 {
		fmt.Fprintf(&b, " attempts=%d", n.Attempts)
	}
	if !n.StartedAt.IsZero() {
		end := now
		if !n.EndedAt.IsZero() {
			end = n.EndedAt
		}
		if n.Status == workflows.NodeRunning || !n.EndedAt.IsZero() {
			// Time spent suspended is not the node's (as its timeout).
			took := end.Sub(n.StartedAt) - time.Duration(n.PausedMS)*time.Millisecond
			fmt.Fprintf(&b, " took=%s", formatElapsed(max(0, took)))
		}
	}
	if n.ReadyTimedOut {
		// Not ready within its ready_timeout: its "ready" dependents were
		// skipped.
		b.WriteString(" ready_timed_out")
	}
	if n.Status == workflows.NodeBackoff && !n.NextAt.IsZero() {
		fmt.Fprintf(&b, " retry_in=%s", formatElapsed(max(0, n.NextAt.Sub(now))))
	}
	if n.Stopping != "" {
		b.WriteString(" stopping=" + n.Stopping)
	}
	if n.Attempts > 0 {
		b.WriteString(" run:" + n.Run)
	}
	if n.Reason != "" && n.Status != workflows.NodeDone {
		b.WriteString(" reason=" + preview(n.Reason, 60))
	}
	if n.Error != "" && !workflows.NodeEnded(n.Status) || n.Status == workflows.NodeFailed && n.Error != "" {
		b.WriteString(" error=" + preview(n.Error, previewChars))
	}
	return b.String()
}
