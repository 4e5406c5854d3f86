package graph

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/pi-actors/pi-actors/internal/lazyre"
	"github.com/pi-actors/pi-actors/knowledge/api/graphop"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
)

var (
	headingRe   = lazyre.New(`^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	labelRe     = lazyre.New(`^\s*(\*\*|__)?([A-Za-z][A-Za-z ]{0,40}?)\s*:?\s*(\*\*|__)?\s*:?\s*$`)
	listMarkRe  = lazyre.New(`^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?`)
	linkRe      = lazyre.New(`^\[[^\]]*\]\(([^)\s]+)\)`)
	contextName = "context files"
)

// contextFiles extracts the file paths of a task's "Context Files"
// section: a markdown heading (any level) or a "Context Files:" label
// line, up to the next heading or label. Entries may be one per line, a
// list, comma-separated, or mixed; backticks, quotes and markdown links
// are unwrapped and text after the path (" - why") is dropped. Lines or
// entries that do not look like a relative file path (no "/" or ".", a
// URL, "..", glob characters, spaces) are skipped. found is false when
// there is no such section. Paths are returned once each, in order.
func contextFiles(text string) (paths []string, found bool) {
	seen := map[string]bool{}
	in, fence := false, false
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.HasPrefix(strings.TrimSpace(line), "```") || strings.HasPrefix(strings.TrimSpace(line), "~~~") {
			fence = !fence
			continue
		}
		if fence {
			if in {
				paths = addEntries(paths, seen, line)
			}
			continue
		}
		if title, ok := sectionTitle(line); ok {
			in = strings.EqualFold(title, contextName)
			found = found || in
			continue
		}
		if in {
			paths = addEntries(paths, seen, line)
		}
	}
	return paths, found
}

// sectionTitle recognises a heading or a label line ("Context Files:").
func sectionTitle(line string) (string, bool) {
	if m := headingRe.FindStringSubmatch(line); m != nil {
		return strings.TrimSpace(strings.Trim(m[2], "*_:")), true
	}
	if !strings.Contains(line, ":") {
		return "", false
	}
	if m := labelRe.FindStringSubmatch(line); m != nil {
		return strings.TrimSpace(m[2]), true
	}
	return "", false
}

func addEntries(paths []string, seen map[string]bool, line string) []string {
	line = listMarkRe.ReplaceAllString(line, "")
	for _, piece := range strings.Split(line, ",") {
		p, ok := entryPath(piece)
		if ok && !seen[p] {
			seen[p] = true
			paths = append(paths, p)
		}
	}
	return paths
}

// entryPath takes the path out of one entry, or reports it malformed.
func entryPath(piece string) (string, bool) {
	piece = strings.TrimSpace(piece)
	if m := linkRe.FindStringSubmatch(piece); m != nil {
		piece = m[1]
	}
	fields := strings.Fields(piece)
	if len(fields) == 0 {
		return "", false
	}
	p := strings.Trim(fields[0], "`'\"")
	p = strings.TrimRight(p, ":;")
	p = strings.TrimPrefix(p, "./")
	switch {
	case p == "" || len(p) > op.MaxPathLen:
		return "", false
	case !strings.ContainsAny(p, "/."):
		return "", false
	case strings.Contains(p, "://") || strings.ContainsAny(p, "*?[]{}()<>|`'\""):
		return "", false
	case hasDotDotSeg(p):
		return "", false
	}
	return p, true
}

func hasDotDotSeg(p string) bool {
	for _, s := range strings.Split(p, "/") {
		if s == ".." {
			return true
		}
	}
	return false
}

// TaskPaths reads a task_context request's task (its text, or its file
// relative to cwd) and returns the paths of its Context Files section; a
// task without one is a VALIDATION_ERROR naming text or file.
func TaskPaths(r *graphop.TaskContext, cwd string) ([]string, error) {
	text, field := r.Text, "text"
	if r.File != "" {
		field = "file"
		var err error
		if text, err = readTaskFile(r.File, cwd); err != nil {
			return nil, err
		}
	}
	paths, found := contextFiles(text)
	if !found {
		return nil, op.Invalid(field, `the task has no "Context Files" section: add a "## Context Files" heading with one path per line (or comma-separated)`)
	}
	return paths, nil
}

func readTaskFile(file, cwd string) (string, error) {
	if !filepath.IsAbs(file) {
		if !filepath.IsAbs(cwd) {
			return "", op.Invalid("file", "file %q is relative and the caller's cwd is unknown: pass an absolute path", file)
		}
		file = filepath.Join(cwd, file)
	}
	// Non-blocking: a FIFO blocked the kernel in open.
	f, err := os.OpenFile(file, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if os.IsNotExist(err) {
		return "", op.NotFound("file", "task file", file)
	}
	if err != nil {
		return "", fmt.Errorf("read task file %s: %w", file, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return "", op.Invalid("file", "task file %s is not a regular file: pass a file", file)
	}
	b, err := io.ReadAll(io.LimitReader(f, graphop.MaxTaskText+1))
	if err != nil {
		return "", fmt.Errorf("read task file %s: %w", file, err)
	}
	if len(b) > graphop.MaxTaskText {
		return "", op.Invalid("file", "task file %s is over %d bytes", file, graphop.MaxTaskText)
	}
	return string(b), nil
}

// AdvanceHints returns the spec's advance hint for a run that reached a
// terminal status in a project that has atoms.
func AdvanceHints() *graphop.GraphHints {
	return &graphop.GraphHints{
		Message: "Task completed. Consider updating the knowledge graph.",
		SuggestedActions: []string{
			"Update atom knowledge for areas affected by this task",
			"Update atom paths if files were moved or new directories created",
			"Append changelog entries for significant changes",
		},
	}
}

// AtomRoots returns the roots of the store's projects that have atoms,
// sorted, at most limit of them; more is true when there are more. A run
// that ends in one of these roots or below gets AdvanceHints.
func (s *Store) AtomRoots(ctx context.Context, limit int) (roots []string, more bool, err error) {
	rows, err := s.r.QueryContext(ctx, `SELECT root FROM projects p WHERE EXISTS (SELECT 1 FROM graph_atoms a WHERE a.project_id = p.id) ORDER BY root LIMIT ?`, limit+1)
	if err != nil {
		return nil, false, fmt.Errorf("projects with atoms: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var root string
		if err := rows.Scan(&root); err != nil {
			return nil, false, fmt.Errorf("projects with atoms: %w", err)
		}
		roots = append(roots, root)
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("projects with atoms: %w", err)
	}
	if len(roots) > limit {
		return roots[:limit], true, nil
	}
	return roots, false, nil
}

// UnderRoot reports whether cwd (absolute) is one of roots (sorted, as
// AtomRoots returns them) or lies below one: whether cwd is in a project
// with atoms.
func UnderRoot(cwd string, roots []string) bool {
	if cwd == "" || !filepath.IsAbs(cwd) {
		return false
	}
	for d := filepath.Clean(cwd); ; d = filepath.Dir(d) {
		if _, found := slices.BinarySearch(roots, d); found {
			return true
		}
		if d == filepath.Dir(d) {
			return false
		}
	}
}
