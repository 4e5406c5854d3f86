package runs

import (
	"errors"
	"fmt"
	"os"
	"time"
)

// NodeRef names the workflow node a child run carries out: the workflow
// run, its instance (the workflow run's createdAt, so a later run with the
// same id is another workflow), the node and the attempt. With it a
// workflow's scheduler recognises the child of an attempt it asked for
// before it crashed, and the kernel never starts one attempt twice.
type NodeRef struct {
	Workflow string `json:"workflow"`
	Instance string `json:"instance"`
	Node     string `json:"node"`
	Attempt  int    `json:"attempt"`
	// Command is the node's command as the workflow wrote it (with
	// {upstream.<node>.output}, not the placeholder the run's template
	// has in its place), for listings; "" when the node runs a recipe.
	// It is not part of the attempt's identity (SameAttempt).
	Command string `json:"command,omitempty"`
}

// SameAttempt reports whether r and o name the same node attempt.
func (r NodeRef) SameAttempt(o NodeRef) bool {
	return r.Workflow == o.Workflow && r.Instance == o.Instance && r.Node == o.Node && r.Attempt == o.Attempt
}

// Resume starts a new supervisor on the state directory of a run whose
// supervisor is gone, keeping everything the run wrote: its inbox, events,
// logs and its own state files stay; result.json, if the run had ended, is
// removed so the run reads live again. run.json keeps the run's identity
// (id, createdAt) and counts the resume (Meta.Resumes). env is the
// environment the supervisor starts with (PI_ACTORS_* identity is set
// from run.json). It refuses (ErrBusy) a run whose supervisor is alive or
// being started.
func Resume(dir Dir, supervisor, env []string, reason string) (*Meta, *os.Process, error) {
	if _, busy := starting.LoadOrStore(string(dir), true); busy {
		return nil, nil, fmt.Errorf("%w: run state is already being started: %s", ErrBusy, dir)
	}
	defer starting.Delete(string(dir))
	meta, err := dir.Meta()
	if err != nil {
		return nil, nil, err
	}
	if Alive(meta.Pid, meta.PidStart) {
		return nil, nil, fmt.Errorf("%w: run:%s is running (pid %d); it needs no resume", ErrBusy, meta.Run, meta.Pid)
	}
	if err := os.Remove(dir.Path(ResultFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, nil, fmt.Errorf("resume run:%s: %w", meta.Run, err)
	}
	meta.Resumes++
	meta.ResumedAt = time.Now().UTC()
	meta.Pid, meta.PidStart = 0, 0
	appendEvent(dir, map[string]any{"event": "run.resume", "reason": reason, "resumes": meta.Resumes})
	proc, _, err := launch(dir, meta, Spec{Supervisor: supervisor, Env: env}, false)
	if err != nil {
		return nil, nil, fmt.Errorf("resume run:%s: %w", meta.Run, err)
	}
	return meta, proc, nil
}
