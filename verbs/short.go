package verbs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// The short verbs a pm2 or docker user types without reading docs. Each
// is a thin alias: it builds the long form's request and runs the long
// form, so for one run the output, results, errors and exit codes are the
// long form's.
//
//	stop <run>...       message to=run:<run> type=control.cancel
//	kill <run>...       message to=run:<run> type=control.kill
//	restart <run>...    message to=run:<run> type=control.restart
//	rm <run>... [--prune]  message to=run:<run> type=control.archive (control.prune)
//	ls                  ps
//	logs <run>          inspect target=run:<run> view=tail (plus -f, --since, …)
//
// stop, kill, restart and rm take several runs, or all (short_many.go).

// RunList is the runs a short verb acts on: one id, or several (the CLI's
// words, or a JSON array); a JSON string is one id.
type RunList []string

// UnmarshalJSON accepts "web", ["web","worker"] and null.
func (l *RunList) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case string(b) == "null":
		*l = nil
		return nil
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*l = RunList{s}
		return nil
	case len(b) > 0 && b[0] == '[':
		var list []string
		if err := json.Unmarshal(b, &list); err != nil {
			return fmt.Errorf("expected run ids (strings), got %s", b)
		}
		*l = list
		return nil
	}
	return fmt.Errorf("expected a run id or an array of run ids, got %s", kindOf(b))
}

// RunRef names the runs a short verb acts on.
type RunRef struct {
	Run RunList `json:"run" jsonschema:"the runs: <id> or run:<id>, several, or all (the live runs ps lists: your session's, or every session's without one)"`
}

// Validate checks the runs.
func (r *RunRef) Validate() error { return checkRuns(r.Run, "stop|kill|restart") }

// Remove names the ended runs rm archives or prunes.
type Remove struct {
	Run   RunList `json:"run" jsonschema:"the ended runs: <id> or run:<id>, several, or all (the ended runs ps --all lists: your session's, or every session's without one)"`
	Prune Bool    `json:"prune,omitempty" jsonschema:"delete the runs' state (control.prune) instead of archiving them (--prune)"`
}

// Validate checks the runs.
func (r *Remove) Validate() error { return checkRuns(r.Run, "rm") }

// ShortAliases maps each short verb to the long form it stands for (for
// help and docs).
var ShortAliases = map[string]string{
	"stop":    "message type=control.cancel",
	"kill":    "message type=control.kill",
	"restart": "message type=control.restart",
	"rm":      "message type=control.archive (--prune: control.prune)",
	"ls":      "ps",
	"logs":    "inspect view=tail",
}

// shortManyUsage is what stop, kill, restart and rm say about several
// runs.
const shortManyUsage = `Several runs (pi-actors %[1]s web worker) go to the kernel as one batch of
messages, applied together; all is every %[2]s run pi-actors ps%[3]s lists: your
session's ($PI_ACTORS_SESSION or session=<id>), or every session's when you
have none (session=all too); a run named all is run:all. Each run is
reported: text, one line per run (to=run:<id> …, or to=run:<id> … error=<code>
exit=<n>: <message>); --json, a list of {run, ok, result|error}. Exit code:
0 when every run succeeded, else the first failing run's code (in the
order given; the list is then the error's details). A malformed id stops
the whole request before anything is sent (exit 65).`

func init() {
	for _, v := range []struct{ name, typ, summary, what string }{
		{"stop", "control.cancel", "stop runs: SIGTERM, grace, SIGKILL (message type=control.cancel)",
			"Stops the run's process groups: SIGTERM, the kill grace (exec.kill_grace_ms),\nthen SIGKILL. The run ends cancelled; no follow-up is queued."},
		{"kill", "control.kill", "kill runs at once: SIGKILL their process trees (message type=control.kill)",
			"SIGKILLs every process of the run at once. The run ends killed."},
		{"restart", "control.restart", "restart runs' commands (message type=control.restart)",
			"Stops the run's current attempt and starts its command again; the\nrestart count grows. A run that ended starts again on its state\ndirectory (output appended; run.json counts it in resumes)."},
	} {
		Register(&Spec{
			Name:    v.name,
			Summary: v.summary,
			Word:    "run",
			Words:   true,
			Usage: "pi-actors " + v.name + " <run>... | all [--json]\n\n" + v.what + "\nFor one run, the same as (output and exit code):\n  pi-actors message to=run:<run> type=" + v.typ +
				"\n\n" + fmt.Sprintf(shortManyUsage, v.name, "live", "") +
				"\n\nExamples:\n  pi-actors " + v.name + " web\n  pi-actors " + v.name + " web worker\n  pi-actors " + v.name + " all",
			New: func() Request { return new(RunRef) },
			Run: func(ctx context.Context, env *Env, req Request) (*Outcome, error) {
				return runShort(ctx, env, req.(*RunRef).Run, v.typ)
			},
		})
	}
	Register(&Spec{
		Name:    "rm",
		Summary: "archive ended runs (--prune deletes them) (message type=control.archive)",
		Word:    "run",
		Words:   true,
		Flags:   map[string]string{"--prune": "prune"},
		Usage: `pi-actors rm <run>... | all [--prune] [--json]

Archives an ended run: its state directory moves under archived/ and a
tombstone stays (inspect still finds it). --prune deletes the state
instead. A live run is refused (exit 75): stop or kill it first.
For one run, the same as (output and exit code):
  pi-actors message to=run:<run> type=control.archive   (--prune: type=control.prune)

` + fmt.Sprintf(shortManyUsage, "rm", "ended (not yet archived; with --prune, archived too)", " --all") + `

Examples:
  pi-actors rm web
  pi-actors rm all --prune`,
		New: func() Request { return new(Remove) },
		Run: func(ctx context.Context, env *Env, req Request) (*Outcome, error) {
			r := req.(*Remove)
			typ := "control.archive"
			if r.Prune {
				typ = "control.prune"
			}
			return runShort(ctx, env, r.Run, typ)
		},
	})
}

// runControl runs `message to=run:<run> type=<typ>`.
func runControl(ctx context.Context, env *Env, run, typ string) (*Outcome, error) {
	m := &Message{To: "run:" + runWord(run), Type: typ}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return Find("message").Run(ctx, env, m)
}

// runWord is a run word without its run: prefix.
func runWord(w string) string { return strings.TrimPrefix(strings.TrimSpace(w), "run:") }
