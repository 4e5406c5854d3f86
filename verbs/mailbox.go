package verbs

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/runs"
)

// Mailbox claims and finishes inbox entries, for scripts acting as actors.
type Mailbox struct {
	Action   string `json:"action" jsonschema:"claim (take the next queued message) or done (mark a claimed one handled or failed)"`
	Wait     string `json:"wait,omitempty" jsonschema:"claim: how long to wait for a message, e.g. 10s or 500ms (default 10s)"`
	ID       string `json:"id,omitempty" jsonschema:"done: the inbox id of the claimed message"`
	Status   string `json:"status,omitempty" jsonschema:"done: handled or failed"`
	Error    string `json:"error,omitempty" jsonschema:"done: why it failed"`
	StateDir string `json:"state_dir,omitempty" jsonschema:"the run's state directory (default $PI_ACTORS_STATE_DIR)"`
}

// Validate checks the action and its parameters.
func (m *Mailbox) Validate() error {
	switch m.Action {
	case "claim":
		if m.Wait != "" {
			if w, err := time.ParseDuration(m.Wait); err != nil || w < 0 {
				return Invalidf("mailbox claim: wait must be a duration like 10s or 500ms (got %q)", m.Wait)
			}
		}
		return nil
	case "done":
		if m.ID == "" || (m.Status != mailbox.StatusHandled && m.Status != mailbox.StatusFailed) {
			return Usagef("mailbox done needs id=<inbox id> and status=handled|failed")
		}
		return nil
	case "":
		return Usagef("mailbox takes one action: claim or done")
	}
	return Usagef("mailbox takes one action: claim or done (got %q)", m.Action)
}

func init() {
	Register(&Spec{
		Name:    "mailbox",
		Summary: "claim and finish inbox entries from a script inside a run",
		Word:    "action",
		Tool:    &Annotations{},
		Usage: `pi-actors mailbox claim [wait=10s] [--json]
pi-actors mailbox done id=<inbox id> status=handled|failed [error=…]

For scripts running inside a run (identity from $PI_ACTORS_STATE_DIR, or
state_dir=): claim takes the next queued message of the run's inbox and
prints it as one JSON envelope line (with its id); it waits up to wait= for
one to arrive (woken by inotify) and exits 66 when none does. done marks a
claimed message handled or failed. control.kill/cancel/restart are applied
by the run's supervisor and never handed out here. Any script can be an
actor:

  while msg=$(pi-actors mailbox claim wait=30s); do …; pi-actors mailbox done id=… status=handled; done`,
		New: func() Request { return new(Mailbox) },
		Run: runMailbox,
	})
}

func runMailbox(ctx context.Context, env *Env, req Request) (*Outcome, error) {
	m := req.(*Mailbox)
	dir := m.StateDir
	if dir == "" {
		dir = envValue(env.Environ, "PI_ACTORS_STATE_DIR")
	}
	if dir == "" {
		return nil, Usagef("mailbox: no run identity: run inside a run ($PI_ACTORS_STATE_DIR is set there) or pass state_dir=<run state dir>")
	}
	d := runs.Dir(dir)
	if _, err := d.Meta(); err != nil {
		return nil, err
	}
	owner := envValue(env.Environ, "PI_ACTORS_ADDRESS")
	if owner == "" {
		owner = "script"
	}
	if m.Action == "done" {
		var meta map[string]any
		if m.Error != "" {
			meta = map[string]any{"error": m.Error}
		}
		if err := mailbox.NewInbox(d.Path(runs.InboxFile)).Done(m.ID, m.Status, meta); err != nil {
			return nil, Invalidf("mailbox done: %v", err)
		}
		return &Outcome{Text: fmt.Sprintf("id=%s status=%s", m.ID, m.Status), Result: map[string]any{"id": m.ID, "status": m.Status}}, nil
	}
	wait := 10 * time.Second
	if m.Wait != "" {
		wait, _ = time.ParseDuration(m.Wait)
	}
	rec, err := claimWait(ctx, d, owner, wait)
	if ctx.Err() != nil {
		// Stopped (control.cancel, Ctrl-C) while waiting: not an error.
		return &Outcome{Exit: 128 + 15, Streamed: true}, nil
	}
	if err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, &Error{Exit: ExitNoInput, Code: "empty", Message: fmt.Sprintf("no message arrived within %s", wait)}
	}
	return &Outcome{Result: rec, Text: compactJSON(rec)}, nil
}

// claimWait claims the next message, waiting for one up to wait; inotify
// on the state directory wakes it, a 250 ms poll backs it up.
func claimWait(ctx context.Context, d runs.Dir, owner string, wait time.Duration) (mailbox.Record, error) {
	deadline := time.Now().Add(wait)
	w, err := fsnotify.NewWatcher()
	var events chan fsnotify.Event
	if err == nil {
		defer w.Close()
		if w.Add(string(d)) == nil {
			events = w.Events
		}
	}
	for {
		rec, err := runs.ClaimMessage(d, owner)
		if err != nil || rec != nil {
			return rec, err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return nil, nil
		}
		t := time.NewTimer(min(left, 250*time.Millisecond))
		select {
		case <-events:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
		t.Stop()
	}
}

// envValue reads one variable of an environment list (the caller's, which
// differs from this process's own in a long-lived front door).
func envValue(environ []string, key string) string {
	for i := len(environ) - 1; i >= 0; i-- {
		if k, v, ok := cutEnv(environ[i]); ok && k == key {
			return v
		}
	}
	if environ == nil {
		return os.Getenv(key)
	}
	return ""
}

func cutEnv(kv string) (string, string, bool) {
	for i := 0; i < len(kv); i++ {
		if kv[i] == '=' {
			return kv[:i], kv[i+1:], true
		}
	}
	return "", "", false
}
