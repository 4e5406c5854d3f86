package verbs

import (
	"context"
	"strings"
)

// The short verbs a pm2 or docker user types without reading docs. Each
// is a thin alias: it builds the long form's request and runs the long
// form, so output, results, errors and exit codes are the long form's.
//
//	stop <run>          message to=run:<run> type=control.cancel
//	kill <run>          message to=run:<run> type=control.kill
//	restart <run>       message to=run:<run> type=control.restart
//	rm <run> [--prune]  message to=run:<run> type=control.archive (control.prune)
//	ls                  ps
//	logs <run>          inspect target=run:<run> view=tail (plus -f, --since, …)

// RunRef names the run a short verb acts on.
type RunRef struct {
	Run string `json:"run" jsonschema:"the run: <id> or run:<id>"`
}

// Validate checks there is a run.
func (r *RunRef) Validate() error { return checkRunWord(r.Run) }

// Remove names the ended run rm archives or prunes.
type Remove struct {
	Run   string `json:"run" jsonschema:"the ended run: <id> or run:<id>"`
	Prune Bool   `json:"prune,omitempty" jsonschema:"delete the run's state (control.prune) instead of archiving it (--prune)"`
}

// Validate checks there is a run.
func (r *Remove) Validate() error { return checkRunWord(r.Run) }

func checkRunWord(run string) error {
	if strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(run), "run:")) == "" {
		return Usagef("name the run: pi-actors <verb> <run>")
	}
	return nil
}

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

func init() {
	for _, v := range []struct{ name, typ, summary, what string }{
		{"stop", "control.cancel", "stop a run: SIGTERM, grace, SIGKILL (message type=control.cancel)",
			"Stops the run's process groups: SIGTERM, the kill grace (exec.kill_grace_ms),\nthen SIGKILL. The run ends cancelled; no follow-up is queued."},
		{"kill", "control.kill", "kill a run at once: SIGKILL its process tree (message type=control.kill)",
			"SIGKILLs every process of the run at once. The run ends killed."},
		{"restart", "control.restart", "restart a run's command (message type=control.restart)",
			"Stops the run's current attempt and starts its command again; the\nrestart count grows."},
	} {
		Register(&Spec{
			Name:    v.name,
			Summary: v.summary,
			Word:    "run",
			Usage: "pi-actors " + v.name + " <run> [--json]\n\n" + v.what + "\nThe same as (output and exit code):\n  pi-actors message to=run:<run> type=" + v.typ +
				"\n\nExample:\n  pi-actors " + v.name + " web",
			New: func() Request { return new(RunRef) },
			Run: func(ctx context.Context, env *Env, req Request) (*Outcome, error) {
				return runControl(ctx, env, req.(*RunRef).Run, v.typ)
			},
		})
	}
	Register(&Spec{
		Name:    "rm",
		Summary: "archive an ended run (--prune deletes it) (message type=control.archive)",
		Word:    "run",
		Flags:   map[string]string{"--prune": "prune"},
		Usage: `pi-actors rm <run> [--prune] [--json]

Archives an ended run: its state directory moves under archived/ and a
tombstone stays (inspect still finds it). --prune deletes the state
instead. A live run is refused (exit 75): stop or kill it first.
The same as (output and exit code):
  pi-actors message to=run:<run> type=control.archive   (--prune: type=control.prune)

Example:
  pi-actors rm web`,
		New: func() Request { return new(Remove) },
		Run: func(ctx context.Context, env *Env, req Request) (*Outcome, error) {
			r := req.(*Remove)
			typ := "control.archive"
			if r.Prune {
				typ = "control.prune"
			}
			return runControl(ctx, env, r.Run, typ)
		},
	})
}

// runControl runs `message to=run:<run> type=<typ>`.
func runControl(ctx context.Context, env *Env, run, typ string) (*Outcome, error) {
	run = strings.TrimPrefix(strings.TrimSpace(run), "run:")
	m := &Message{To: "run:" + run, Type: typ}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return Find("message").Run(ctx, env, m)
}
