package verbs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/workflows"
)

// workflowHost is a workflow scheduler's Host: child runs are spawned and
// killed through the kernel (batch requests, as `spawn -` and `message -`
// send them) and observed through their own state files, so a kernel
// that is down delays starts and stops but never an observation.
type workflowHost struct {
	env      *Env
	run      string // the workflow run
	instance string
	kids     map[string]*kid // child run id → what is known of it
}

// kid caches a child run of one attempt: its run.json (written once, by
// its supervisor) and when its supervisor was last seen alive.
type kid struct {
	dir     runs.Dir
	meta    *runs.Meta
	attempt int
	alive   time.Time
}

// aliveEvery bounds how often a child whose result is not written yet is
// checked for a live supervisor (a /proc read).
const aliveEvery = 500 * time.Millisecond

func newWorkflowHost(env *Env, run, instance string) *workflowHost {
	return &workflowHost{env: env, run: run, instance: instance, kids: map[string]*kid{}}
}

// Start spawns the attempts' child runs in one batch.
func (h *workflowHost) Start(ctx context.Context, reqs []workflows.StartRequest) []workflows.StartResult {
	out := make([]workflows.StartResult, len(reqs))
	spec := Find("spawn")
	var batch []Request
	var at []int
	for i, r := range reqs {
		req, err := h.spawnRequest(spec, r)
		if err != nil {
			out[i].Err = err
			continue
		}
		batch = append(batch, req)
		at = append(at, i)
	}
	if len(batch) == 0 {
		return out
	}
	outs, errs, err := RunBatch(h.env, spec, batch)
	for j, i := range at {
		switch {
		case err != nil:
			out[i] = workflows.StartResult{Err: err, Again: again(err), Held: held(err)}
		case errs[j] != nil:
			out[i] = workflows.StartResult{Err: errs[j], Again: again(errs[j]), Held: held(errs[j])}
		default:
			res, _ := outs[j].Result.(*SpawnResult)
			if res == nil {
				out[i] = workflows.StartResult{Err: errors.New("spawn answered no run"), Again: true}
				continue
			}
			out[i].StateDir = res.StateDir
		}
	}
	return out
}

// spawnRequest is the typed spawn request of an attempt: the node's
// parameters, checked like any spawn, with the attempt it carries out.
func (h *workflowHost) spawnRequest(spec *Spec, r workflows.StartRequest) (Request, error) {
	params := make(map[string]any, len(r.Params)+1)
	for k, v := range r.Params {
		params[k] = v
	}
	ref := runs.NodeRef{Workflow: h.run, Instance: h.instance, Node: r.Node, Attempt: r.Attempt}
	if r.Template != nil {
		ref.Command = commandOf(r.Template)
	}
	params["workflow_node"] = ref
	b, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("node %s: encode spawn: %w", r.Node, err)
	}
	req, err := spec.DecodeJSON(b)
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", r.Node, err)
	}
	if err := req.Validate(); err != nil {
		return nil, fmt.Errorf("node %s: %w", r.Node, err)
	}
	return req, nil
}

// again reports whether a failed start may work later: the kernel could
// not be reached or answered busy (a session at its live-run limit, a run
// being started); the kernel's other answers stand.
func again(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return true // the request did not get an answer
	}
	return e.Exit == ExitUnavailable || e.Exit == ExitTempFail
}

// held reports whether a start failed because a live run holds the
// node's run id (busy): waited for a bounded time only
// (workflows.HeldWait).
func held(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == "busy"
}

// Observe reads a child run's files: missing until a run of this attempt
// has written its run.json, ended once it has a result (or its
// supervisor is gone), else running.
func (h *workflowHost) Observe(c workflows.Child) workflows.Observation {
	k := h.kids[c.Run]
	if k == nil || k.attempt != c.Attempt {
		dir := runs.Dir(c.StateDir)
		if c.StateDir == "" {
			d, err := runs.Resolve(h.env.AgentDir, c.Run)
			if err != nil {
				return workflows.Observation{State: workflows.ChildMissing}
			}
			dir = d
		}
		m, err := dir.Meta()
		if err != nil || !h.ours(m, c) || m.Pid == 0 {
			return workflows.Observation{State: workflows.ChildMissing}
		}
		k = &kid{dir: dir, meta: m, attempt: c.Attempt, alive: time.Now()}
		h.kids[c.Run] = k
	}
	obs := workflows.Observation{State: workflows.ChildRunning, StateDir: string(k.dir), StartedAt: k.meta.CreatedAt}
	if res := k.dir.Result(); res != nil {
		return ended(obs, res.Status, res.Code, res.Reason, res.Error, res.CompletedAt)
	}
	obs.Ready, obs.ReadyAt, obs.ReadyTimedOut = k.ready()
	if time.Since(k.alive) < aliveEvery {
		return obs
	}
	if runs.Alive(k.meta.Pid, k.meta.PidStart) {
		k.alive = time.Now()
		return obs
	}
	// The supervisor is gone: its result may have landed meanwhile, or
	// the run was lost (the kernel records how).
	in, err := runs.Load(k.dir)
	if err != nil {
		return workflows.Observation{State: workflows.ChildMissing}
	}
	if !h.ours(in.Meta, c) {
		return workflows.Observation{State: workflows.ChildMissing}
	}
	if in.Live() {
		return obs
	}
	code := 1
	var at time.Time
	if in.Result != nil {
		code, at = in.Result.Code, in.Result.CompletedAt
	}
	return ended(obs, in.Status, code, in.Reason, "", at)
}

// ready is a running child's readiness, as (*runs.Info).Ready says: a
// child without a readiness probe is ready while it runs (no file read);
// one with a probe reads its progress.json. timedOut: its probe did not
// pass within its ready_timeout (this attempt).
func (k *kid) ready() (ready bool, at time.Time, timedOut bool) {
	in := &runs.Info{Dir: k.dir, Meta: k.meta, Status: runs.StatusRunning}
	if h := k.meta.Health; h != nil && h.Ready != nil {
		in.Progress = k.dir.Progress()
	}
	ready, at = in.Ready()
	state, _ := in.Readiness()
	return ready, at, !ready && state == runs.ReadyTimedOut
}

func ended(obs workflows.Observation, status string, code int, reason, msg string, at time.Time) workflows.Observation {
	obs.State, obs.Status, obs.Code, obs.Reason, obs.Error, obs.EndedAt = workflows.ChildEnded, status, code, reason, msg, at
	return obs
}

// ours reports whether run.json is the child run of this attempt.
func (h *workflowHost) ours(m *runs.Meta, c workflows.Child) bool {
	r := m.WorkflowNode
	return r != nil && r.Workflow == h.run && r.Instance == h.instance && r.Node == c.Node && r.Attempt == c.Attempt
}

// Stop kills child runs through the kernel (control.kill from the
// workflow run) — or, gently, cancels them (control.cancel: the
// supervisor's SIGTERM, grace, SIGKILL) — in one batch; a run that is
// already gone is no error.
func (h *workflowHost) Stop(ctx context.Context, ids []string, gently bool) error {
	spec := Find("message")
	typ := "control.kill"
	if gently {
		typ = "control.cancel"
	}
	var batch []Request
	for _, id := range ids {
		// Only a run of this workflow: a node waiting to start because
		// another run (started by hand) holds its id leaves that run alone.
		if d, err := runs.Resolve(h.env.AgentDir, id); err == nil {
			if m, err := d.Meta(); err == nil && (m.WorkflowNode == nil || m.WorkflowNode.Workflow != h.run || m.WorkflowNode.Instance != h.instance) {
				continue
			}
		}
		batch = append(batch, &Message{To: "run:" + id, Type: typ, From: "run:" + h.run})
	}
	if len(batch) == 0 {
		return nil
	}
	_, errs, err := RunBatch(h.env, spec, batch)
	if err != nil {
		return err
	}
	for _, e := range errs {
		if e != nil && !errors.Is(e, runs.ErrNotFound) && Classify(e).Exit != ExitNoInput {
			return e
		}
	}
	return nil
}
