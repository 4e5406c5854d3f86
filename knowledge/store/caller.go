package store

import (
	"strings"

	"github.com/pi-actors/pi-actors/knowledge/api/op"
)

// Caller is who asks: the caller's working directory (selects a project
// when projectId is omitted, and the project store), the run it is inside
// (PI_ACTORS_RUN_ID: the default task id), and its session.
type Caller struct {
	Cwd     string
	RunID   string
	Session string
}

// TaskID resolves a task id parameter: the given id, else run:<RunID>,
// else a VALIDATION_ERROR naming field. A run:<id> must name a run
// (Options.RunExists).
func (s *DB) TaskID(field, given string, c Caller) (string, error) {
	id := given
	if id == "" {
		if c.RunID == "" {
			return "", op.Invalid(field, "%s is required: the task doing this (any id up to 255 characters, or run:<id>); inside a run it defaults to that run", field)
		}
		id = "run:" + c.RunID
	}
	if e := op.CheckTaskID(field, id); e != nil {
		return "", e
	}
	if run, ok := strings.CutPrefix(id, "run:"); ok && s.opts.RunExists != nil && !s.opts.RunExists(run) {
		return "", op.NotFound(field, "run", run)
	}
	return id, nil
}
