package verbs

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/pi-actors/pi-actors/internal/lazyre"

	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/recipes/template"
)

// Inspect reads state intentionally: runs, sessions, the coordinator,
// recipes and tools.
type Inspect struct {
	Target  string    `json:"target" jsonschema:"what to read: recipes, tool:<name>, tool:pi-actors, run:<id>, session:<id>, session:all, coordinator, room:<run>, branch:<run>/<branch>, knowledge"`
	View    string    `json:"view" jsonschema:"the view of the target, e.g. status, tail, events, messages, mailbox, runs, followups, doctor"`
	Lines   LooseInt  `json:"lines,omitzero" jsonschema:"how many lines tail-like views show (default 40)"`
	Status  string    `json:"status,omitempty" jsonschema:"session and coordinator views: all, active, terminal, or one status"`
	Verbose LooseBool `json:"verbose,omitzero" jsonschema:"append the full details as JSON to the text"`
}

// Validate checks the parameters, the target and the view.
func (in *Inspect) Validate() error {
	_, _, err := in.query()
	return err
}

func init() {
	Register(&Spec{
		Name:    "inspect",
		Summary: "read runs, sessions, recipes and tools intentionally",
		Tool:    &Annotations{ReadOnly: true, Idempotent: true},
		Usage: `pi-actors inspect target=<target> view=<view> [lines=N] [status=S] [verbose=true] [--verbose] [--json]

Reads state intentionally and prints compact text: a first line of
key=value facts, bounded detail lines, and next= actions where a next step
is evidence-backed (actions are joined with | and their spaces written _).
--verbose (or verbose=true) appends the full details as JSON; --json prints
them as the result of the JSON envelope.

Targets and views:
  recipes (alias recipe-registry)  status | summary | doctor | imports
  tool:<name>                      status | schema   (user-root recipe tools)
  tool:pi-actors                   status | triage
  run:<id>                         status | tail | events | messages | artifacts | files | mailbox
                                   | communication | dead_letters | dag (a workflow run's nodes)
                                   | trace (why it ran: the chain from the session's root,
                                   the tree below it, messages, restarts, exits)
  room:<run>                       status | messages | previews | roster | contacts
  branch:<run>/<branch>            mailbox
  session:<id> | session:all       status | runs     (status=all|active|terminal|<status>)
                                   | sessions (state, live/total runs, last activity)
                                   | trace    (session:<id>: the whole session's timeline)
  coordinator                      status | runs | followups | dead_letters
                                   (your session's runs; followups drains its queue;
                                   dead_letters: expired or undeliverable messages)
  knowledge                        status   (open stores, projects, counts, schema version, sizes)

Run, session and coordinator views read the state files directly, so they
work while the kernel is down (followups asks the kernel, starting it).
run view=status: cpu= sums each process's average CPU since it started
over the run's process tree, rss= its resident memory; stalled=true means
no output or event for runs.stalled_after_s (pi-actors.toml, default 300).
Your session is $PI_ACTORS_SESSION or session=<id>; a run owned by another
session is refused (exit 77).

Examples:
  pi-actors inspect target=recipes view=doctor
  pi-actors inspect target=recipes view=summary --verbose
  pi-actors inspect target=tool:my-tool view=schema
  pi-actors inspect target=run:web view=status
  pi-actors inspect target=session:all view=runs status=active
  pi-actors inspect target=session:all view=sessions
  pi-actors inspect target=run:worker-3 view=trace
  pi-actors inspect target=room:swarm view=messages lines=20`,
		New: func() Request { return new(Inspect) },
		Run: runInspect,
	})
}

// defaultInspectLines bounds tail-like views when lines is not given.
const defaultInspectLines = 40

// inspectTarget is a parsed target: a bare name (recipes, coordinator) or
// kind:id (run:<id>, session:<id>, room:<run>, branch:<run>/<b>,
// tool:<name>).
type inspectTarget struct {
	raw  string
	kind string
	id   string
	node string // run:<id>@<node>: the node (see route.go)
}

// inspectQuery is one inspect request, checked.
type inspectQuery struct {
	target  inspectTarget
	view    string
	lines   int
	status  string
	verbose bool
}

// inspectOutput is what a handler found: the compact text and the
// details (the --json result, and the JSON --verbose appends).
type inspectOutput struct {
	text    string
	details any
	// textIsJSON marks text that already is the pretty details JSON
	// (tool schema), so --verbose does not repeat it.
	textIsJSON bool
	// settle is the Outcome's Settle (view=followups).
	settle func(bool)
}

// inspectRoute answers one kind of target.
type inspectRoute struct {
	// name is how errors name the target, e.g. "recipes" or "tool:<name>".
	name   string
	views  []string
	handle func(ctx context.Context, env *Env, q *inspectQuery) (*inspectOutput, error)
}

// inspectRoutes maps a target kind — or an exact target that is reserved,
// such as tool:pi-actors — to its route. The exact target is tried first.
var inspectRoutes = map[string]*inspectRoute{
	"recipes":        {name: "recipes", views: []string{"status", "summary", "doctor", "imports"}, handle: inspectRecipes},
	"tool":           {name: "tool:<name>", views: []string{"status", "schema"}, handle: inspectTool},
	"tool:pi-actors": {name: "tool:pi-actors", views: []string{"status", "triage"}, handle: inspectPiActors},
	"run":            {name: "run:<id>", views: runViews, handle: inspectRun},
	"session":        {name: "session:<id>", views: []string{"status", "runs", "sessions", "trace"}, handle: inspectSession},
	"coordinator":    {name: "coordinator", views: []string{"status", "runs", "followups"}, handle: inspectCoordinator},
	"cluster":        {name: "cluster", views: []string{"nodes", "status"}, handle: inspectCluster},
	// room and branch: inspect_rooms.go
}

// inspectTargets lists the target forms for errors.
const inspectTargets = "recipes, tool:<name>, tool:pi-actors, run:<id>[@<node>], session:<id>|all, coordinator, knowledge, cluster, room:<run>, branch:<run>/<branch>"

var inspectIDRe = lazyre.New(`^[A-Za-z0-9_.-]+$`)

// parseInspectTarget parses a target address; a bad one fails before any
// view is looked at.
func parseInspectTarget(s string) (inspectTarget, error) {
	addr, node, err := SplitAddress(s)
	if err != nil {
		return inspectTarget{raw: strings.TrimSpace(s)}, err
	}
	t := inspectTarget{raw: addr, node: node}
	switch t.raw {
	case "":
		return t, Usagef("inspect needs target=<target> and view=<view>; targets: %s", inspectTargets)
	case "recipes", "recipe-registry":
		t.kind = "recipes"
		return t, nil
	case "coordinator":
		t.kind = "coordinator"
		return t, nil
	}
	if r := inspectRoutes[t.raw]; r != nil && !strings.Contains(t.raw, ":") {
		if strings.Contains(r.name, ":") && t.raw != "run" && t.raw != "session" { // tool, room: an address needs its id
			return t, Usagef("actor address %s needs an id: use %s (targets: %s)", t.raw, r.name, inspectTargets)
		}
		// A bare target of its own (knowledge).
		t.kind = t.raw
		return t, nil
	}
	kind, id, ok := strings.Cut(t.raw, ":")
	if !ok {
		return t, Usagef("actor address must include kind: %s (targets: %s)", t.raw, inspectTargets)
	}
	if r, known := inspectRoutes[kind]; !known || !strings.Contains(r.name, ":") { // bare targets take no id
		return t, Usagef("unknown inspect target kind %q in %s (targets: %s)", kind, t.raw, inspectTargets)
	}
	if kind == "run" || kind == "session" { // a malformed run or session address is invalid data (65)
		if _, err := mailbox.Parse(t.raw); err != nil {
			return t, &Error{Exit: ExitDataErr, Code: "invalid_address", Message: err.Error(), Hint: "inspect target=session:all view=runs lists runs"}
		}
	}
	if id == "" {
		return t, Usagef("actor address %s needs an id after %q (targets: %s)", t.raw, kind+":", inspectTargets)
	}
	if kind == "tool" && !inspectIDRe.MatchString(id) {
		return t, Usagef("invalid tool target: %s (a tool name has only letters, digits, _ . -)", t.raw)
	}
	t.kind, t.id = kind, id
	return t, nil
}

// InspectViews are the views of a target (every view of every target
// when target is empty or unknown), for shell completion.
func InspectViews(target string) []string {
	var views []string
	if t, err := parseInspectTarget(target); err == nil {
		r := inspectRoutes[t.raw]
		if r == nil {
			r = inspectRoutes[t.kind]
		}
		if r != nil {
			return slices.Clone(r.views)
		}
	}
	for _, r := range inspectRoutes {
		views = append(views, r.views...)
	}
	slices.Sort(views)
	return slices.Compact(views)
}

// inspectViewList renders views as "view=a, view=b, or view=c".
func inspectViewList(views []string) string {
	parts := make([]string, len(views))
	for i, v := range views {
		parts[i] = "view=" + v
	}
	switch len(parts) {
	case 1:
		return parts[0]
	case 2:
		return parts[0] + " or " + parts[1]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + ", or " + parts[len(parts)-1]
}

func runInspect(ctx context.Context, env *Env, req Request) (*Outcome, error) {
	in := req.(*Inspect)
	if out, routed, err := env.route(ctx, "inspect", in, &in.Target); routed {
		return out, err
	}
	q, route, err := in.query()
	if err != nil {
		return nil, err
	}
	out, err := route.handle(ctx, env, q)
	if err != nil {
		return nil, err
	}
	text := out.text
	if q.verbose && !out.textIsJSON {
		text = strings.TrimSuffix(text, "\n") + "\n" + prettyJSON(out.details)
	}
	return &Outcome{Text: text, Result: out.details, Settle: out.settle}, nil
}

// query checks the parameters, the target and the view.
func (in *Inspect) query() (*inspectQuery, *inspectRoute, error) {
	q := &inspectQuery{lines: defaultInspectLines}
	var err error
	if q.target, err = parseInspectTarget(in.Target); err != nil {
		return nil, nil, err
	}
	q.view = strings.TrimSpace(in.View)
	q.status = in.Status
	if v := in.Lines.V; in.Lines.Set && v != nil && template.Stringify(v) != "" {
		n, err := strconv.Atoi(strings.TrimSpace(template.Stringify(v)))
		if err != nil || n < 1 {
			return nil, nil, Usagef("lines must be a positive integer (got %s)", template.CompactJSON(v))
		}
		q.lines = n
	}
	if in.Verbose.Set {
		switch template.Stringify(in.Verbose.V) {
		case "true":
			q.verbose = true
		case "false", "":
		default:
			return nil, nil, Usagef("verbose must be true or false (got %s)", template.CompactJSON(in.Verbose.V))
		}
	}
	route := inspectRoutes[q.target.raw]
	if route == nil {
		route = inspectRoutes[q.target.kind]
	}
	if !inspectHas(route.views, q.view) {
		msg := fmt.Sprintf("inspect %s supports %s.", route.name, inspectViewList(route.views))
		if q.view == "" {
			msg = "missing view: " + msg
		}
		return nil, nil, &Error{Exit: ExitUsage, Code: "usage", Message: msg,
			Hint: fmt.Sprintf("pi-actors inspect target=%s view=%s", strings.TrimSpace(in.Target), route.views[0])}
	}
	return q, route, nil
}

func inspectHas(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

func inspectPreview(s string, max int) string { return preview(s, max) }

func inspectNext(actions []string) string { return nextText(actions) }
