package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs"
)

// Every run the connection's session may read (its own and unowned ones)
// is also a pair of MCP resources, pi-actors://run/<id>/status and
// pi-actors://run/<id>/tail, and the two resource templates read any
// such run by id. The list follows the kernel's runs stream (the events
// operation `top` reads), started on the first resources request, so a
// client that never asks costs nothing: new runs are added (the SDK sends
// notifications/resources/list_changed), pruned ones removed, and
// notifications/resources/updated goes to subscribers when a run's
// status or output changes. Content is the inspect view's compact text,
// bounded, with where the rest is.

// Resource URIs and templates.
const (
	runURIPrefix   = "pi-actors://run/"
	statusTemplate = runURIPrefix + "{id}/status"
	tailTemplate   = runURIPrefix + "{id}/tail"
)

// Bounds of the run resources.
const (
	// resourceTailLines is how many lines of each log the tail resource
	// shows.
	resourceTailLines = 40
	// maxListedEnded bounds the ended runs listed (newest kept); the
	// templates still read older ones.
	maxListedEnded = 100
	// resourcesWait bounds how long a first resources/list waits for the
	// runs stream's first frame.
	resourcesWait = 5 * time.Second
)

// runURI is the URI of a run's status or tail resource.
func runURI(id, view string) string { return runURIPrefix + id + "/" + view }

// parseRunURI splits pi-actors://run/<id>/<status|tail>.
func parseRunURI(uri string) (id, view string, ok bool) {
	rest, found := strings.CutPrefix(uri, runURIPrefix)
	if !found {
		return "", "", false
	}
	id, view, found = strings.Cut(rest, "/")
	if !found || (view != "status" && view != "tail") || runs.ValidID(id) != nil {
		return "", "", false
	}
	return id, view, true
}

// runResources follows the runs listed as resources.
type runResources struct {
	s     *Server
	once  sync.Once
	ready chan struct{} // closed after the stream's first frame (or first failure)

	mu     sync.Mutex
	rows   map[string]verbs.RunRow // run id → the last row seen (runs the session may read)
	listed map[string]bool         // run ids listed as resources
	dirs   map[string]string       // state dir → run id
}

func newRunResources(s *Server) *runResources {
	return &runResources{s: s, ready: make(chan struct{}), rows: map[string]verbs.RunRow{}, listed: map[string]bool{}, dirs: map[string]string{}}
}

// options sets the subscription handlers on the server's options,
// before the server is built.
func (rr *runResources) options(o *mcp.ServerOptions) {
	o.SubscribeHandler = func(ctx context.Context, req *mcp.SubscribeRequest) error {
		id, _, ok := parseRunURI(req.Params.URI)
		if !ok {
			return mcp.ResourceNotFoundError(req.Params.URI)
		}
		if _, err := runs.Access(rr.s.env.AgentDir, id, rr.s.env.Session); err != nil {
			return resourceError(req.Params.URI, err)
		}
		rr.start(ctx)
		return nil
	}
	o.UnsubscribeHandler = func(context.Context, *mcp.UnsubscribeRequest) error { return nil }
}

// register adds the resource templates.
func (rr *runResources) register() {
	for _, t := range []*mcp.ResourceTemplate{
		{URITemplate: statusTemplate, Name: "run-status", Title: "A run's status",
			Description: "pi-actors inspect target=run:<id> view=status: status, exit code, restarts, elapsed, CPU and RSS, last output line, next steps", MIMEType: "text/plain"},
		{URITemplate: tailTemplate, Name: "run-tail", Title: "A run's output",
			Description: fmt.Sprintf("pi-actors inspect target=run:<id> view=tail: the last %d lines of stdout.log and stderr.log, each cut, with the logs' paths", resourceTailLines), MIMEType: "text/plain"},
	} {
		rr.s.srv.AddResourceTemplate(t, rr.read)
	}
}

// read answers resources/read for a run resource: the inspect view's text.
func (rr *runResources) read(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	id, view, ok := parseRunURI(uri)
	if !ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	spec := verbs.Find("inspect")
	raw, _ := json.Marshal(map[string]any{"target": "run:" + id, "view": view, "lines": resourceTailLines})
	q, err := spec.DecodeJSON(raw)
	if err != nil {
		return nil, err
	}
	env := *rr.s.env
	out, err := spec.Run(ctx, &env, q)
	if err != nil {
		return nil, resourceError(uri, err)
	}
	defer func() { verbs.SettleOutcome(out, ctx.Err() == nil) }() // a cancelled read drops its answer
	text := out.Text + "\n" + rest(id, view)
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: text}}}, nil
}

// rest says where the rest of a run resource is.
func rest(id, view string) string {
	if view == "tail" {
		return fmt.Sprintf("(at most %d lines of each log, each line cut; the whole logs are the files named above: pi-actors logs %s --lines=N, inspect target=run:%s view=events)", resourceTailLines, id, id)
	}
	return fmt.Sprintf("(more: pi-actors://run/%s/tail, inspect target=run:%s view=events|messages|artifacts|files)", id, id)
}

// resourceError is a failed read or subscribe: not found as MCP's
// resource-not-found; anything else a JSON-RPC error with a code of its
// kind (invalid params for the caller's mistakes, a server error else)
// and the CLI's code, exit and hint as data.
func resourceError(uri string, err error) error {
	ce := verbs.Classify(err)
	if ce.Code == "not_found" || errors.Is(err, runs.ErrNotFound) {
		return mcp.ResourceNotFoundError(uri)
	}
	code := int64(serverError)
	if ce.Exit == verbs.ExitUsage || ce.Exit == verbs.ExitDataErr {
		code = jsonrpc.CodeInvalidParams
	}
	data, _ := json.Marshal(map[string]any{"code": ce.Code, "exit": ce.Exit, "hint": ce.Hint, "uri": uri})
	return &jsonrpc.Error{Code: code, Message: fmt.Sprintf("%s: %s", ce.Code, ce.Message), Data: data}
}

// serverError is JSON-RPC's implementation-defined server error: a read
// refused (another session's run, 77) or failed.
const serverError = -32000

// start follows the kernel's runs stream (once per connection) and waits
// — at most resourcesWait — for its first frame.
func (rr *runResources) start(ctx context.Context) {
	rr.once.Do(func() { go rr.follow() })
	select {
	case <-rr.ready:
	case <-ctx.Done():
	case <-time.After(resourcesWait):
	}
}

// follow reads the runs stream while the connection lives, reconnecting
// (and starting the kernel) when it goes away.
func (rr *runResources) follow() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ss := rr.s.session(ctx)
	if ss == nil {
		close(rr.ready)
		return
	}
	go func() { ss.Wait(); cancel() }()
	first := true
	// Usage samples are not needed: they change no resource.
	req := &verbs.Events{Ended: maxListedEnded, UsageMS: verbs.Int(time.Hour / time.Millisecond)}
	for ctx.Err() == nil {
		err := verbs.StreamEvents(ctx, rr.s.env, req, func(f *verbs.EventsFrame) error {
			rr.apply(ctx, f)
			if first {
				first = false
				close(rr.ready)
			}
			return nil
		})
		if first {
			first = false
			close(rr.ready) // a list answers with what there is
		}
		if ctx.Err() != nil {
			return
		}
		rr.s.log.Warn("runs stream ended; reconnecting", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(followupDelay):
		}
	}
}

// visible reports whether the connection's session may read the run.
func (rr *runResources) visible(r *verbs.RunRow) bool {
	return r.Owner == "" || r.Owner == rr.s.env.Session
}

// statusKey is what a status resource shows that a frame may change.
func statusKey(r *verbs.RunRow) string {
	return fmt.Sprint(r.Status, r.Reason, r.Restarts, r.Pid, r.EndedAt, r.Stalled, r.ReadyState, r.ReadySince)
}

// apply brings the resources in line with one frame of the runs stream.
func (rr *runResources) apply(ctx context.Context, f *verbs.EventsFrame) {
	var add []verbs.RunRow
	var remove, updated []string
	rr.mu.Lock()
	for _, r := range f.Runs {
		if !rr.visible(&r) {
			continue
		}
		old, seen := rr.rows[r.Run]
		rr.rows[r.Run], rr.dirs[r.StateDir] = r, r.Run
		if !rr.listed[r.Run] {
			rr.listed[r.Run] = true
			add = append(add, r)
		}
		switch {
		case !seen && f.Snapshot:
		case !seen || statusKey(&old) != statusKey(&r):
			// The tail's header carries the status too.
			updated = append(updated, runURI(r.Run, "status"), runURI(r.Run, "tail"))
		case old.LastLine != r.LastLine || old.LastStream != r.LastStream:
			updated = append(updated, runURI(r.Run, "tail"))
		}
	}
	for _, dir := range f.Gone {
		if id, ok := rr.dirs[dir]; ok {
			delete(rr.dirs, dir)
			delete(rr.rows, id)
			if rr.listed[id] {
				delete(rr.listed, id)
				remove = append(remove, runURI(id, "status"), runURI(id, "tail"))
			}
		}
	}
	remove = append(remove, rr.evict()...)
	add = slices.DeleteFunc(add, func(r verbs.RunRow) bool { return !rr.listed[r.Run] }) // evicted at once
	rr.mu.Unlock()
	for _, r := range add {
		rr.addRun(r)
	}
	if len(remove) > 0 {
		rr.s.srv.RemoveResources(remove...)
	}
	for _, uri := range updated {
		rr.s.srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri})
	}
}

// evict unlists the oldest ended runs beyond maxListedEnded (rr.mu held)
// and returns their URIs.
func (rr *runResources) evict() []string {
	var ended []verbs.RunRow
	for id := range rr.listed {
		if r := rr.rows[id]; !r.Live() {
			ended = append(ended, r)
		}
	}
	if len(ended) <= maxListedEnded {
		return nil
	}
	sort.Slice(ended, func(i, j int) bool { return ended[i].EndedAt.After(ended[j].EndedAt) })
	var uris []string
	for _, r := range ended[maxListedEnded:] {
		delete(rr.listed, r.Run)
		uris = append(uris, runURI(r.Run, "status"), runURI(r.Run, "tail"))
	}
	return uris
}

// addRun lists a run's two resources.
func (rr *runResources) addRun(r verbs.RunRow) {
	what := r.What()
	if len([]rune(what)) > 80 {
		what = string([]rune(what)[:79]) + "…"
	}
	for _, v := range []struct{ view, title, desc string }{
		{"status", "status", "status, exit code, restarts, CPU and RSS, last output line"},
		{"tail", "output", fmt.Sprintf("the last %d lines of stdout and stderr", resourceTailLines)},
	} {
		rr.s.srv.AddResource(&mcp.Resource{URI: runURI(r.Run, v.view), Name: "run:" + r.Run + "/" + v.view, Title: "run:" + r.Run + " " + v.title,
			Description: fmt.Sprintf("%s of run:%s (%s)", v.desc, r.Run, what), MIMEType: "text/plain"}, rr.read)
	}
}
