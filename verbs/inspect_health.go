package verbs

import (
	"fmt"
	"strings"
	"time"

	"github.com/pi-actors/pi-actors/runs"
)

// Readiness and liveness as the run views show them: view=status (text
// and details), ps and top (RunRow).

// statusHealthText is view=status's health facts of a live run with a
// readiness or liveness probe: ready=true ready_at=…, or ready=false
// ready_state=waiting|timed_out ready_since=… probe_error=…; then
// liveness failures and the last health restart.
func statusHealthText(in *runs.Info) string {
	h := in.Meta.Health
	if h == nil || !in.Live() {
		return ""
	}
	st := &runs.HealthState{}
	if in.Progress != nil && in.Progress.Health != nil {
		st = in.Progress.Health
	}
	var b strings.Builder
	if h.Ready != nil {
		ok, at := in.Ready()
		switch {
		case ok:
			fmt.Fprintf(&b, " ready=true ready_at=%s", stamp(at))
		default:
			state := st.ReadyState
			if state == "" || in.Status == runs.StatusBackoff {
				state = runs.ReadyWaiting
			}
			b.WriteString(" ready=false ready_state=" + state)
			if !st.ReadySince.IsZero() {
				b.WriteString(" ready_since=" + stamp(st.ReadySince))
			}
			if st.ReadyError != "" {
				b.WriteString(" probe_error=" + inspectPreview(st.ReadyError, previewChars))
			}
		}
	}
	if st.LivenessFailures > 0 {
		fmt.Fprintf(&b, " liveness_failures=%d/%d liveness_error=%s", st.LivenessFailures, h.LivenessLimit(), inspectPreview(st.LivenessError, previewChars))
	}
	if st.LastRestart != "" {
		fmt.Fprintf(&b, " last_health_restart=%s", st.LastRestart)
		if !st.LastRestartAt.IsZero() {
			b.WriteString("@" + stamp(st.LastRestartAt))
		}
	}
	return b.String()
}

// stamp writes a time as RFC 3339 in UTC, to the second.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// statusHealthDetails adds ready (bool), ready_at (RFC 3339, when ready)
// and, for a run with a readiness probe, ready_state to view=status's
// details (run.json's health and progress.json's health are there too).
func statusHealthDetails(in *runs.Info, out map[string]any) {
	ok, at := in.Ready()
	out["ready"] = ok
	if ok && !at.IsZero() {
		out["ready_at"] = at.UTC().Format(time.RFC3339Nano)
	}
	if in.Meta.Health != nil && in.Meta.Health.Ready != nil {
		state, _ := in.Readiness()
		if state == "" || in.Status == runs.StatusBackoff {
			state = runs.ReadyWaiting
		}
		if !in.Live() {
			state = ""
		}
		out["ready_state"] = state
	}
}

// rowHealth fills a listing row's readiness: only runs with a readiness
// probe have one, only while they are live.
func rowHealth(in *runs.Info, r *RunRow) {
	if in.Meta.Health == nil || in.Meta.Health.Ready == nil || !in.Live() {
		return
	}
	r.ReadyState = runs.ReadyWaiting
	r.ReadySince = in.Meta.CreatedAt
	if st, since := in.Readiness(); st != "" && in.Status != runs.StatusBackoff {
		r.ReadyState, r.ReadySince = st, since
	}
}

// ReadyCell is a row's readiness as ps and top write it: "ready 2m03s",
// "not ready 12s" (still waiting), "timed out 1m05s" (the durations are
// since the last change); "" for a run without a readiness probe.
func (r *RunRow) ReadyCell(now time.Time) string {
	if r.ReadyState == "" {
		return ""
	}
	word := map[string]string{runs.ReadyOK: "ready", runs.ReadyWaiting: "not ready", runs.ReadyTimedOut: "timed out"}[r.ReadyState]
	if word == "" {
		word = r.ReadyState
	}
	if r.ReadySince.IsZero() {
		return word
	}
	return word + " " + ShortDuration(now.Sub(r.ReadySince))
}

// withReadyColumn adds READY after STATUS when a listed run has a
// readiness probe (dropped last on a narrow terminal).
func withReadyColumn(cols []psColumn, rows []RunRow, now time.Time) []psColumn {
	for i := range rows {
		if rows[i].ReadyState == "" {
			continue
		}
		ready := psColumn{head: "READY", drop: 5, cell: func(r *RunRow) string {
			if c := r.ReadyCell(now); c != "" {
				return c
			}
			return "-"
		}}
		at := 2
		for j, c := range cols {
			if c.head == "STATUS" {
				at = j + 1
			}
		}
		return append(cols[:at:at], append([]psColumn{ready}, cols[at:]...)...)
	}
	return cols
}
