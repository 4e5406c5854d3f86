package store

import (
	"os"
	"path/filepath"
)

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
