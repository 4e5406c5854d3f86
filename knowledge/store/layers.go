package store

import (
	"os"
	"path/filepath"
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
	if run, ok := strings.CutPrefix(id, "run:"); ok && s.opts.RunExists != nil {
		found, err := s.opts.RunExists(run)
		if err != nil {
			return "", op.Invalid(field, "%s %q names no run: %v", field, id, err)
		}
		if !found {
			return "", op.NotFound(field, "run", run)
		}
	}
	return id, nil
}

// PersonalPath is the personal store of an agent root:
// <agent>/knowledge/knowledge.db.
func PersonalPath(agentDir string) string {
	return filepath.Join(agentDir, "knowledge", "knowledge.db")
}

// ProjectFile is a project store's path below its repository root.
const ProjectFile = ".pi/knowledge.db"

// FindProject walks up from cwd to the nearest <dir>/.pi/knowledge.db and
// returns its path, or "" when there is none.
func FindProject(cwd string) string {
	if cwd == "" {
		return ""
	}
	for d := filepath.Clean(cwd); ; d = filepath.Dir(d) {
		p := filepath.Join(d, ProjectFile)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
		if d == filepath.Dir(d) {
			return ""
		}
	}
}

// RepoRoot is the nearest directory at or above cwd holding .git (a
// directory or a worktree's file), or cwd itself when there is none.
func RepoRoot(cwd string) string {
	cwd = filepath.Clean(cwd)
	for d := cwd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if d == filepath.Dir(d) {
			return cwd
		}
	}
}
