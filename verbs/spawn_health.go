package verbs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pi-actors/pi-actors/recipes/template"
	"github.com/pi-actors/pi-actors/runs"
)

// A spawn's service parameters: readiness and liveness probes, a memory
// cap, watched files (package runs checks them and its supervisor applies
// them), and wait=ready, which holds the answer until the run is ready.

// Globs is a list of globs given as "a,b" (commas inside {…} belong to
// the glob) or as a JSON array of strings.
type Globs []string

// UnmarshalJSON accepts "src/**/*.go,go.mod" and ["src/**/*.go","go.mod"].
func (g *Globs) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case string(b) == "null":
		*g = nil
		return nil
	case len(b) > 0 && b[0] == '[':
		var list []string
		if err := json.Unmarshal(b, &list); err != nil {
			return fmt.Errorf("expected globs as a string or an array of strings, got %s", kindOf(b))
		}
		*g = list
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("expected globs as a string or an array of strings, got %s", kindOf(b))
	}
	*g = splitGlobs(s)
	return nil
}

// splitGlobs splits on the commas that are not inside {…}.
func splitGlobs(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '{':
			depth++
		case '}':
			depth = max(0, depth-1)
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// HealthSpec reads the spawn's health parameters (nil when none was
// given). Errors name the parameter: 65 for a value that does not parse,
// 64 for a parameter that needs another one.
func (s *Spawn) HealthSpec() (*runs.Health, error) {
	failures := 0
	if v := s.LivenessFailures.V; s.LivenessFailures.Set && v != nil {
		n, err := strconv.Atoi(strings.TrimSpace(template.Stringify(v)))
		if err != nil || n < 1 {
			return nil, Invalidf("liveness_failures: must be a positive count (got %s)", template.CompactJSON(v))
		}
		failures = n
	}
	h, err := runs.ParseHealth(runs.HealthParams{
		Ready: trimmed(s.Ready), ReadyTimeout: trimmed(string(s.ReadyTimeout)),
		Liveness: trimmed(s.Liveness), LivenessEvery: trimmed(string(s.LivenessEvery)), LivenessFailures: failures,
		MaxRSS: trimmed(string(s.MaxRSS)), Watch: s.Watch,
	})
	var fe *runs.FieldError
	if errors.As(err, &fe) {
		if fe.Missing {
			return nil, Usagef("%v", err)
		}
		return nil, Invalidf("%v", err)
	}
	if err != nil {
		return nil, err
	}
	switch w := trimmed(s.Wait); w {
	case "":
	case "ready":
		if h == nil || h.Ready == nil {
			return nil, Usagef("wait=ready needs a readiness probe: ready=http://host:port/path, tcp:host:port, log:<regex> or exec:<template>")
		}
	default:
		return nil, Usagef("wait must be ready (got %q)", w)
	}
	return h, nil
}

// readyPoll is how often wait=ready looks at the run's progress.
const readyPoll = 20 * time.Millisecond

// readyGrace is how long wait=ready waits past ready_timeout (counted
// from the spawn) for the supervisor's verdict; a run restarting in a
// loop gets no new ready_timeout per attempt (docs: 75 when it passes).
const readyGrace = time.Second

// awaitReady holds a spawn's answer until its run is ready (wait=ready):
// the supervisor's readiness probe decides. A run whose probe timed out
// is a 75 with the probe's last error (the run keeps going); a run that
// ended first is a 69.
func (s *Spawn) awaitReady(ctx context.Context, env *Env, res *SpawnResult) error {
	if trimmed(s.Wait) != "ready" || res == nil {
		return nil
	}
	if strings.Contains(res.Address, "@") {
		return awaitReadyOn(ctx, env, res)
	}
	dir := runs.Dir(res.StateDir)
	started := time.Now()
	deadline := started.Add(runs.DefaultReadyTimeout + readyGrace)
	details := func(in *runs.Info) map[string]any {
		d := map[string]any{"address": res.Address, "run": res.Run, "pid": res.Pid, "state_dir": res.StateDir, "ready": false}
		if in != nil && in.Progress != nil && in.Progress.Health != nil {
			d["ready_state"], d["ready_error"] = in.Progress.Health.ReadyState, in.Progress.Health.ReadyError
		}
		return d
	}
	hint := fmt.Sprintf("inspect target=%s view=status shows the probe's last error; view=tail the run's output; message to=%s type=control.kill stops it", res.Address, res.Address)
	t := time.NewTicker(readyPoll)
	defer t.Stop()
	for first := true; ; first = false {
		in, err := runs.Load(dir)
		if err == nil && in.Meta.Pid == res.Pid {
			if first && in.Meta.Health != nil {
				deadline = started.Add(in.Meta.Health.ReadyTimeout() + readyGrace)
			}
			if ok, at := in.Ready(); ok {
				b := true
				res.Ready, res.ReadyAt = &b, at.UTC().Format(time.RFC3339Nano)
				return nil
			}
			if h := readyHealth(in); h != nil && h.ReadyState == runs.ReadyTimedOut {
				return &Error{Exit: ExitTempFail, Code: "not_ready", Hint: hint, Details: details(in),
					Message: fmt.Sprintf("%s is not ready after its ready_timeout (%s): %s; the run keeps going", res.Address, in.Meta.Health.ReadyTimeout(), h.ReadyError)}
			}
			if !in.Live() {
				msg := fmt.Sprintf("%s ended (%s) before it was ready", res.Address, in.Status)
				if in.Reason != "" {
					msg = fmt.Sprintf("%s ended (%s, %s) before it was ready", res.Address, in.Status, in.Reason)
				}
				if h := readyHealth(in); h != nil && h.ReadyError != "" {
					msg += "; the probe's last error: " + h.ReadyError
				}
				return &Error{Exit: ExitUnavailable, Code: "run_ended", Message: msg, Hint: hint, Details: details(in)}
			}
		}
		if time.Now().After(deadline) {
			msg := fmt.Sprintf("%s is not ready after %s", res.Address, time.Since(started).Round(time.Second))
			if h := readyHealth(in); h != nil && h.ReadyError != "" {
				msg += ": " + h.ReadyError
			}
			return &Error{Exit: ExitTempFail, Code: "not_ready", Message: msg + "; the run keeps going", Hint: hint, Details: details(in)}
		}
		select {
		case <-ctx.Done():
			return readyInterrupted(ctx, res.Address)
		case <-t.C:
		}
	}
}

func readyHealth(in *runs.Info) *runs.HealthState {
	if in == nil || in.Progress == nil {
		return nil
	}
	return in.Progress.Health
}

// awaitReadyOn is wait=ready for a run another node supervises: its
// status, through that node's kernel, until the probe has decided.
func awaitReadyOn(ctx context.Context, env *Env, res *SpawnResult) error {
	hint := fmt.Sprintf("inspect target=%s view=status shows the probe's last error", res.Address)
	started := time.Now()
	deadline := started.Add(runs.DefaultReadyTimeout + readyGrace)
	for first := true; ; first = false {
		var ro RoutedOutcome
		in := &Inspect{Target: "run:" + res.Run, View: "status"}
		if err := env.CallNode(res.Node, "verb", map[string]any{"verb": "inspect", "params": in}, &ro); err != nil {
			return err
		}
		// view=status's details: run.json's health (the probe and its
		// ready_timeout) and progress.json's (the probe's last error).
		var st struct {
			Status     string      `json:"status"`
			Ready      bool        `json:"ready"`
			ReadyAt    string      `json:"ready_at"`
			ReadyState string      `json:"ready_state"`
			Health     runs.Health `json:"health"`
			Progress   struct {
				Health struct {
					ReadyError string `json:"ready_error"`
				} `json:"health"`
			} `json:"progress"`
		}
		json.Unmarshal(ro.Result, &st)
		if first && st.Health.Ready != nil {
			deadline = started.Add(st.Health.ReadyTimeout() + readyGrace) // the run's own, as a local wait
		}
		probe := ""
		if e := st.Progress.Health.ReadyError; e != "" {
			probe = ": " + e
		}
		switch {
		case st.Ready:
			b := true
			res.Ready, res.ReadyAt = &b, st.ReadyAt
			return nil
		case st.ReadyState == runs.ReadyTimedOut:
			return &Error{Exit: ExitTempFail, Code: "not_ready", Hint: hint, Message: fmt.Sprintf("%s is not ready after its ready_timeout (%s)%s; the run keeps going", res.Address, st.Health.ReadyTimeout(), probe)}
		case st.Status != "" && st.Status != runs.StatusRunning && st.Status != runs.StatusBackoff:
			return &Error{Exit: ExitUnavailable, Code: "run_ended", Hint: hint, Message: fmt.Sprintf("%s ended (%s) before it was ready", res.Address, st.Status)}
		case time.Now().After(deadline):
			return &Error{Exit: ExitTempFail, Code: "not_ready", Hint: hint, Message: fmt.Sprintf("%s is not ready after %s%s; the run keeps going", res.Address, time.Since(started).Round(time.Second), probe)}
		}
		select {
		case <-ctx.Done():
			return readyInterrupted(ctx, res.Address)
		case <-time.After(10 * readyPoll):
		}
	}
}

// readyInterrupted is the error of a wait=ready a signal stopped: 128+n
// (interrupted), as every verb a signal stops; the run keeps going.
func readyInterrupted(ctx context.Context, address string) error {
	return &Error{Exit: signalExit(ctx), Code: "interrupted", Message: fmt.Sprintf("interrupted while waiting for %s to be ready; the run keeps going", address),
		Hint: "inspect target=" + address + " view=status"}
}
