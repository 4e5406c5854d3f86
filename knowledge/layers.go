package knowledge

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/pi-actors/pi-actors/knowledge/api"
	"github.com/pi-actors/pi-actors/knowledge/api/graphop"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/graph"
	"github.com/pi-actors/pi-actors/knowledge/store"
)

// Layers is the pair of stores a caller sees: the project store of its
// cwd (nil when there is none) and the personal store. The kernel opens
// the stores; Layers routes each operation:
//
//   - reads that are not by id (search, context, task_context,
//     project_list) ask the project store first, then the personal one,
//     and concatenate (a store where the project cannot be chosen is
//     skipped); pages span both stores;
//   - reads and writes by id (get, update, delete, changelog, history)
//     go to the first store that has the id;
//   - creates go to the project store when there is one, unless
//     store=personal;
//   - store=project|personal restricts any operation to that store.
//
// Every item is tagged with its store (Options.Layer of the store).
type Layers struct {
	Project  *Store
	Personal *Store
}

// stores lists the stores an operation may use, project first.
func (l *Layers) stores(choice string) ([]*Store, error) {
	switch choice {
	case op.StoreProject:
		if l.Project == nil {
			return nil, op.Invalid("store", "store=project but there is no project store (%s) at or above the cwd: run knowledge init, or use store=personal", store.ProjectFile)
		}
		return []*Store{l.Project}, nil
	case op.StorePersonal:
		if l.Personal == nil {
			return nil, op.Invalid("store", "store=personal but no personal store is open")
		}
		return []*Store{l.Personal}, nil
	}
	var out []*Store
	for _, s := range []*Store{l.Project, l.Personal} {
		if s != nil {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, op.Invalid("store", "no knowledge store is open: run knowledge init")
	}
	return out, nil
}

// writeStore is where creates go.
func (l *Layers) writeStore(choice string) (*Store, error) {
	ss, err := l.stores(choice)
	if err != nil {
		return nil, err
	}
	return ss[0], nil
}

// notFoundBy reports a NOT_FOUND about one of the given fields.
func notFoundBy(err error, fields ...string) bool {
	e, ok := op.AsError(err)
	if !ok || e.Code != op.CodeNotFound {
		return false
	}
	for _, f := range fields {
		if e.Details["field"] == f {
			return true
		}
	}
	return false
}

// skippable is an error that only means "this store has nothing for the
// caller's project": the project is not in it or the cwd selects none.
func skippable(err error) bool {
	return errors.Is(err, graph.ErrNoProject) || notFoundBy(err, "projectId")
}

// byID runs fn on each store in turn until one has the id (field).
func (l *Layers) byID(choice, field string, fn func(*Store) (any, error)) (any, error) {
	ss, err := l.stores(choice)
	if err != nil {
		return nil, err
	}
	var last error
	for _, s := range ss {
		v, err := fn(s)
		if err == nil || !notFoundBy(err, field) {
			return v, err
		}
		last = err
	}
	return nil, last
}

// each runs fn on every chosen store, skipping the skippable ones; when
// every store was skipped it returns the first store's error.
func (l *Layers) each(choice string, fn func(*Store) error) error {
	ss, err := l.stores(choice)
	if err != nil {
		return err
	}
	var first error
	ran := 0
	for _, s := range ss {
		err := fn(s)
		if err != nil && !skippable(err) {
			return err
		}
		if err != nil && first == nil {
			first = err
		}
		if err == nil {
			ran++
		}
	}
	if ran == 0 {
		return first
	}
	return nil
}

// pages concatenates one page across the chosen stores.
func pages[T any](l *Layers, choice string, limit, offset int, fetch func(s *Store, limit, offset int) (*op.Page[T], error)) (*op.Page[T], error) {
	out := &op.Page[T]{Items: []T{}, Limit: limit, Offset: offset}
	skip := offset
	err := l.each(choice, func(s *Store) error {
		want := max(limit-len(out.Items), 1)
		p, err := fetch(s, want, skip)
		if err != nil {
			return err
		}
		if len(out.Items) < limit {
			out.Items = append(out.Items, p.Items...)
		}
		out.Total += p.Total
		skip = max(0, skip-p.Total)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// pagesOf is pages over an operation that answers a page of T: run gets
// each store's limit and offset.
func pagesOf[T any](l *Layers, choice string, limit, offset int, run func(s *Store, limit, offset *int) (any, error)) (*op.Page[T], error) {
	return pages(l, choice, limit, offset, func(s *Store, limit, offset int) (*op.Page[T], error) {
		v, err := run(s, &limit, &offset)
		if err != nil {
			return nil, err
		}
		return v.(*op.Page[T]), nil
	})
}

// Execute runs one request through the layers. The request is validated
// (again) first. Errors of the operation are *op.Error; others are I/O.
func (l *Layers) Execute(ctx context.Context, c store.Caller, req op.Request) (any, error) {
	if e := req.Validate(); e != nil {
		return nil, e
	}
	if v, ok, err := l.vectorOp(ctx, c, req); ok {
		return v, err
	}
	switch r := req.(type) {
	case *graphop.QueryGraph:
		return l.queryGraph(ctx, c, r)
	case *graphop.ManageGraph:
		if r.Operation == "create" {
			s, err := l.writeStore(r.Store)
			if err != nil {
				return nil, err
			}
			return s.graph.ManageGraph(ctx, c, r)
		}
		return l.byID(r.Store, "id", func(s *Store) (any, error) { return s.graph.ManageGraph(ctx, c, r) })
	case *graphop.ManageChangelog:
		return l.byID(r.Store, "parentId", func(s *Store) (any, error) { return s.graph.ManageChangelog(ctx, c, r) })
	case *graphop.ProjectCreate:
		s, err := l.writeStore(r.Store)
		if err != nil {
			return nil, err
		}
		return s.graph.CreateProject(ctx, c, r)
	case *graphop.ProjectList:
		return pages(l, r.Store, op.LimitOr(r.Limit, op.DefaultLimit), op.LimitOr(r.Offset, 0),
			func(s *Store, limit, offset int) (*op.Page[graphop.Project], error) {
				return s.graph.Projects(ctx, &graphop.ProjectList{Limit: &limit, Offset: &offset})
			})
	case *graphop.History:
		return l.byID(r.Store, "id", func(s *Store) (any, error) { return s.graph.History(ctx, r) })
	case *graphop.Verify:
		return l.verify(ctx, r)
	case *graphop.TaskContext:
		return l.taskContext(ctx, c, r)
	case *api.Init:
		return l.init(ctx, c, r)
	case *api.Status:
		return l.status(ctx, r)
	}
	return nil, op.Invalid("operation", "unknown knowledge request %T", req)
}

func (l *Layers) queryGraph(ctx context.Context, c store.Caller, r *graphop.QueryGraph) (any, error) {
	switch r.Operation {
	case "get":
		return l.byID(r.Store, "id", func(s *Store) (any, error) { return s.graph.QueryGraph(ctx, c, r) })
	case "context":
		return l.context(ctx, c, r.Store, r.ProjectID, r.Paths, op.BoolOr(r.IncludeChangelog, true),
			op.LimitOr(r.ChangelogLimit, graphop.DefaultChangelogLimit))
	}
	limit, offset := op.LimitOr(r.Limit, op.DefaultLimit), op.LimitOr(r.Offset, 0)
	search := func(s *Store, limit, offset *int) (any, error) {
		q := *r
		q.Limit, q.Offset = limit, offset
		return s.graph.QueryGraph(ctx, c, &q)
	}
	if r.EntityType == graphop.EntityAtom {
		return pagesOf[graphop.Atom](l, r.Store, limit, offset, search)
	}
	return pagesOf[graphop.Molecule](l, r.Store, limit, offset, search)
}

// context runs context in each store and merges: molecules and orphans
// project first; a path is unmatched when no store matched it.
func (l *Layers) context(ctx context.Context, c store.Caller, choice, projectID string, paths []string, withLog bool, logN int) (*graphop.Context, error) {
	out := &graphop.Context{Molecules: []graphop.ContextMolecule{}, OrphanAtoms: []graphop.ContextAtom{}, UnmatchedPaths: []string{}}
	misses := map[string]int{}
	var order []string
	ran := 0
	err := l.each(choice, func(s *Store) error {
		res, err := s.graph.Context(ctx, c, projectID, paths, withLog, logN)
		if err != nil {
			return err
		}
		ran++
		out.Molecules = append(out.Molecules, res.Molecules...)
		out.OrphanAtoms = append(out.OrphanAtoms, res.OrphanAtoms...)
		if order == nil {
			order = res.UnmatchedPaths
		}
		for _, p := range res.UnmatchedPaths {
			misses[p]++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, p := range order {
		if misses[p] == ran {
			out.UnmatchedPaths = append(out.UnmatchedPaths, p)
		}
	}
	return out, nil
}

func (l *Layers) verify(ctx context.Context, r *graphop.Verify) (*graphop.VerifyResult, error) {
	ss, err := l.stores(r.Store)
	if err != nil {
		return nil, err
	}
	out := &graphop.VerifyResult{OK: true, Stores: []graphop.VerifyReport{}}
	for _, s := range ss {
		rep, err := s.graph.Verify(ctx)
		if err != nil {
			return nil, err
		}
		out.OK = out.OK && rep.OK
		out.Stores = append(out.Stores, *rep)
	}
	return out, nil
}

func (l *Layers) status(ctx context.Context, r *api.Status) (*api.StatusResult, error) {
	ss, err := l.stores(r.Store)
	if err != nil {
		return nil, err
	}
	out := &api.StatusResult{Stores: []api.StoreStatus{}}
	for _, s := range ss {
		st, err := s.Status(ctx)
		if err != nil {
			return nil, err
		}
		out.Stores = append(out.Stores, *st)
	}
	return out, nil
}

// init creates (or finds) the project store of the caller's repository
// and its project; it reuses l.Project when that is the store.
func (l *Layers) init(ctx context.Context, c store.Caller, r *api.Init) (*api.InitResult, error) {
	if !filepath.IsAbs(c.Cwd) {
		return nil, op.Invalid("cwd", "init needs the caller's absolute cwd, got %q", c.Cwd)
	}
	opts := Options{}
	if l.Personal != nil {
		opts = l.Personal.opts
	}
	opts.Layer = op.StoreProject
	if l.Project != nil && l.Project.Path() == store.FindProject(c.Cwd) {
		return l.Project.initProject(ctx, r.Name, false)
	}
	return Init(ctx, c.Cwd, r, opts)
}

// Init creates the project store <repo>/.pi/knowledge.db for cwd (the
// repository root holding cwd, else cwd; an existing store at or above cwd
// is reused) and its project {name, root: <repo>}.
func Init(ctx context.Context, cwd string, req *api.Init, opts Options) (*api.InitResult, error) {
	path := store.FindProject(cwd)
	created := false
	if path == "" {
		path, created = filepath.Join(store.RepoRoot(cwd), store.ProjectFile), true
	}
	s, err := Open(path, opts)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.initProject(ctx, req.Name, created)
}

// initProject returns init's result for the project store s: its project
// (rooted at the directory holding .pi/), created when missing.
func (s *Store) initProject(ctx context.Context, name string, created bool) (*api.InitResult, error) {
	p, err := s.graph.EnsureProject(ctx, filepath.Dir(filepath.Dir(s.Path())), name)
	if err != nil {
		return nil, fmt.Errorf("init %s: %w", s.Path(), err)
	}
	return &api.InitResult{Path: s.Path(), Created: created, Project: *p}, nil
}

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
