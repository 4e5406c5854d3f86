package actors

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/recipes"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs"
	"github.com/pi-actors/pi-actors/verbs/wire"
	"github.com/pi-actors/pi-actors/workflows"
)

// A workflow run is a run whose leaf is its scheduler (`pi-actors
// workflow run <state_dir>`, package verbs): the kernel checks the
// workflow whole before anything starts, starts its run with a restart
// policy that brings a killed scheduler back (on-abnormal), resumes it
// when its supervisor is lost, kills its node runs with it, and wakes it
// for control.retry once it ended. Its nodes' runs are ordinary runs the
// scheduler spawns (with workflow_node set): the kernel starts each
// attempt at most once, and only while its workflow is live.

// workflowTemplate is a workflow run's leaf.
const workflowTemplate = "{pi_actors} workflow run {state_dir}"

// workflowRestart brings the scheduler back when something killed it;
// the scheduler ends the run itself (exit 0 or 1) when the workflow ends.
func workflowRestart() *runs.Restart {
	return &runs.Restart{Policy: "on-abnormal", BackoffMS: 200, MaxBackoffMS: 5000, Jitter: 0.1, ResetAfterMS: 30000, Burst: 20, WindowMS: 600000}
}

// maxResumes bounds how often the kernel resumes a workflow whose
// supervisor keeps getting lost.
const maxResumes = 50

// workflowGuard keeps node runs from starting while their workflow is
// being killed: node spawns hold it shared while they check their
// workflow and start, a kill marks the workflow under it exclusively.
type workflowGuard struct {
	mu      sync.RWMutex
	killing map[string]bool
}

func (g *workflowGuard) mark(run string, killing bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.killing == nil {
		g.killing = map[string]bool{}
	}
	if killing {
		g.killing[run] = true
	} else {
		delete(g.killing, run)
	}
}

// workflowEnds orders the two sides of a control.retry sent as a workflow
// run ends: the message, queued in the run's inbox while the run was live
// (its scheduler drains the inbox after its last step, but a message can
// land after that drain and before the supervisor's result), and the run
// actor's handling of the end. Whichever comes second under mu sees the
// other's write: the end finds the retry queued, or the message finds the
// end handled (ended: the instance whose end was handled without one).
type workflowEnds struct {
	mu    sync.Mutex
	ended map[runs.Dir]string
}

// endOrRetry handles the end of a workflow run (its run actor): when a
// control.retry waits in its inbox unclaimed (and the run was not stopped
// on purpose) a new scheduler is started to apply it and it reports true;
// else nothing of the workflow outlives it (endWorkflow). A run resumed
// meanwhile (a retry sent once it had ended) is left to its new
// supervisor: true.
func (k *Kernel) endOrRetry(in *runs.Info) bool {
	k.wfEnd.mu.Lock()
	defer k.wfEnd.mu.Unlock()
	if cur, err := runs.Load(in.Dir); err == nil && !sameInstance(cur.Meta, in.Meta) {
		return true // resumed: its new supervisor's actor has it
	}
	if k.resumeQueuedRetry(in) {
		return true
	}
	k.endWorkflow(in)
	if k.wfEnd.ended == nil {
		k.wfEnd.ended = map[runs.Dir]string{}
	}
	k.wfEnd.ended[in.Dir] = instanceOf(in.Meta)
	return false
}

// retryAtEnd is the message side: a control.retry queued for a workflow
// run that was live when it was sent; if the run's end was handled since,
// without seeing it, a new scheduler is started to apply it (true).
func (k *Kernel) retryAtEnd(dir runs.Dir, meta *runs.Meta) bool {
	k.wfEnd.mu.Lock()
	defer k.wfEnd.mu.Unlock()
	if k.wfEnd.ended[dir] != instanceOf(meta) {
		return false // live, or its end is not handled yet: the end sees the retry
	}
	cur, err := runs.Load(dir)
	if err != nil || cur.Live() || !k.resumeQueuedRetry(cur) {
		return false
	}
	delete(k.wfEnd.ended, dir)
	return true
}

// resumeQueuedRetry starts a new scheduler for an ended workflow run
// whose inbox holds a control.retry no scheduler claimed (not for a run
// stopped on purpose); it reports whether it did.
func (k *Kernel) resumeQueuedRetry(in *runs.Info) bool {
	if in.Status == runs.StatusKilled || in.Status == runs.StatusCancelled || !retryQueued(in.Dir) {
		return false
	}
	if err := k.resumeWorkflow(in, "control.retry"); err != nil {
		k.log.Warn("resume workflow for a control.retry sent as it ended", "run", in.Meta.Run, "err", err)
		return false
	}
	return true
}

// resumeEnded resumes an ended workflow run for a control.retry (the
// message side, the run seen ended), under the same order as the end.
func (k *Kernel) resumeEnded(in *runs.Info) error {
	k.wfEnd.mu.Lock()
	defer k.wfEnd.mu.Unlock()
	delete(k.wfEnd.ended, in.Dir)
	return k.resumeWorkflow(in, "control.retry")
}

// retryQueued reports whether a workflow run's inbox holds a
// control.retry no scheduler claimed (among its last 200 lines).
func retryQueued(dir runs.Dir) bool {
	recs, _, err := mailbox.NewInbox(dir.Path(runs.InboxFile)).List(200)
	if err != nil {
		return false
	}
	for _, r := range recs {
		if r.Type() == "control.retry" && r.Status() == mailbox.StatusQueued {
			return true
		}
	}
	return false
}

// prepareWorkflow builds the run spec of a workflow spawn (workflow=, or
// a recipe whose file holds a workflow): the workflow is read and checked
// whole, then every node's spawn as the kernel would check it, so a bad
// node starts nothing.
func (k *Kernel) prepareWorkflow(req wire.Request, p *verbs.Spawn, rec *recipes.Recipe) (runs.Spec, error) {
	var spec runs.Spec
	raw := p.Workflow
	if rec != nil && p.Workflow == nil {
		raw = rec.Workflow
	}
	if path, ok := raw.(string); ok {
		obj, err := verbs.ReadWorkflow(path, req.Cwd)
		if err != nil {
			return spec, err
		}
		raw = obj
	}
	id, err := k.runID(p, rec)
	if err != nil {
		return spec, err
	}
	if p.As == "" && p.RunID == "" && rec == nil {
		id = k.stampID("workflow")
	}
	w, err := workflows.Parse(raw, verbs.WorkflowOptions(id))
	if err != nil {
		return spec, err
	}
	dir := runs.StateDirFor(k.cfg.AgentDir, id)
	if p.StateDir != "" {
		spec.StateDir = absFrom(req.Cwd, p.StateDir)
		dir = runs.Dir(spec.StateDir)
	}
	depth, err := k.spawnLimits(req, id, spec.StateDir)
	if err != nil {
		return spec, err
	}
	// Each node's state_dir is its own: two runs in one directory clear
	// and overwrite each other's files.
	dirs := map[string]string{filepath.Clean(string(dir)): "the workflow run"}
	for _, n := range w.Nodes {
		nd, err := k.checkNode(req, w, n, id, depth)
		if err != nil {
			return spec, err
		}
		if nd == "" {
			continue
		}
		if other, ok := dirs[nd]; ok {
			return spec, nodeErr(n.ID, fmt.Errorf("%w: state_dir=%s is %s's state directory too; give each node its own, or leave state_dir out for <agent>/tmp/pi-actors/runs/<id>", runs.ErrStateDir, nd, other))
		}
		dirs[nd] = "node " + n.ID
	}
	cfg := k.conf()
	spec.ID, spec.Cwd, spec.Owner, spec.Depth, spec.Env = id, req.Cwd, req.Session, depth, k.runEnv(req.Env)
	spec.Parent = envString(req.Env, "PI_ACTORS_RUN_ID")
	spec.Template, spec.Values = workflowTemplate, injected(id, dir, k.cliBinary())
	spec.Restart, spec.Workflow, spec.LaunchSource, spec.Supervisor = workflowRestart(), raw, "spawn", k.cfg.Supervisor
	if rec != nil {
		spec.Recipe, spec.RecipeFile = rec.ID, rec.Path
	}
	spec.Limits = runs.Limits{MaxParallel: cfg.Exec.MaxParallelBranches, MaxLeaves: cfg.Exec.MaxLeaves, KillGraceMS: cfg.Exec.KillGraceMS,
		LogMaxBytes: cfg.Runs.LogMaxBytes, LogKeep: cfg.Runs.LogKeep}
	k.wf.mark(id, false) // a new workflow with this id may start nodes
	return spec, nil
}

// checkNode checks a node's spawn as its scheduler will send it (no
// upstream output yet): its recipe is found, its template plans, its
// values fit, its restart policy parses, its depth is allowed. It
// returns the node's state_dir (absolute), "" when it has none of its own.
func (k *Kernel) checkNode(req wire.Request, w *workflows.Workflow, n *workflows.Node, run string, depth int) (string, error) {
	params := w.SpawnParams(n, run, func(string) workflows.Upstream { return workflows.Upstream{} })
	params["workflow_node"] = runs.NodeRef{Workflow: run, Node: n.ID}
	b, err := json.Marshal(params)
	if err != nil {
		return "", fmt.Errorf("workflow node %s: %w", n.ID, err)
	}
	r, err := verbs.Find("spawn").DecodeJSON(b)
	if err == nil {
		err = r.Validate()
	}
	if err != nil {
		return "", nodeErr(n.ID, err)
	}
	sp := r.(*verbs.Spawn)
	if (sp.Node != "" || sp.Placement == "spread") && k.cluster == nil {
		return "", nodeErr(n.ID, k.errNotClustered("node= or placement=spread"))
	}
	child := req
	// As the scheduler asks: from inside the workflow run. No session, so
	// the session's live-run count is left to the real start.
	child.Session = ""
	child.Env = append(append([]string{}, req.Env...), "PI_ACTORS_RUN_ID="+run, "PI_ACTORS_DEPTH="+strconv.Itoa(depth))
	spec, _, err := k.prepareSpec(child, sp)
	if err != nil {
		return "", nodeErr(n.ID, err)
	}
	if sp.StateDir == "" {
		return "", nil
	}
	// Whether it can be made, up front: the node's spawn comes later.
	if err := runs.CheckStateDir(k.cfg.AgentDir, spec.ID, spec.StateDir); err != nil {
		return "", nodeErr(n.ID, err)
	}
	return filepath.Clean(string(runs.Dir(spec.StateDir))), nil
}

// nodeErr names the node in an error, keeping its exit code.
func nodeErr(node string, err error) error {
	e := verbs.Classify(err)
	c := *e
	c.Message = "workflow node " + node + ": " + e.Message
	return &c
}

// nodeSpawn guards the spawn of a workflow node's run: an attempt whose
// run exists already is answered with it (never started twice), and a
// node of a workflow that is not live, is another instance or is being
// killed does not start. release is called once the run started.
func (k *Kernel) nodeSpawn(req wire.Request, p *verbs.Spawn) (done *verbs.SpawnResult, release func(), err error) {
	ref := p.WorkflowNode
	if in := k.attemptRun(req, p); in != nil {
		m := in.Meta
		return &verbs.SpawnResult{Address: m.Address, Run: m.Run, Status: in.Status, Pid: m.Pid, StateDir: string(in.Dir), Recipe: m.Recipe}, nil, nil
	}
	k.wf.mu.RLock()
	release = k.wf.mu.RUnlock
	parent, err := runs.Access(k.cfg.AgentDir, ref.Workflow, req.Session)
	switch {
	case err != nil:
		release()
		return nil, nil, err
	case parent.Meta.Workflow == nil:
		release()
		return nil, nil, &wire.Error{Code: "invalid_data", Exit: 65, Message: fmt.Sprintf("spawn: workflow_node names run:%s, which is not a workflow run", ref.Workflow)}
	case !parent.Live() || k.wf.killing[ref.Workflow] || verbs.WorkflowInstance(parent.Meta) != ref.Instance:
		release()
		return nil, nil, &wire.Error{Code: "conflict", Exit: 75, Message: fmt.Sprintf("spawn: workflow run:%s (instance %s) is %s or being stopped; its node %s does not start", ref.Workflow, ref.Instance, parent.Status, ref.Node)}
	}
	return nil, release, nil
}

// attemptRun is the run of this workflow node attempt, if it exists.
func (k *Kernel) attemptRun(req wire.Request, p *verbs.Spawn) *runs.Info {
	a, err := mailbox.Parse(p.As)
	if err != nil || a.Kind != "run" {
		return nil
	}
	dir := runs.StateDirFor(k.cfg.AgentDir, a.ID)
	if p.StateDir != "" {
		dir = runs.Dir(absFrom(req.Cwd, p.StateDir))
	}
	m, err := dir.Meta()
	if err != nil || m.WorkflowNode == nil || !m.WorkflowNode.SameAttempt(*p.WorkflowNode) {
		return nil
	}
	in, err := runs.Load(dir)
	if err != nil {
		return nil
	}
	return in
}

// saveWorkflowEnv keeps the environment a workflow run was started with:
// a resumed scheduler (and so every node it starts later) gets it again.
func saveWorkflowEnv(dir runs.Dir, env []string) error {
	return dir.WriteJSON(workflows.EnvFile, env)
}

func workflowEnv(dir runs.Dir) []string {
	var env []string
	if dir.ReadJSON(workflows.EnvFile, &env) == nil && len(env) > 0 {
		return env
	}
	return os.Environ()
}

// resumeLimit refuses a resume past maxResumes (each is a new scheduler
// on the same state dir; a workflow that needs more is spawned again).
func resumeLimit(in *runs.Info) error {
	if in.Meta.Resumes < maxResumes {
		return nil
	}
	return &wire.Error{Code: "resume_limit", Exit: 75, Message: fmt.Sprintf("run:%s was resumed %d times already (the limit of a workflow run)", in.Meta.Run, in.Meta.Resumes),
		Hint: "spawn the workflow again under a new id, or rm it and spawn it again under this one"}
}

// resumeWorkflow starts a new supervisor (and so a new scheduler) on a
// workflow run's state dir, keeping its workflow.json and inbox: after
// its supervisor was lost, or to apply a control.retry once it ended.
func (k *Kernel) resumeWorkflow(in *runs.Info, reason string) error {
	if err := resumeLimit(in); err != nil {
		return err
	}
	k.wf.mark(in.Meta.Run, false)
	return k.resumeRun(in, k.runEnv(workflowEnv(in.Dir)), reason)
}

// resumeRun starts a new supervisor on the state dir of a run whose
// supervisor is gone (runs.Resume) with environment env, and attaches
// the run again: actor, follow-up state, index.
func (k *Kernel) resumeRun(in *runs.Info, env []string, reason string) error {
	meta, proc, err := runs.Resume(in.Dir, k.cfg.Supervisor, env, reason)
	if err != nil {
		return err
	}
	// The next end is a new transition to report (its follow-up id counts
	// the resumes); outbox lines already reported stay reported.
	n := loadNotified(in.Dir, meta)
	n.Terminal = ""
	if err := in.Dir.WriteJSON(runs.NotifiedFile, n); err != nil {
		k.log.Warn("write notified.json", "run", meta.Run, "err", err)
	}
	fut := k.system.Root.RequestFuture(k.runs, &attachRun{dir: in.Dir, meta: meta, proc: proc}, 5*time.Second)
	if _, err := fut.Result(); err != nil {
		k.log.Warn("attach run actor", "run", meta.Run, "err", err)
	}
	k.runCache.Delete(meta.Run)
	if err := k.index.Record(runs.Entry{Run: meta.Run, StateDir: meta.StateDir, Status: runs.StatusRunning, OwnerID: meta.OwnerID, Recipe: meta.Recipe, Tool: meta.Tool}); err != nil {
		k.log.Warn("index", "err", err)
	}
	k.log.Info("run resumed", "run", meta.Run, "reason", reason, "resumes", meta.Resumes)
	return nil
}

// resumeLost resumes a workflow run whose supervisor died without a
// result (what it left is killed first); false when it cannot be.
func (k *Kernel) resumeLost(in *runs.Info) bool {
	if in.Meta.Workflow == nil || in.Status == runs.StatusKilled || in.Status == runs.StatusCancelled {
		return false
	}
	k.killLeftovers(in)
	if err := k.resumeWorkflow(in, "supervisor_lost"); err != nil {
		k.log.Warn("resume workflow", "run", in.Meta.Run, "err", err)
		return false
	}
	return true
}

// checkWorkflowControl checks, before anything is stored or held, the
// messages whose meaning depends on the run being a workflow:
// control.retry (only a workflow run takes it, for a node that ended
// badly) and control.restart (a running workflow is not restarted: its
// scheduler's restart would end it killed).
func checkWorkflowControl(in *runs.Info, env mailbox.Envelope) error {
	id := in.Meta.Run
	switch {
	case env.Type == "control.retry" && in.Meta.Workflow != nil:
		return checkRetry(in, env)
	case env.Type == "control.retry" && in.Meta.WorkflowNode != nil:
		wf := in.Meta.WorkflowNode.Workflow
		return &wire.Error{Code: "invalid_envelope", Exit: 65, Message: fmt.Sprintf("control.retry goes to the workflow run: run:%s is node %s of run:%s", id, in.Meta.WorkflowNode.Node, wf),
			Hint: fmt.Sprintf("message to=run:%s type=control.retry body:='{\"node\":\"%s\"}'", wf, in.Meta.WorkflowNode.Node)}
	case env.Type == "control.retry":
		return &wire.Error{Code: "invalid_envelope", Exit: 65, Message: fmt.Sprintf("control.retry re-runs a node of a workflow run; run:%s is not a workflow", id),
			Hint: "restart a run's command: message to=run:" + id + " type=control.restart (pi-actors restart " + id + ")"}
	case in.Meta.Workflow != nil && (env.Type == "control.stop" || env.Type == "control.reply" || env.Type == "control.revise"):
		// The packaged recipes' vocabulary: a workflow's scheduler reads
		// none of it, so it would sit queued for ever.
		return &wire.Error{Code: "invalid_envelope", Exit: 65, Message: fmt.Sprintf("type=%s is no control message a workflow run knows: run:%s's scheduler takes control.retry, control.kill and control.cancel", env.Type, id),
			Hint: "stop it: message to=run:" + id + " type=control.cancel (pi-actors stop " + id + "); a node's own run takes what its recipe accepts"}
	case env.Type == "control.restart" && in.Meta.Workflow != nil && in.Live():
		return &wire.Error{Code: "conflict", Exit: 75, Message: fmt.Sprintf("run:%s is a running workflow; restart reruns a single command (its scheduler's restart would end the workflow killed)", id),
			Hint: "rerun a node that failed: message to=run:" + id + " type=control.retry body:='{\"node\":\"<node>\"}'; or stop it and spawn it again"}
	}
	return nil
}

// checkRetry checks a control.retry to a workflow run before it is
// stored: the body names a node that ended badly.
func checkRetry(in *runs.Info, env mailbox.Envelope) error {
	node, err := verbs.RetryNode(env.Body)
	if err != nil {
		return err
	}
	st, err := workflows.Load(string(in.Dir))
	if err != nil {
		return &wire.Error{Code: "conflict", Exit: 75, Message: fmt.Sprintf("run:%s has not recorded its workflow state yet (%v); retry when its nodes ran", in.Meta.Run, err)}
	}
	n := st.Node(node)
	if n == nil {
		return &wire.Error{Code: "invalid_envelope", Exit: 65, Message: fmt.Sprintf("control.retry: workflow run:%s has no node %s (nodes: %s)", in.Meta.Run, node, nodeList(st))}
	}
	if !workflows.Retryable(n.Status) {
		return &wire.Error{Code: "conflict", Exit: 75, Message: fmt.Sprintf("control.retry: node %s of run:%s is %s; only failed, killed, cancelled or skipped nodes run again", node, in.Meta.Run, n.Status),
			Hint: "inspect target=run:" + in.Meta.Run + " view=dag"}
	}
	if w, err := workflows.Parse(in.Meta.Workflow, verbs.WorkflowOptions(in.Meta.Run)); err == nil {
		if b := workflows.RetryBlockers(w, st, node); len(b) > 0 {
			return &wire.Error{Code: "conflict", Exit: 75,
				Message: fmt.Sprintf("control.retry: node %s of run:%s depends on %s, which ended badly: it would only be skipped again", node, in.Meta.Run, strings.Join(b, ", ")),
				Hint:    fmt.Sprintf(`pi-actors message to=run:%s type=control.retry body:='{"node":%q}' (its skipped dependents, %s included, run again with it)`, in.Meta.Run, workflows.RetryFirst(w, st, node), node)}
		}
	}
	return nil
}

func nodeList(st *workflows.State) string {
	ids := make([]string, 0, len(st.Nodes))
	for _, n := range st.Nodes {
		ids = append(ids, n.ID)
	}
	return shortList(ids, 20)
}

// killWorkflow stops a workflow's node runs once its scheduler is dead
// (control.kill of the workflow run): no node starts any more, every live
// node run is killed like any run (control.kill from the workflow), and
// workflow.json records the kill.
func (k *Kernel) killWorkflow(req wire.Request, in *runs.Info, later func(func())) {
	k.stopNodes(req, in, later, workflows.StatusKilled, "control.kill")
}

// endWorkflow settles a workflow run that ended for good (it has a
// result; its supervisor and so its scheduler are gone): a scheduler
// normally ends its nodes and records the end itself, but one that was
// killed after its grace, stopped, or restarted past its limit
// (start_limit) did not — its live node runs are killed now and
// workflow.json says how the workflow ended (killed for a stop, failed
// otherwise, with the run's reason). A workflow that recorded its end is
// only checked for live node runs.
func (k *Kernel) endWorkflow(in *runs.Info) {
	if in.Meta.Workflow == nil || in.Result == nil {
		return
	}
	status, reason := workflows.StatusFailed, in.Result.Reason
	switch in.Result.Status {
	case runs.StatusKilled, runs.StatusCancelled:
		status = workflows.StatusKilled
	}
	if reason == "" {
		reason = "run_" + in.Result.Status
	}
	if reason == "supervisor_terminated" {
		status = workflows.StatusKilled
	}
	k.stopNodes(wire.Request{}, in, nil, status, reason)
	// The run has its result: nodeSpawn refuses its nodes without the mark.
	k.wf.mark(in.Meta.Run, false)
}

// killSpawnedRuns kills the live runs of this node that parents spawned
// (their parent field), and the runs those spawned, in turn.
func (k *Kernel) killSpawnedRuns(req wire.Request, from string, parents []string, later func(func())) {
	// The live runs by parent, read once: the tree below parents is
	// walked in this map, not by reading every live run again per level.
	k.mu.Lock()
	dirs := make([]runs.Dir, 0, len(k.live))
	for _, lr := range k.live {
		dirs = append(dirs, lr.dir)
	}
	k.mu.Unlock()
	children := map[string][]string{}
	for _, dir := range dirs {
		if in, err := runs.Load(dir); err == nil && in.Live() && in.Meta.Parent != "" {
			children[in.Meta.Parent] = append(children[in.Meta.Parent], in.Meta.Run)
		}
	}
	seen := map[string]bool{}
	for len(parents) > 0 {
		p := parents[0]
		parents = parents[1:]
		seen[p] = true
		for _, run := range children[p] {
			if seen[run] {
				continue
			}
			seen[run] = true
			parents = append(parents, run)
			env := mailbox.Envelope{To: "run:" + run, Type: "control.kill", From: from}
			if d, err := k.messageRun(req, env, run, later); err != nil {
				k.log.Warn("kill a run a workflow node spawned", "run", run, "err", err)
			} else {
				k.traceMessage(req, &verbs.Message{From: from}, d, "", time.Time{}) // who killed it, in its trace
			}
		}
	}
}

// stopNodes kills the live node runs of a workflow run's instance
// (no node starts meanwhile) and records the end in workflow.json.
func (k *Kernel) stopNodes(req wire.Request, in *runs.Info, later func(func()), status, reason string) {
	w, err := workflows.Parse(in.Meta.Workflow, verbs.WorkflowOptions(in.Meta.Run))
	if err != nil {
		k.log.Warn("stop workflow nodes", "run", in.Meta.Run, "err", err)
		return
	}
	k.wf.mark(in.Meta.Run, true) // waits for node starts in progress
	instance := verbs.WorkflowInstance(in.Meta)
	nodes := make([]string, 0, len(w.Nodes))
	for _, n := range w.Nodes {
		nodes = append(nodes, workflows.ChildRun(in.Meta.Run, n.ID))
	}
	// The runs its nodes spawned (pi-actors spawn from inside a node: a
	// nested workflow, a helper), and what those spawned: a workflow that
	// ends leaves nothing (they ran on).
	defer k.killSpawnedRuns(req, in.Meta.Address, nodes, later)
	for _, n := range w.Nodes {
		id := workflows.ChildRun(in.Meta.Run, n.ID)
		dir, err := runs.Resolve(k.cfg.AgentDir, id)
		if err != nil {
			continue
		}
		m, err := dir.Meta()
		if err != nil || m.WorkflowNode == nil || m.WorkflowNode.Workflow != in.Meta.Run || m.WorkflowNode.Instance != instance {
			continue
		}
		if child, err := runs.Load(dir); err != nil || !child.Live() {
			continue
		}
		env := mailbox.Envelope{To: "run:" + id, Type: "control.kill", From: in.Meta.Address}
		if d, err := k.messageRun(req, env, id, later); err != nil {
			k.log.Warn("kill workflow node", "run", id, "err", err)
		} else {
			k.traceMessage(req, &verbs.Message{From: in.Meta.Address}, d, in.Meta.OwnerID, time.Time{})
		}
	}
	ended := func(n *workflows.NodeState) {
		if err := runs.AppendEvent(in.Dir, verbs.NodeEndEvent(n)); err != nil {
			k.log.Warn("record workflow node end", "run", in.Meta.Run, "node", n.ID, "err", err)
		}
	}
	// The pause so far, as the scheduler reads it (its supervisor's
	// paused_ms), and the suspension under way, which no scheduler will
	// count now.
	var paused int64
	if p := in.Progress; p != nil {
		paused = p.PausedMS
		if !p.SuspendedAt.IsZero() {
			paused += time.Since(p.SuspendedAt).Milliseconds()
		}
	}
	if err := workflows.Finish(string(in.Dir), status, reason, 10*time.Second, verbs.SupervisorID(in.Meta), paused, ended); err != nil {
		k.log.Warn("record workflow end", "run", in.Meta.Run, "status", status, "err", err)
	}
}

// workflowSummary is the line a workflow run's terminal follow-up adds:
// its nodes by status and the failed ones named.
func workflowSummary(in *runs.Info) string {
	st, err := workflows.Load(string(in.Dir))
	if err != nil {
		return ""
	}
	line := fmt.Sprintf("Workflow: %d nodes: %s", len(st.Nodes), st.CountText())
	if len(st.Failed) > 0 {
		line += "; failed nodes: " + shortList(st.Failed, 10) + " (message type=control.retry body:={\"node\":\"<id>\"} runs one again)"
	}
	return line + "; inspect target=run:" + in.Meta.Run + " view=dag"
}
