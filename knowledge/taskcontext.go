package knowledge

import (
	"context"

	"github.com/pi-actors/pi-actors/knowledge/api/graphop"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/graph"
	"github.com/pi-actors/pi-actors/knowledge/store"
)

// TaskContext runs the spec's includeGraphContext: the Context Files of
// text, matched with context through the layers.
func (l *Layers) TaskContext(ctx context.Context, c store.Caller, text string) (*graphop.TaskContextResult, error) {
	return l.taskContext(ctx, c, &graphop.TaskContext{Text: text})
}

func (l *Layers) taskContext(ctx context.Context, c store.Caller, r *graphop.TaskContext) (*graphop.TaskContextResult, error) {
	paths, err := graph.TaskPaths(r, c.Cwd)
	if err != nil {
		return nil, err
	}
	res := &graphop.TaskContextResult{GraphContext: graphop.Context{Molecules: []graphop.ContextMolecule{}, OrphanAtoms: []graphop.ContextAtom{}, UnmatchedPaths: []string{}}}
	if len(paths) == 0 {
		return res, nil
	}
	g, err := l.context(ctx, c, r.Store, r.ProjectID, paths, op.BoolOr(r.IncludeChangelog, true),
		op.LimitOr(r.ChangelogLimit, graphop.DefaultChangelogLimit))
	if err != nil {
		return nil, err
	}
	res.GraphContext = *g
	return res, nil
}

// GraphHints returns the spec's advance hints for a run that reached a
// terminal status in cwd, when cwd lies under a project (of either store)
// that has atoms; ok is false otherwise (and on any read error: a hint is
// never worth failing a follow-up for).
func (l *Layers) GraphHints(ctx context.Context, cwd string) (*graphop.GraphHints, bool) {
	for _, s := range []*Store{l.Project, l.Personal} {
		if s == nil {
			continue
		}
		if h, ok := s.graph.Hints(ctx, cwd); ok {
			return h, true
		}
	}
	return nil, false
}
