package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/runs"
)

func init() {
	verbs = append(verbs, &verb{
		name:    "mailbox",
		summary: "claim and finish inbox entries from a script inside a run",
		usage: `pi-actors mailbox claim [wait=10s] [--json]
pi-actors mailbox done id=<inbox id> status=handled|failed [error=…]

For scripts running inside a run (identity from $PI_ACTORS_STATE_DIR, or
state_dir=): claim takes the next queued message of the run's inbox and
prints it as one JSON envelope line (with its id); it waits up to wait= for
one to arrive (woken by inotify) and exits 66 when none does. done marks a
claimed message handled or failed. control.kill/cancel/restart are applied
by the run's supervisor and never handed out here. Any script can be an
actor:

  while msg=$(pi-actors mailbox claim wait=30s); do …; pi-actors mailbox done id=… status=handled; done`,
		run: runMailbox,
	})
}

func runMailbox(ctx context.Context, a *app, r *request) int {
	if len(r.words) != 1 {
		return a.fail(r, usagef("mailbox takes one action: claim or done"))
	}
	dir := os.Getenv("PI_ACTORS_STATE_DIR")
	if s, ok := r.params["state_dir"].(string); ok && s != "" {
		dir = s
	}
	if dir == "" {
		return a.fail(r, usagef("mailbox: no run identity: run inside a run ($PI_ACTORS_STATE_DIR is set there) or pass state_dir=<run state dir>"))
	}
	d := runs.Dir(dir)
	if _, err := d.Meta(); err != nil {
		return a.fail(r, err)
	}
	owner := os.Getenv("PI_ACTORS_ADDRESS")
	if owner == "" {
		owner = "script"
	}
	switch r.words[0] {
	case "claim":
		wait := 10 * time.Second
		if s, ok := r.params["wait"].(string); ok {
			w, err := time.ParseDuration(s)
			if err != nil || w < 0 {
				return a.fail(r, invalidf("mailbox claim: wait must be a duration like 10s or 500ms (got %q)", s))
			}
			wait = w
		}
		rec, err := claimWait(ctx, d, owner, wait)
		if ctx.Err() != nil {
			return 128 + 15 // stopped (control.cancel, Ctrl-C) while waiting: not an error
		}
		if err != nil {
			return a.fail(r, err)
		}
		if rec == nil {
			return a.fail(r, &cliError{exit: exitNoInput, code: "empty", msg: fmt.Sprintf("no message arrived within %s", wait)})
		}
		if r.json {
			return a.ok(r, "", rec)
		}
		a.writeJSON(rec)
		return exitOK
	case "done":
		id, _ := r.params["id"].(string)
		status, _ := r.params["status"].(string)
		if id == "" || (status != mailbox.StatusHandled && status != mailbox.StatusFailed) {
			return a.fail(r, usagef("mailbox done needs id=<inbox id> and status=handled|failed"))
		}
		var meta map[string]any
		if e, ok := r.params["error"].(string); ok && e != "" {
			meta = map[string]any{"error": e}
		}
		if err := mailbox.NewInbox(d.Path(runs.InboxFile)).Done(id, status, meta); err != nil {
			return a.fail(r, invalidf("mailbox done: %v", err))
		}
		return a.ok(r, fmt.Sprintf("id=%s status=%s", id, status), map[string]any{"id": id, "status": status})
	}
	return a.fail(r, usagef("mailbox takes one action: claim or done (got %q)", r.words[0]))
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
