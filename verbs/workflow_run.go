package verbs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/pi-actors/pi-actors/internal/fsutil"
	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/workflows"
)

// Timings of a workflow's scheduler.
const (
	// schedulerLockWait bounds the wait for a previous scheduler of the
	// same workflow to let go of workflow.lock (it is being killed).
	schedulerLockWait = 30 * time.Second
	// inboxPoll is how often the scheduler looks for control.retry.
	inboxPoll = 100 * time.Millisecond
)

// RunWorkflow is the scheduler of the workflow run whose state directory
// is dir: the leaf of every workflow run (`pi-actors workflow run
// <state_dir>`, hidden). It takes the workflow's lock, opens (or resumes)
// workflow.json, applies control.retry messages from the run's inbox and
// runs the Engine until the workflow ends; transitions are printed to out
// (the run's stdout.log), a failed workflow's failed nodes to errw. The
// exit status is 0 when the workflow is done,
// 1 when it failed or was killed — its own status, so a restart policy of
// on-abnormal restarts the scheduler only when something killed it.
func RunWorkflow(ctx context.Context, env *Env, dir runs.Dir, out, errw io.Writer) (int, error) {
	meta, err := dir.Meta()
	if err != nil {
		return 1, err
	}
	if meta.Workflow == nil {
		return 1, fmt.Errorf("run:%s is not a workflow run (run.json has no workflow)", meta.Run)
	}
	w, err := workflows.Parse(meta.Workflow, WorkflowOptions(meta.Run))
	if err != nil {
		return 1, err
	}
	unlock, err := fsutil.LockTimeout(dir.Path(workflows.LockFile), schedulerLockWait)
	if err != nil {
		return 1, fmt.Errorf("another scheduler of run:%s holds %s: %w", meta.Run, workflows.LockFile, err)
	}
	defer unlock()
	instance := WorkflowInstance(meta)
	st, err := workflows.Open(string(dir), w, meta.Run, instance)
	if err != nil {
		return 1, err
	}
	e := &workflows.Engine{W: w, St: st, Host: newWorkflowHost(env, meta.Run, instance), Dir: string(dir), Log: out, LogFiles: runs.LogFiles,
		Failed: func(n *workflows.NodeState) { nodeFailed(dir, meta, n, out) },
		Ended:  func(n *workflows.NodeState) { nodeEnded(dir, n, out) },
		Paused: pausedMS(dir), Supervisor: SupervisorID(meta)}
	in := &workflowInbox{dir: dir, owner: meta.Address, out: out}
	// control.retry sent while no scheduler ran (it woke this one up).
	in.drain(func(node string) error { return e.Apply(node) })
	if st.Ended() {
		fmt.Fprintf(out, "workflow %s (%s); nothing to run\n", st.Status, st.Reason)
		return exitOf(st), nil
	}
	fmt.Fprintf(out, "workflow run:%s: %d nodes in %d layers, max_concurrency=%d fail_fast=%v\n", meta.Run, len(w.Nodes), len(w.Layers), w.Policy.MaxConcurrency, w.Policy.FailFast)
	for {
		pctx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			in.poll(pctx, func(node string) error {
				err := e.Retry(pctx, node)
				if err != nil && pctx.Err() != nil {
					return errRequeue // the engine ended first: applied below
				}
				return err
			})
		}()
		err = e.Run(ctx)
		stop()
		wg.Wait()
		if err != nil || ctx.Err() != nil {
			break
		}
		// A control.retry that came as the workflow ended is applied now
		// and the workflow goes on, rather than left queued or failed.
		in.drain(func(node string) error { return e.Apply(node) })
		if st.Ended() {
			break
		}
		fmt.Fprintf(out, "workflow run:%s goes on: a node is retried\n", meta.Run)
	}
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	if st.Status == workflows.StatusFailed {
		fmt.Fprintf(errw, "workflow run:%s %s\n", meta.Run, st.Reason)
	}
	fmt.Fprintf(out, "scheduler cpu_ms=%d\n", cpuMS())
	return exitOf(st), err
}

// cpuMS is the CPU this process used so far (user and system), in ms.
func cpuMS() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return (ru.Utime.Nano() + ru.Stime.Nano()) / 1e6
}

// WorkflowInstance names one workflow run instance (its createdAt): a
// later run with the same id is another workflow.
func WorkflowInstance(m *runs.Meta) string { return m.CreatedAt.UTC().Format(time.RFC3339Nano) }

func exitOf(st *workflows.State) int {
	if st.Status == workflows.StatusDone {
		return 0
	}
	return 1
}

// nodeFailed tells the workflow's owner that a node failed for good: a
// follow-up (an outbox record with delivery followup), once per node and
// attempt (its id is a token the follow-up queue deduplicates).
// nodeEnded records an ended attempt of a node (or a skipped node) in
// the workflow run's events: each attempt's run reuses the node run's
// state directory, so this is where the trace finds why a node ran again
// or did not run.
func nodeEnded(dir runs.Dir, n *workflows.NodeState, out io.Writer) {
	if err := runs.AppendEvent(dir, NodeEndEvent(n)); err != nil {
		fmt.Fprintf(out, "node %s: record its end in events.jsonl: %v\n", n.ID, err)
	}
}

// NodeEndEvent is the workflow.node event of a node attempt that ended
// (or a node skipped), for the workflow run's events.jsonl.
func NodeEndEvent(n *workflows.NodeState) map[string]any {
	ev := map[string]any{"event": "workflow.node", "node": n.ID, "status": n.Status, "attempt": n.Attempts}
	if n.Run != "" && n.Status != workflows.NodeSkipped {
		ev["run"] = n.Run
	}
	if n.ExitCode != nil {
		ev["code"] = *n.ExitCode
	}
	if n.Reason != "" {
		ev["reason"] = n.Reason
	}
	if n.Error != "" {
		ev["error"] = cutLine(n.Error, 300)
	}
	if n.Status == workflows.NodeBackoff && !n.NextAt.IsZero() {
		ev["retry_at"] = n.NextAt.UTC().Format(time.RFC3339Nano)
	}
	return ev
}

func nodeFailed(dir runs.Dir, meta *runs.Meta, n *workflows.NodeState, out io.Writer) {
	code := 0
	if n.ExitCode != nil {
		code = *n.ExitCode
	}
	retry := fmt.Sprintf(`pi-actors message to=run:%s type=control.retry body:='{"node":%q}'`, meta.Run, n.ID)
	body := map[string]any{"workflow": meta.Run, "node": n.ID, "run": n.Run, "exit_code": code, "attempts": n.Attempts,
		"error": n.Error, "reason": n.Reason, "output_file": n.OutputFile, "retry": retry}
	rec := mailbox.OutboxRecord{
		ID:       fmt.Sprintf("%s.%d.node.%s.%d.failed", meta.Run, meta.CreatedAt.UnixNano(), n.ID, n.Attempts),
		Delivery: mailbox.DeliveryFollowup, Level: mailbox.LevelError, Type: "workflow.node_failed", Event: "workflow.node_failed",
		From: meta.Address, To: "coordinator", Body: body,
		Summary: fmt.Sprintf("workflow node %s failed (exit %d, %d attempt(s)): %s; retry: %s", n.ID, code, n.Attempts, oneLine(n.Error, 200), retry),
	}
	if _, err := mailbox.AppendOutbox(dir.Path(runs.OutboxFile), rec); err != nil {
		fmt.Fprintf(out, "node %s: follow-up not written: %v\n", n.ID, err)
	}
}

// workflowInbox hands the workflow run's own messages to its scheduler:
// control.retry is applied, anything else is marked failed (a workflow
// run has no other consumer).
type workflowInbox struct {
	dir   runs.Dir
	owner string
	out   io.Writer
	size  int64
	mod   time.Time
}

// poll drains the inbox whenever it changed, until ctx ends.
func (in *workflowInbox) poll(ctx context.Context, retry func(string) error) {
	t := time.NewTicker(inboxPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		st, err := os.Stat(in.dir.Path(runs.InboxFile))
		if err != nil || (st.Size() == in.size && st.ModTime().Equal(in.mod)) {
			continue
		}
		in.size, in.mod = st.Size(), st.ModTime()
		in.drain(retry)
	}
}

// errRequeue is a retry's answer when the message must wait in the inbox
// for the next drain.
var errRequeue = errors.New("requeue")

// drain claims every queued message and applies it; a message its retry
// answers errRequeue goes back to the queue and the drain stops.
func (in *workflowInbox) drain(retry func(string) error) {
	box := mailbox.NewInbox(in.dir.Path(runs.InboxFile))
	for {
		rec, err := ClaimRunMessage(in.dir, in.owner)
		if err != nil {
			fmt.Fprintf(in.out, "inbox: %v\n", err)
			return
		}
		if rec == nil {
			return
		}
		err = in.apply(rec, retry)
		if errors.Is(err, errRequeue) {
			if err := box.Requeue([]string{rec.ID()}); err != nil {
				fmt.Fprintf(in.out, "inbox: requeue %s: %v\n", rec.ID(), err)
			}
			return
		}
		status, meta := mailbox.StatusHandled, map[string]any(nil)
		if err != nil {
			status, meta = mailbox.StatusFailed, map[string]any{"error": err.Error()}
			fmt.Fprintf(in.out, "inbox: %s %s: %v\n", rec.Type(), rec.ID(), err)
		}
		if err := box.Done(rec.ID(), status, meta); err != nil {
			fmt.Fprintf(in.out, "inbox: mark %s %s: %v\n", rec.ID(), status, err)
		}
	}
}

func (in *workflowInbox) apply(rec mailbox.Record, retry func(string) error) error {
	if rec.Type() != "control.retry" {
		return fmt.Errorf("a workflow run takes control.retry (and the supervisor's control.kill/cancel/restart); %s is not applied", rec.Type())
	}
	node, err := RetryNode(rec["body"])
	if err != nil {
		return err
	}
	return retry(node)
}

// RetryNode reads the node of a control.retry body: {"node": "<id>"}.
func RetryNode(body any) (string, error) {
	if b, ok := body.(json.RawMessage); ok {
		var v any
		if json.Unmarshal(b, &v) != nil {
			return "", Invalidf("control.retry: body must be {\"node\": \"<id>\"}")
		}
		body = v
	}
	obj, _ := body.(map[string]any)
	node, _ := obj["node"].(string)
	if node == "" {
		return "", Invalidf("control.retry: body must be {\"node\": \"<id>\"} naming the node to run again")
	}
	return node, nil
}

// pausedMS reads how long the run was suspended (progress.json's
// paused_ms) for the scheduler, which asks at every tick: the file is
// decoded again only when it changed (another inode, size or time).
func pausedMS(dir runs.Dir) func() int64 {
	var last os.FileInfo
	var v int64
	return func() int64 {
		fi, err := os.Stat(dir.Path(runs.ProgressFile))
		if err != nil {
			return dir.PausedMS()
		}
		if last == nil || !os.SameFile(fi, last) || !fi.ModTime().Equal(last.ModTime()) || fi.Size() != last.Size() {
			last, v = fi, dir.PausedMS()
		}
		return v
	}
}

// SupervisorID names a workflow run's supervisor for the scheduler's
// pause accounting (workflows.Engine.Supervisor): its pid and start time.
func SupervisorID(m *runs.Meta) string { return fmt.Sprintf("%d:%d", m.Pid, m.PidStart) }
