package verbs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pi-actors/pi-actors/internal/dirwatch"
	"github.com/pi-actors/pi-actors/internal/fsutil"
	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/recipes/template"
	"github.com/pi-actors/pi-actors/rooms"
	"github.com/pi-actors/pi-actors/runs"
)

// Mailbox claims and finishes inbox entries, for scripts acting as actors.
type Mailbox struct {
	Action   string `json:"action" jsonschema:"claim (take the next queued message), done (mark a claimed one handled or failed) or renew (keep a branch claim from being taken over while the work goes on)"`
	Wait     string `json:"wait,omitempty" jsonschema:"claim: how long to wait for a message, e.g. 10s or 500ms (default 10s)"`
	ID       string `json:"id,omitempty" jsonschema:"done, renew: the inbox id of the claimed message"`
	Status   string `json:"status,omitempty" jsonschema:"done: handled or failed"`
	Error    string `json:"error,omitempty" jsonschema:"done: why it failed"`
	StateDir string `json:"state_dir,omitempty" jsonschema:"the run's state directory (default $PI_ACTORS_STATE_DIR)"`
	Address  string `json:"address,omitempty" jsonschema:"a branch inbox to claim from or finish in: branch:<run>/<branch> (default: the run's own inbox)"`
	Pid      Int    `json:"pid,omitempty" jsonschema:"branch claim: the process that will finish the message; once it exits the message is handed to the next claimer (default: inside a run, the run's leaf that called pi-actors, else the calling process; -1: none, the claim lease applies)"`
}

// Validate checks the action and its parameters.
func (m *Mailbox) Validate() error {
	if m.Address != "" {
		a, node, err := mailbox.ParseNode(m.Address)
		if err != nil || a.Kind != mailbox.KindBranch {
			return Invalidf("mailbox address must be a branch inbox, branch:<run>/<branch>[@<node>] (got %q); leave it out for the run's own inbox", m.Address)
		}
		m.Address = a.String()
		if node != "" {
			m.Address += "@" + node
		}
	}
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
		return doneSizeError(mailbox.CheckDoneMeta(doneMeta(m)))
	case "renew":
		if m.ID == "" || m.Address == "" {
			return Usagef("mailbox renew needs address=branch:<run>/<branch> and id=<inbox id> (a claim on a run's own inbox has no lease to renew)")
		}
		return nil
	case "":
		return Usagef("mailbox takes one action: claim, done or renew")
	}
	return Usagef("mailbox takes one action: claim, done or renew (got %q)", m.Action)
}

func init() {
	Register(&Spec{
		Name:    "mailbox",
		Summary: "claim and finish inbox entries from a script inside a run",
		Word:    "action",
		Tool:    &Annotations{},
		Usage: `pi-actors mailbox claim [wait=10s] [address=branch:<run>/<branch>] [--json]
pi-actors mailbox done id=<inbox id> status=handled|failed [error=…] [address=…]
pi-actors mailbox renew id=<inbox id> address=branch:<run>/<branch>

For scripts running inside a run (identity from $PI_ACTORS_STATE_DIR, or
state_dir=): claim takes the next queued message of the run's inbox and
prints it as one JSON envelope line (with its id); it waits up to wait= for
one to arrive (woken by inotify) and exits 66 when none does. done marks a
claimed message handled or failed. control.kill/cancel/restart are applied
by the run's supervisor and never handed out here. A message that expired
(ttl_ms, deadline) is not handed out: it goes to the run's dead letters
(inspect target=run:<id> view=dead_letters). Any script can be an actor:

  while msg=$(pi-actors mailbox claim wait=30s); do …; pi-actors mailbox done id=… status=handled; done

address=branch:<run>/<branch> claims from (and finishes in) a branch
inbox of run <run> instead — the inbox of one member of the run's room;
the claim belongs to the calling process (pid=): once it exits, an
unfinished message is handed to the next claimer; so is one claimed longer
ago than the claim lease (PI_ACTORS_BRANCH_CLAIM_LEASE_MS, 5 min). renew
restarts that lease: work that takes longer renews every minute or so.`,
		New: func() Request { return new(Mailbox) },
		Run: runMailbox,
	})
}

func runMailbox(ctx context.Context, env *Env, req Request) (*Outcome, error) {
	m := req.(*Mailbox)
	if m.Address != "" {
		if out, routed, err := env.route(ctx, "mailbox", m, &m.Address); routed {
			return out, err
		}
	}
	owner := envValue(env.Environ, "PI_ACTORS_ADDRESS")
	if owner == "" {
		owner = "script"
	}
	if m.Address != "" {
		return branchMailbox(ctx, env, m, owner)
	}
	dir := m.StateDir
	if dir == "" {
		dir = envValue(env.Environ, "PI_ACTORS_STATE_DIR")
	}
	if dir == "" {
		return nil, Usagef("mailbox: no run identity: run inside a run ($PI_ACTORS_STATE_DIR is set there) or pass state_dir=<run state dir>")
	}
	if !filepath.IsAbs(dir) {
		// From the caller's directory, and absolute in what it records
		// (a dead letter named a relative state_dir).
		dir = filepath.Join(env.Cwd, dir)
	}
	d := runs.Dir(filepath.Clean(dir))
	meta, err := d.Meta()
	if err != nil {
		return nil, err
	}
	// Another session's run inbox is not this caller's to read (the
	// run's own scripts carry its session).
	if err := runs.CheckOwner(strings.TrimSpace(env.Session), meta); err != nil {
		return nil, err
	}
	if m.Action == "done" {
		if err := mailbox.NewInbox(d.Path(runs.InboxFile)).Done(m.ID, m.Status, doneMeta(m)); err != nil {
			return nil, inboxError("done", "run:"+meta.Run, err)
		}
		return doneOutcome(m), nil
	}
	requeue := func(id string) error { return mailbox.NewInbox(d.Path(runs.InboxFile)).Requeue([]string{id}) }
	return claimOutcome(ctx, env, m, "run:"+meta.Run, func() (mailbox.Record, error) { return ClaimRunMessage(d, owner) }, requeue, []string{string(d)})
}

// branchMailbox claims from or finishes in a branch inbox: the run is
// found by its id (the caller's session must own it), the claim names the
// calling process.
func branchMailbox(ctx context.Context, env *Env, m *Mailbox, owner string) (*Outcome, error) {
	a, _ := mailbox.Parse(m.Address)
	in, err := runs.Access(env.AgentDir, a.ID, env.Session)
	if err != nil {
		return nil, err
	}
	if in.Archived != nil {
		// Its inboxes moved to the archive, read-only: claiming or
		// finishing there would change an archive (it said nothing was
		// queued, or named a path under the tombstone).
		return nil, &Error{Exit: ExitTempFail, Code: "run_archived", Message: fmt.Sprintf("run:%s is archived: its branch inboxes are read only", a.ID),
			Hint: "inspect target=" + m.Address + " view=mailbox shows what they held"}
	}
	dir := string(in.Dir)
	if owner == "script" {
		owner = m.Address
	}
	if m.Action == "done" {
		// Only the claim's owner finishes it: one taken over meanwhile is
		// someone else's now.
		if err := rooms.DoneBranchBy(dir, m.Address, m.ID, owner, m.Status, doneMeta(m)); err != nil {
			return nil, inboxError("done", m.Address, err)
		}
		return doneOutcome(m), nil
	}
	if m.Action == "renew" {
		// Only the claim's owner renews it: one taken over meanwhile is
		// someone else's now.
		if err := rooms.RenewBranch(dir, m.Address, m.ID, owner); err != nil {
			return nil, inboxError("renew", m.Address, err)
		}
		lease := rooms.EnvLimits().ClaimLease.Milliseconds()
		return &Outcome{Text: fmt.Sprintf("id=%s renewed=true lease_ms=%d", m.ID, lease),
			Result: map[string]any{"id": m.ID, "renewed": true, "lease_ms": lease}}, nil
	}
	pid := int(m.Pid)
	switch {
	case pid == 0:
		pid = claimPid(env)
	case pid < 0:
		pid = 0
	case runs.StartTime(pid) == 0:
		// A claim held by no process would be taken over at once.
		return nil, &Error{Exit: ExitDataErr, Code: "invalid_data", Message: fmt.Sprintf("pid=%d is no live process: the claim would be free for others at once", pid),
			Hint: "leave pid out (the claim is your leaf's), or pid=-1 for a claim held by no process (freed by the claim lease only)"}
	}
	claim := func() (mailbox.Record, error) { return rooms.ClaimBranch(dir, m.Address, owner, pid) }
	requeue := func(id string) error { return rooms.RequeueBranch(dir, m.Address, id, owner) }
	return claimOutcome(ctx, env, m, a.String(), claim, requeue, []string{dir, rooms.BranchDir(dir, a.Branch)})
}

// claimPid is the process a branch claim belongs to by default: inside a
// run, the run's leaf that (through any subshells, pipelines or timeout
// wrappers) called pi-actors — it lives as long as the script does; else
// the caller itself.
func claimPid(env *Env) int {
	pid := env.CallerPid
	if pid == 0 {
		return os.Getpid()
	}
	dir := envValue(env.Environ, "PI_ACTORS_STATE_DIR")
	if dir == "" {
		return pid
	}
	meta, err := runs.Dir(dir).Meta()
	if err != nil || meta.Pid <= 0 {
		return pid
	}
	for p, hops := pid, 0; p > 1 && hops < 64; hops++ {
		st, err := runs.Stat(p)
		if err != nil {
			break
		}
		if st.PPid == meta.Pid {
			return p // a child of the run's supervisor: the leaf
		}
		p = st.PPid
	}
	return pid
}

// doneSizeError is an error= larger than a finished message records:
// 65, invalid_envelope, naming the field, its size and the limit.
func doneSizeError(err error) error {
	var ee *mailbox.EnvelopeError
	if !errors.As(err, &ee) || ee.Limit == 0 {
		return err
	}
	return &Error{Exit: ExitDataErr, Code: "invalid_envelope", Message: ee.Msg,
		Hint:    fmt.Sprintf("keep error= to %d bytes (4 KiB) — why it failed, in a line or two; write the rest to a file and name its path in the error (docs/messages.md, Size limits)", ee.Limit),
		Details: map[string]any{"field": ee.Field, "bytes": ee.Bytes, "limit": ee.Limit}}
}

func doneMeta(m *Mailbox) map[string]any {
	if m.Error == "" {
		return nil
	}
	return map[string]any{"error": m.Error}
}

func doneOutcome(m *Mailbox) *Outcome {
	return &Outcome{Text: fmt.Sprintf("id=%s status=%s", m.ID, m.Status), Result: map[string]any{"id": m.ID, "status": m.Status}}
}

// claimOutcome waits up to m.Wait (default 10 s) for claim to hand out a
// message; target names the inbox (run:<id>, branch:<run>/<b>) in the
// hint of an empty claim, watch are the directories whose changes wake
// it.
func claimOutcome(ctx context.Context, env *Env, m *Mailbox, target string, claim func() (mailbox.Record, error), requeue func(id string) error, watch []string) (*Outcome, error) {
	wait := 10 * time.Second
	if m.Wait != "" {
		wait, _ = time.ParseDuration(m.Wait)
	}
	rec, err := claimWait(ctx, claim, watch, wait)
	if rec != nil {
		// Claimed: the caller holds it now, so it hears of it, whatever
		// came after (a stop, a doorbell that could not be rung) — unless
		// the answer cannot be passed on (stdout failed: 74): then the
		// message goes back to the queue, for the retry the error asks for.
		id := rec.ID()
		return &Outcome{Result: rec, Text: compactJSON(rec), Settle: func(passedOn bool) {
			if !passedOn {
				requeue(id) // best effort: the claim's owner can still finish it
			}
		}}, nil
	}
	if ctx.Err() != nil {
		// Stopped (control.cancel's SIGTERM, Ctrl-C) while waiting:
		// nothing claimed, 128+n for the signal, so a claim loop ends —
		// silently in text, and with --json its one object, the error.
		if env.JSON {
			return nil, &Error{Exit: signalExit(ctx), Code: "interrupted", Message: "interrupted while waiting for a message; nothing was claimed"}
		}
		return &Outcome{Exit: signalExit(ctx), Streamed: true}, nil
	}
	if err != nil {
		return nil, err
	}
	return nil, &Error{Exit: ExitNoInput, Code: "empty", Message: fmt.Sprintf("no message arrived within %s", wait),
		Hint: "nothing was queued for " + target + ": wait longer (wait=5m), or look at what is there: pi-actors inspect target=" + target + " view=mailbox"}
}

// ClaimRunMessage claims the next message of a run's own inbox for owner
// (runs.ClaimMessage). A message that expired (ttl_ms from its
// received_at, or deadline) is not handed out: it is written to the
// run's dead letters, then marked failed, and the next one is tried.
func ClaimRunMessage(d runs.Dir, owner string) (mailbox.Record, error) {
	for {
		rec, err := runs.ClaimMessage(d, owner)
		if err != nil || rec == nil {
			return rec, err
		}
		exp, why := rooms.Expired(rec, time.Now())
		if !exp {
			return rec, nil
		}
		env, err := rec.Envelope()
		if err != nil {
			env = mailbox.Envelope{To: "run:" + filepath.Base(string(d)), Type: rec.Type()}
		}
		env.ID = rec.ID()
		if _, _, err := rooms.DeadLetter(string(d), env, why); err != nil {
			return nil, err
		}
		if err := mailbox.NewInbox(d.Path(runs.InboxFile)).Done(rec.ID(), mailbox.StatusFailed, map[string]any{"error": "expired: " + why, "dead_letter": why}); err != nil {
			return nil, err
		}
	}
}

// claimWait claims the next message, waiting for one up to wait; inotify
// on the watched directories wakes it when a file there is written and
// closed (an append to the inbox) — not at each write of the run's
// output beside it — and a 250 ms poll backs it up. An inbox whose lock
// stayed taken past mailbox.LockWait is busy, not broken: the claim is
// tried again while wait lasts.
func claimWait(ctx context.Context, claim func() (mailbox.Record, error), watch []string, wait time.Duration) (mailbox.Record, error) {
	deadline := time.Now().Add(wait)
	w, err := dirwatch.New()
	var events <-chan dirwatch.Event
	if err == nil {
		defer w.Close()
		for _, dir := range watch {
			if w.Add(dir, dirwatch.Written) == nil {
				events = w.Events()
			}
		}
	}
	for {
		rec, err := claim()
		if errors.Is(err, fsutil.ErrLockTimeout) && time.Until(deadline) > 0 && ctx.Err() == nil {
			continue
		}
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

// inboxError classifies a failed done or renew: an id no record has is
// not found (66); a record in another state (never claimed, finished
// already, claimed by someone else) is a conflict (75).
func inboxError(action, target string, err error) error {
	view := "inspect target=" + target + " view=mailbox"
	switch {
	case errors.Is(err, mailbox.ErrNotFound):
		return &Error{Exit: ExitNoInput, Code: "not_found", Message: fmt.Sprintf("mailbox %s: %v", action, err),
			Hint: "the id is the one mailbox claim printed; " + view + " lists the inbox"}
	case errors.Is(err, mailbox.ErrTransition):
		return &Error{Exit: ExitTempFail, Code: "conflict", Message: fmt.Sprintf("mailbox %s: %v", action, err),
			Hint: "only a message you claimed (and still hold) can be finished or renewed; " + view + " shows its status"}
	}
	if ce := Classify(err); ce.Exit != ExitSoftware {
		return fmt.Errorf("mailbox %s: %w", action, err)
	}
	return Invalidf("mailbox %s: %v", action, err)
}

// signalExit is the exit status of a verb its context's signal stopped:
// 128+n (the CLI cancels with a cause that carries it), else 143, as for
// SIGTERM.
func signalExit(ctx context.Context) int {
	if code := template.CauseExit(ctx); code > 0 {
		return code
	}
	return 128 + 15
}
