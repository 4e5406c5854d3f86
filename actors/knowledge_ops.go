package actors

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"time"

	"github.com/pi-actors/pi-actors/knowledge"
	"github.com/pi-actors/pi-actors/knowledge/api"
	"github.com/pi-actors/pi-actors/knowledge/api/graphop"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/store"
	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/verbs"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

func init() {
	extraOps["knowledge"] = func(k *Kernel, req wire.Request) (any, error) { return k.knowledgeCall(req) }
}

// knowledgeCall answers the kernel's "knowledge" operation
// (verbs.KnowledgeCall): one operation, a manage_graph batch, or inspect.
func (k *Kernel) knowledgeCall(req wire.Request) (any, error) {
	var call verbs.KnowledgeCall
	if err := json.Unmarshal(req.Params, &call); err != nil {
		return nil, verbs.Invalidf("knowledge: parameters must be {op, params} or {op, batch}: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), knowledgeTimeout)
	defer cancel()
	c := callerOf(req)
	switch {
	case call.Op == "inspect":
		return k.knowledgeInspect(ctx, c)
	case call.Batch != nil:
		return k.knowledgeBatch(ctx, c, call)
	}
	r, err := api.Decode(call.Op, call.Params)
	if err != nil {
		return nil, err
	}
	return k.knowledgeDo(ctx, c, r)
}

// callerOf is who asks: the request's cwd and session, and the run it
// comes from (PI_ACTORS_RUN_ID in its environment).
func callerOf(req wire.Request) store.Caller {
	c := store.Caller{Cwd: req.Cwd, Session: req.Session}
	for _, kv := range req.Env {
		if v, ok := strings.CutPrefix(kv, "PI_ACTORS_RUN_ID="); ok {
			c.RunID = strings.TrimSpace(v)
		}
	}
	return c
}

// knowledgeDo runs one validated request through the caller's layers:
// reads on the calling goroutine (the stores' read pools), writes in the
// actor of the store they go to.
func (k *Kernel) knowledgeDo(ctx context.Context, c store.Caller, r op.Request) (any, error) {
	if in, ok := r.(*api.Init); ok {
		return k.knowledgeInit(ctx, c, in)
	}
	l, err := k.leaseFor(c.Cwd, op.StoreOf(r), true)
	if err != nil {
		return nil, err
	}
	defer l.release(k)
	field, write := writeKind(r)
	if !write {
		return l.lay.Execute(ctx, c, r)
	}
	targets := l.targets()
	if len(targets) == 0 {
		return l.lay.Execute(ctx, c, r) // the layers' own "no store" error
	}
	if field == "" {
		targets = targets[:1] // creates go to the first store (project first)
	}
	var last error
	for _, o := range targets {
		v, err := k.storeDo(o, func(*knowledge.Store) (any, error) { return single(o).Execute(ctx, c, r) })
		if err == nil || !notFoundField(err, field) {
			return v, err
		}
		last = err // by id: try the next store
	}
	return nil, last
}

// writeKind reports whether r writes, and for a write by id the field
// naming the id ("" for a create).
func writeKind(r op.Request) (field string, write bool) {
	switch x := r.(type) {
	case *graphop.ManageGraph:
		if x.Operation == "create" {
			return "", true
		}
		return "id", true
	case *graphop.ManageChangelog:
		return "parentId", x.Operation == "append"
	case *graphop.ProjectCreate:
		return "", true
	}
	return "", false
}

// notFoundField reports a NOT_FOUND about field.
func notFoundField(err error, field string) bool {
	e, ok := op.AsError(err)
	return ok && field != "" && e.Code == op.CodeNotFound && e.Details["field"] == field
}

// knowledgeInit creates (or finds) the project store of the caller's
// repository and its project, in that store's actor.
func (k *Kernel) knowledgeInit(ctx context.Context, c store.Caller, r *api.Init) (any, error) {
	if !filepath.IsAbs(c.Cwd) {
		return nil, op.Invalid("cwd", "init needs the caller's absolute working directory, got %q", c.Cwd)
	}
	path := store.FindProject(c.Cwd)
	created := path == ""
	if created {
		path = filepath.Join(store.RepoRoot(c.Cwd), store.ProjectFile)
	}
	o, err := k.acquireStore(path, op.StoreProject, false)
	if err != nil {
		return nil, err
	}
	defer k.releaseStore(o)
	v, err := k.storeDo(o, func(s *knowledge.Store) (any, error) { return single(o).Execute(ctx, c, r) })
	if res, ok := v.(*api.InitResult); ok && err == nil {
		res.Created = created
	}
	return v, err
}

// knowledgeBatch applies manage_graph requests in one transaction of one
// store (all or none): the project store when one is found, unless the
// requests say store=personal (every request must name the same store).
func (k *Kernel) knowledgeBatch(ctx context.Context, c store.Caller, call verbs.KnowledgeCall) (any, error) {
	if call.Op != "manage_graph" {
		return nil, op.Invalid("operation", "a knowledge batch takes manage_graph requests only, not %s", call.Op)
	}
	reqs := make([]*graphop.ManageGraph, len(call.Batch))
	for i, raw := range call.Batch {
		r, err := api.Decode("manage_graph", raw)
		if err != nil {
			return nil, batchError(err, i)
		}
		reqs[i] = r.(*graphop.ManageGraph)
		if reqs[i].Store != reqs[0].Store {
			return nil, batchError(op.Invalid("store", "a batch runs in one store: every request must name the same store (request 0 has %q, this one %q)", reqs[0].Store, reqs[i].Store), i)
		}
	}
	choice := ""
	if len(reqs) > 0 {
		choice = reqs[0].Store
	}
	l, err := k.leaseFor(c.Cwd, choice, true)
	if err != nil {
		return nil, err
	}
	defer l.release(k)
	targets := l.targets()
	if len(targets) == 0 {
		return nil, op.Invalid("store", "no knowledge store is open: run knowledge init")
	}
	o := targets[0]
	defaultProject(ctx, o.st, c.Cwd, reqs)
	v, err := k.storeDo(o, func(s *knowledge.Store) (any, error) { return s.Graph().Batch(ctx, c, reqs) })
	if err != nil {
		return nil, err
	}
	results, _ := v.([]any)
	out := &verbs.KnowledgeBatchResult{Store: o.layer, Count: len(results)}
	if call.Limit > 0 && call.Limit < len(results) {
		results = results[:call.Limit]
	}
	out.Items = make([]json.RawMessage, len(results))
	for i, r := range results {
		out.Items[i] = wire.Result(r)
	}
	return out, nil
}

// defaultProject fills in the projectId creates of a batch omit when the
// cwd lies under exactly one project's root of the store — what the store
// does for each request, done once (resolving it per request costs a
// third of a large batch). Otherwise the requests are left as they are
// and the store reports the error.
func defaultProject(ctx context.Context, s *knowledge.Store, cwd string, reqs []*graphop.ManageGraph) {
	need := false
	for _, r := range reqs {
		need = need || (r.Operation == "create" && r.ProjectID == "")
	}
	if !need || !filepath.IsAbs(cwd) {
		return
	}
	cwd = filepath.Clean(cwd)
	var found []string
	for off := 0; ; off += op.MaxLimit {
		page, err := s.Graph().Projects(ctx, &graphop.ProjectList{Limit: new(op.MaxLimit), Offset: new(off)})
		if err != nil {
			return
		}
		for _, p := range page.Items {
			if p.Root != "" && (cwd == p.Root || strings.HasPrefix(cwd, strings.TrimSuffix(p.Root, "/")+"/")) {
				found = append(found, p.ID)
			}
		}
		if off+len(page.Items) >= page.Total || len(page.Items) == 0 {
			break
		}
	}
	if len(found) != 1 {
		return
	}
	for _, r := range reqs {
		if r.Operation == "create" && r.ProjectID == "" {
			r.ProjectID = found[0]
		}
	}
}

// batchError names the request of a batch an error is about.
func batchError(err error, i int) error {
	if e, ok := op.AsError(err); ok {
		return op.AtIndex(e, i)
	}
	return err
}

// knowledgeInspect is inspect target=knowledge view=status: the open
// stores and the caller's stores' status (existing stores only: inspect
// creates nothing).
func (k *Kernel) knowledgeInspect(ctx context.Context, c store.Caller) (any, error) {
	out := &verbs.KnowledgeInspect{IdleTimeoutMS: k.knowledgeIdle().Milliseconds(), Stores: []api.StoreStatus{},
		ProjectStore: store.FindProject(c.Cwd), PersonalStore: store.PersonalPath(k.cfg.AgentDir)}
	l, err := k.leaseFor(c.Cwd, "", false)
	if err != nil {
		return nil, err
	}
	if !l.empty() {
		st, err := l.lay.Execute(ctx, c, &api.Status{})
		if err != nil {
			l.release(k)
			return nil, err
		}
		out.Stores = st.(*api.StatusResult).Stores
	}
	l.release(k) // the open list does not count this request
	out.Open = k.openStores()
	return out, nil
}

// messageKnowledge answers message to=knowledge type=knowledge.<op>: the
// body is the operation's parameters; the answer is its result. The store
// is the durable record (a write is committed before the answer).
func (k *Kernel) messageKnowledge(req wire.Request, env mailbox.Envelope) (any, error) {
	name, ok := strings.CutPrefix(env.Type, "knowledge.")
	if !ok || api.New(name) == nil {
		return nil, op.Invalid("type", "a message to knowledge has type knowledge.<operation> (operations: %s), not %s", strings.Join(api.Ops, ", "), env.Type)
	}
	body, err := json.Marshal(env.Body)
	if err != nil {
		return nil, op.Invalid("body", "body must be a JSON object of %s parameters", name)
	}
	r, err := api.Decode(name, body)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), knowledgeTimeout)
	defer cancel()
	return k.knowledgeDo(ctx, callerOf(req), r)
}

// hintsWait bounds how long a terminal follow-up waits for its graph
// hints: a slow or locked store never holds a follow-up up.
const hintsWait = 300 * time.Millisecond

// addGraphHints sets the spec's advance hints on a run's terminal
// follow-up when the run's cwd lies under a project (of an existing
// store) that has atoms.
func (k *Kernel) addGraphHints(f *Followup, cwd string) {
	if cwd == "" {
		return
	}
	got := make(chan *graphop.GraphHints, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				k.log.Error("graph hints panicked", "panic", p)
				got <- nil
			}
		}()
		got <- k.graphHints(cwd)
	}()
	select {
	case h := <-got:
		if h != nil {
			f.GraphHints = h
			f.Text += "\nKnowledge graph: " + h.Message + " (pi-actors knowledge query_graph operation=context paths=<files touched>, then manage_graph / manage_changelog)"
		}
	case <-time.After(hintsWait):
	}
}
