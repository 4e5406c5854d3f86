package swarm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/pi-actors/pi-actors/internal/fsutil"
	"github.com/pi-actors/pi-actors/internal/lazyre"
	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/rooms"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs"
)

// Worker files in its run's state dir.
const (
	WorkerStatusFile = "worker-status.json"
	WorkerEventsFile = "worker-events.jsonl"
	resultChars      = 2000 // of a task's output quoted in task.result
)

// worker is one actor-worker.
type worker struct {
	*actor
	room, roomDir string // the room's run and its state dir
	branch, addr  string // branch:<room>/<branch>
	locker        string // the locker's run id, "" without
	poll          time.Duration
	wait          time.Duration // how long a lock.claim waits at the locker for a task
	staleClaim    time.Duration
	artifacts     string
	write, notify bool

	asking  bool      // a lock.claim awaits its answer
	askedAt time.Time // when it was sent
	nextAsk time.Time // when to ask again after lock.empty
	status  workerStatus
	// joined: its actor.join is posted; left: its actor.leave is.
	joined, left bool
}

// workerStatus is worker-status.json.
type workerStatus struct {
	ArtifactDir string `json:"artifact_dir"`
	Branch      string `json:"branch"`
	Room        string `json:"room"`
	Run         string `json:"run"`
	State       string `json:"state"`
	Handled     int    `json:"handled"`
	Failed      int    `json:"failed"`
	StaleClaims int    `json:"stale_claims"`
	LastID      string `json:"last_id,omitempty"`
	LastType    string `json:"last_type,omitempty"`
	LastCode    *int   `json:"last_code,omitempty"`
	TS          string `json:"ts"`
}

// Worker runs an actor-worker until control.kill reaches its branch
// inbox or ctx ends. Parameters: room (the room's run id; default this
// run's), branch (default worker), locker (a locker's run id: ask it for
// tasks), poll_ms (1000, min 50), wait_ms (30000: how long a claim the
// locker cannot serve waits there for a task; 0: ask again every
// poll_ms), stale_claim_ms (0: off), artifact_dir
// (<state dir>/worker-artifacts), write_artifacts (true),
// notify_coordinator (true: each task.result also goes to=coordinator).
func Worker(ctx context.Context, env *verbs.Env, o Options) error {
	if err := o.check("worker", "room", "branch", "locker", "poll_ms", "wait_ms", "stale_claim_ms", "artifact_dir", "write_artifacts", "notify_coordinator"); err != nil {
		return err
	}
	a, err := newActor(env)
	if err != nil {
		return err
	}
	w := &worker{actor: a, room: o.str("room", a.run), branch: o.str("branch", "worker"), locker: o.str("locker", "")}
	pollMS, err := o.int("poll_ms", 1000)
	if err != nil {
		return err
	}
	staleMS, err := o.int("stale_claim_ms", 0)
	if err != nil {
		return err
	}
	waitMS, err := o.int("wait_ms", 30000)
	if err != nil {
		return err
	}
	if waitMS < 0 || waitMS > int(maxWait.Milliseconds()) {
		return usagef("wait_ms must be 0 to %d (got %d)", maxWait.Milliseconds(), waitMS)
	}
	w.wait = time.Duration(waitMS) * time.Millisecond
	w.poll, w.staleClaim = time.Duration(max(pollMS, 50))*time.Millisecond, time.Duration(max(staleMS, 0))*time.Millisecond
	if w.write, err = o.bool("write_artifacts", true); err != nil {
		return err
	}
	if w.notify, err = o.bool("notify_coordinator", true); err != nil {
		return err
	}
	w.artifacts = o.str("artifact_dir", a.dir.Path("worker-artifacts"))
	w.addr = "branch:" + w.room + "/" + w.branch
	if _, err := mailbox.Parse(w.addr); err != nil {
		return usagef("room and branch must be ids (letters, digits, . _ -): %v", err)
	}
	in, err := runs.Access(env.AgentDir, w.room, env.Session)
	if err != nil {
		return fmt.Errorf("worker: room:%s: %w", w.room, err)
	}
	w.roomDir = string(in.Dir)
	w.status = workerStatus{ArtifactDir: w.artifacts, Branch: w.branch, Room: "room:" + w.room, Run: a.self}
	err = w.loop(ctx)
	if err != nil && w.joined && !w.left {
		// The roster says it is gone (it read present for ever).
		w.leave("failed: " + cutText(err.Error(), 200))
	}
	return err
}

// loop joins the room and handles the branch inbox until told to stop.
func (w *worker) loop(ctx context.Context) error {
	if err := w.join(); err != nil {
		return err
	}
	fw := watcher(rooms.BranchDir(w.roomDir, w.branch))
	if fw != nil {
		defer fw.Close()
	}
	for {
		if ctx.Err() != nil {
			return w.leave("cancelled")
		}
		rec, err := rooms.ClaimBranch(w.roomDir, w.addr, w.addr, os.Getpid())
		if err != nil {
			return fmt.Errorf("worker: claim from %s: %w", w.addr, err)
		}
		if rec == nil {
			if w.parentEnded() {
				// Its swarm is gone (killed): the room may take no post.
				w.leave("parent_ended")
				return nil
			}
			if err := w.maybeAsk(); err != nil {
				return err
			}
			waitChange(ctx, fw, w.poll)
			continue
		}
		stop, err := w.handle(ctx, rec)
		if err != nil {
			return err
		}
		if stop {
			return w.leave(rec.Type())
		}
	}
}

// join posts actor.join (role worker) and awaiting_assignment.
func (w *worker) join() error {
	w.setState("started")
	w.event(WorkerEventsFile, map[string]any{"event": "worker.started", "branch": w.addr})
	join := map[string]any{"role": "worker", "display": w.branch, "parent": "run:" + w.room, "status": "present", "run": w.self}
	if _, err := w.post("actor.join", "worker "+w.branch+" joined", join); err != nil {
		return err
	}
	w.joined = true
	return w.awaiting()
}

// awaiting posts awaiting_assignment.
func (w *worker) awaiting() error {
	w.setState("waiting")
	_, err := w.post("awaiting_assignment", w.branch+" is waiting for a task",
		map[string]any{"branch": w.branch, "stale_claim_ms": w.staleClaim.Milliseconds(), "stale_claims": w.status.StaleClaims})
	return err
}

// post sends a room message from the worker's branch.
func (w *worker) post(typ, summary string, b any) (*verbs.Delivery, error) {
	return w.send(&verbs.Message{To: "room:" + w.room, Type: typ, From: w.addr, Summary: verbs.Text(summary), Body: body(b)})
}

// maybeAsk asks the locker for a task when none is asked for (or an
// answer is overdue). The claim waits at the locker up to wait for a
// task, so an idle worker asks once per wait, not once per poll: each
// answer is a message to its branch, copied to the room's run inbox.
func (w *worker) maybeAsk() error {
	now := w.clock()
	if w.locker == "" || now.Before(w.nextAsk) || (w.asking && now.Sub(w.askedAt) < w.wait+10*w.poll) {
		return nil
	}
	b := map[string]any{"owner": w.addr}
	if w.wait > 0 {
		b["wait_ms"] = w.wait.Milliseconds()
	}
	_, err := w.send(&verbs.Message{To: "run:" + w.locker, Type: "lock.claim", From: w.self, ReplyTo: verbs.Text(w.addr),
		Body: body(b)})
	if err != nil {
		return err
	}
	w.asking, w.askedAt = true, now
	return nil
}

// handle acts on one message of the branch inbox; true means stop.
func (w *worker) handle(ctx context.Context, rec mailbox.Record) (bool, error) {
	done := func(status string, meta map[string]any) error {
		return rooms.DoneBranchBy(w.roomDir, w.addr, rec.ID(), w.addr, status, meta)
	}
	switch rec.Type() {
	case "control.kill":
		return true, done(mailbox.StatusHandled, nil)
	case "task.assign", "lock.assigned":
		if rec.Type() == "lock.assigned" {
			w.asking = false
		}
		return false, w.task(ctx, rec)
	case "lock.empty":
		w.asking, w.nextAsk = false, w.clock().Add(w.poll)
		return false, done(mailbox.StatusHandled, nil)
	case "lock.denied", "lock.enqueued", "lock.completed", "lock.failed", "lock.status":
		return false, done(mailbox.StatusHandled, nil)
	}
	return false, done(mailbox.StatusFailed, map[string]any{"error": "the actor-worker does not handle " + rec.Type() + " (it accepts task.assign, lock.assigned, lock.empty, control.kill)"})
}

// task runs one task: task.claim to the room, the command, the artifact,
// the locker's lock.complete or lock.fail, task.result to the room (and
// the coordinator), the branch message handled or failed.
func (w *worker) task(ctx context.Context, rec mailbox.Record) error {
	var (
		code           int
		output, runErr string
		lost           bool
	)
	t, bad := taskOf(rec)
	if bad == nil && t.Locker != "" && past(t.ExpiresAt, w.clock()) {
		// Its lease ran out before it was run (a worker that died with
		// it, started again): the locker has handed it out again, maybe
		// finished it — running it now would do it twice.
		w.event(WorkerEventsFile, map[string]any{"event": "task.lease_expired", "id": t.ID, "expires_at": t.ExpiresAt})
		if err := rooms.DoneBranchBy(w.roomDir, w.addr, rec.ID(), w.addr, mailbox.StatusHandled, map[string]any{"skipped": "the locker's lease ran out before it was run"}); err != nil && !errors.Is(err, mailbox.ErrTransition) {
			return err
		}
		return w.awaiting()
	}
	if bad != nil {
		// No command to run: it fails as a task does (65), so the locker
		// hears lock.fail and the room task.result — a locker's lease
		// handed the task out again for ever, and the room never heard.
		code, runErr = 65, bad.Error()
	} else {
		w.setState("working")
		if _, err := w.post("task.claim", w.branch+" took "+t.ID, map[string]any{"id": t.ID, "branch": w.branch}); err != nil {
			return err
		}
		stop, stopLease := w.keepClaim(rec.ID()), w.keepLease(t)
		code, output, runErr = w.execute(ctx, t)
		stopLease()
		lost = stop()
	}
	artifact := ""
	if w.write && bad == nil {
		artifact = filepath.Join(w.artifacts, safeName(t.ID)+".txt")
		if err := os.MkdirAll(w.artifacts, 0o700); err == nil {
			err = fsutil.WriteFile(artifact, []byte(output), 0o600)
		}
	}
	result := map[string]any{"artifact": artifact, "branch": w.branch, "id": t.ID, "result": cutText(output, resultChars), "code": code, "type": rec.Type()}
	if runErr != "" {
		result["error"] = runErr
	}
	// The locker hears first: its lock.complete is in the locker's inbox
	// before the room shows the result, so a coordinator that stops the
	// locker once every result is in never stops it before it is told.
	if t.Locker != "" {
		typ := "lock.complete"
		if code != 0 {
			typ = "lock.fail"
		}
		lb := map[string]any{"id": t.ID, "owner": w.addr, "code": code, "artifact": artifact}
		if runErr != "" {
			lb["error"] = runErr
		}
		if _, err := w.send(&verbs.Message{To: "run:" + t.Locker, Type: typ, From: w.self, Body: body(lb)}); err != nil {
			return err
		}
	}
	summary := fmt.Sprintf("%s: %s by %s code=%d", "task.result", t.ID, w.branch, code)
	if _, err := w.post("task.result", summary, result); err != nil {
		return err
	}
	if w.notify {
		if _, err := w.send(&verbs.Message{To: "coordinator", Type: "task.result", From: w.self, Summary: verbs.Text(summary), Body: body(result)}); err != nil {
			return err
		}
	}
	status, meta := mailbox.StatusHandled, map[string]any{"code": code}
	w.status.LastID, w.status.LastType, w.status.LastCode = t.ID, rec.Type(), &code
	if code != 0 {
		status, meta["error"] = mailbox.StatusFailed, fmt.Sprintf("exit %d %s", code, runErr)
		w.status.Failed++
		w.event(WorkerEventsFile, map[string]any{"event": "task.failed", "id": t.ID, "code": code})
	} else {
		w.status.Handled++
		w.event(WorkerEventsFile, map[string]any{"event": "task.handled", "id": t.ID, "artifact": artifact})
	}
	if lost {
		// Another claimer holds the message now: finishing it is theirs.
		return w.awaiting()
	}
	if err := rooms.DoneBranchBy(w.roomDir, w.addr, rec.ID(), w.addr, status, meta); err != nil {
		if !errors.Is(err, mailbox.ErrTransition) {
			return err
		}
		// Taken over since the last renewal: finishing it is theirs.
		w.event(WorkerEventsFile, map[string]any{"event": "task.lease_lost", "id": rec.ID(), "error": err.Error()})
	}
	return w.awaiting()
}

// keepClaim renews the claim of the branch message being worked on every
// third of the claim lease (rooms.Limits.ClaimLease), so a task that runs
// longer than a lease is not taken over by another claimer; stop ends the
// renewals, waits for them and reports whether the claim was lost. A
// renewal that finds the claim taken over is recorded (task.lease_lost)
// and ends the renewals.
func (w *worker) keepClaim(id string) (stop func() (lost bool)) {
	lease := rooms.EnvLimits().ClaimLease
	if lease <= 0 {
		return func() bool { return false }
	}
	var lostIt atomic.Bool
	end := every(lease/3, func() bool {
		err := rooms.RenewBranch(w.roomDir, w.addr, id, w.addr)
		if errors.Is(err, mailbox.ErrTransition) || errors.Is(err, mailbox.ErrNotFound) {
			w.event(WorkerEventsFile, map[string]any{"event": "task.lease_lost", "id": id, "error": err.Error()})
			lostIt.Store(true)
			return false
		}
		return true // renewed, or a busy lock: the next tick tries again
	})
	return func() bool {
		end()
		return lostIt.Load()
	}
}

// keepLease renews the locker's lease of a task being run every third of
// the lease (lock.renew), so a task longer than the lease is not handed to
// another claimer while it runs; stop ends the renewals. A direct
// task.assign (no locker) has none.
func (w *worker) keepLease(t task) (stop func()) {
	if t.Locker == "" || t.LeaseMS <= 0 {
		return func() {}
	}
	return every(time.Duration(t.LeaseMS)*time.Millisecond/3, func() bool {
		b := map[string]any{"id": t.ID, "owner": w.addr, "lease_ms": t.LeaseMS}
		if _, err := w.send(&verbs.Message{To: "run:" + t.Locker, Type: "lock.renew", From: w.self, Body: body(b)}); err != nil {
			w.event(WorkerEventsFile, map[string]any{"event": "task.renew_failed", "id": t.ID, "error": err.Error()})
		}
		return true
	})
}

// every calls fn every period (at least 10 ms) until fn returns false or
// stop is called; stop waits for a call under way to end.
func every(period time.Duration, fn func() bool) (stop func()) {
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		t := time.NewTicker(max(period, 10*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			if !fn() {
				return
			}
		}
	}()
	return func() {
		close(done)
		<-ended
	}
}

// execute runs a task's command template in the foreground, as exec
// does; it returns the exit code, the bounded output and the failure.
func (w *worker) execute(ctx context.Context, t task) (int, string, string) {
	env := *w.env
	env.Stream, env.Stderr, env.JSON = nil, nil, true
	out, err := verbs.Find("exec").Run(ctx, &env, &verbs.Exec{Template: t.Template, Values: t.Values})
	if err != nil {
		return 2, "", verbs.Classify(err).Message
	}
	res, _ := out.Result.(map[string]any)
	text, _ := res["output"].(string)
	msg := ""
	if out.Fail != nil {
		msg = out.Fail.Message
	}
	return out.Exit, text, msg
}

// leave posts actor.leave and records the end.
func (w *worker) leave(reason string) error {
	w.left = true
	w.setState("stopping")
	w.event(WorkerEventsFile, map[string]any{"event": "worker.stopping", "reason": reason})
	_, err := w.post("actor.leave", w.branch+" left ("+reason+")", map[string]any{"branch": w.branch, "reason": reason})
	w.setState("done")
	w.event(WorkerEventsFile, map[string]any{"event": "worker.done", "handled": w.status.Handled, "failed": w.status.Failed})
	return err
}

// setState rewrites worker-status.json.
func (w *worker) setState(state string) {
	w.status.State, w.status.TS = state, w.clock().UTC().Format(time.RFC3339Nano)
	if w.staleClaim > 0 {
		w.status.StaleClaims = w.staleClaims()
	}
	if err := fsutil.WriteJSON(w.dir.Path(WorkerStatusFile), w.status, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
	}
}

// staleClaims counts the branch inbox's records claimed longer than
// stale_claim_ms ago.
func (w *worker) staleClaims() int {
	v, err := rooms.BranchMailbox(w.roomDir, w.addr, 200)
	if err != nil {
		return 0
	}
	n := 0
	for _, r := range v.Messages {
		at, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(r["claimed_at"]))
		if r.Status() == mailbox.StatusClaimed && !at.IsZero() && w.clock().Sub(at) > w.staleClaim {
			n++
		}
	}
	return n
}

// task is one unit of work: a command template and its values.
type task struct {
	ID       string
	Template any
	Values   map[string]any
	Locker   string // the locker that leased it ("" for a direct task.assign)
	// LeaseMS and ExpiresAt are the locker's lease of it (lock.assigned).
	LeaseMS   int64
	ExpiresAt string
}

// taskOf reads a task from a message: body {id?, task: {template,
// values}} (as the locker sends it), body {id?, template, values}, or a
// string body (the template).
func taskOf(rec mailbox.Record) (task, error) {
	t := task{ID: rec.ID()}
	var b any = rec["body"]
	if s, ok := b.(string); ok {
		t.Template = s
		return t, nil
	}
	m, _ := b.(map[string]any)
	if id, ok := m["id"].(string); ok && id != "" {
		t.ID = id
	}
	if l, ok := m["locker"].(string); ok {
		t.Locker = strings.TrimPrefix(l, "run:")
	}
	if n, ok := msOf(m["lease_ms"]); ok {
		t.LeaseMS = int64(n)
	}
	t.ExpiresAt, _ = m["expires_at"].(string)
	if inner, ok := m["task"].(map[string]any); ok {
		m = inner
	} else if s, ok := m["task"].(string); ok {
		m = map[string]any{"template": s}
	}
	t.Template = m["template"]
	t.Values, _ = m["values"].(map[string]any)
	if t.Template == nil {
		raw, _ := json.Marshal(rec["body"])
		return t, fmt.Errorf("task %s has no command template: body %s (want {template, values}, {task: {template, values}} or a string)", t.ID, cutText(string(raw), 200))
	}
	return t, nil
}

var unsafeName = lazyre.New(`[^A-Za-z0-9_.-]+`)

// safeName makes an id a file name.
func safeName(id string) string {
	s := strings.Trim(unsafeName.ReplaceAllString(id, "_"), ".")
	if s == "" {
		return "task"
	}
	return s
}

// cutText bounds a text to n characters.
func cutText(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
