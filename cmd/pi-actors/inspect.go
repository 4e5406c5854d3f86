package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/pi-actors/pi-actors/internal/lazyre"

	"github.com/pi-actors/pi-actors/internal/config"
	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/recipes/template"
)

func init() {
	verbs = append(verbs, &verb{
		name:    "inspect",
		summary: "read runs, sessions, recipes and tools intentionally",
		usage: `pi-actors inspect target=<target> view=<view> [lines=N] [status=S] [verbose=true] [--verbose] [--json]

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
  session:<id> | session:all       status | runs     (status=all|active|terminal|<status>)
  coordinator                      status | runs | followups   (your session's runs; followups drains its queue)

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
  pi-actors inspect target=session:all view=runs status=active`,
		run: runInspect,
	})
}

// inspectParams are the parameters inspect accepts.
var inspectParams = []string{"target", "view", "lines", "status", "verbose", "session"}

// defaultInspectLines bounds tail-like views when lines is not given.
const defaultInspectLines = 40

// inspectTarget is a parsed target: a bare name (recipes, coordinator) or
// kind:id (run:<id>, session:<id>, room:<run>, branch:<run>/<b>,
// tool:<name>).
type inspectTarget struct {
	raw  string
	kind string
	id   string
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
}

// inspectRoute answers one kind of target. A route without handle is
// part of the contract but not built yet: it answers "not yet available".
type inspectRoute struct {
	// name is how errors name the target, e.g. "recipes" or "tool:<name>".
	name   string
	views  []string
	handle func(ctx context.Context, a *app, r *request, q *inspectQuery) (*inspectOutput, error)
}

// inspectRoutes maps a target kind — or an exact target that is reserved,
// such as tool:pi-actors — to its route. The exact target is tried first.
var inspectRoutes = map[string]*inspectRoute{
	"recipes":        {name: "recipes", views: []string{"status", "summary", "doctor", "imports"}, handle: inspectRecipes},
	"tool":           {name: "tool:<name>", views: []string{"status", "schema"}, handle: inspectTool},
	"tool:pi-actors": {name: "tool:pi-actors", views: []string{"status", "triage"}, handle: inspectPiActors},
	"run":            {name: "run:<id>", views: runViews, handle: inspectRun},
	"session":        {name: "session:<id>", views: []string{"status", "runs"}, handle: inspectSession},
	"coordinator":    {name: "coordinator", views: []string{"status", "runs", "followups"}, handle: inspectCoordinator},
	"room":           {name: "room:<run>"},
	"branch":         {name: "branch:<run>/<branch>"},
}

// inspectTargets lists the target forms for errors.
const inspectTargets = "recipes, tool:<name>, tool:pi-actors, run:<id>, session:<id>|all, coordinator, room:<run>, branch:<run>/<branch>"

var (
	inspectIDRe   = lazyre.New(`^[A-Za-z0-9_.-]+$`)
	inspectSpaces = lazyre.New(`\s+`)
)

// parseInspectTarget parses a target address; a bad one fails before any
// view is looked at.
func parseInspectTarget(s string) (inspectTarget, error) {
	t := inspectTarget{raw: strings.TrimSpace(s)}
	switch t.raw {
	case "":
		return t, usagef("inspect needs target=<target> and view=<view>; targets: %s", inspectTargets)
	case "recipes", "recipe-registry":
		t.kind = "recipes"
		return t, nil
	case "coordinator":
		t.kind = "coordinator"
		return t, nil
	}
	kind, id, ok := strings.Cut(t.raw, ":")
	if !ok {
		return t, usagef("actor address must include kind: %s (targets: %s)", t.raw, inspectTargets)
	}
	if _, known := inspectRoutes[kind]; !known || kind == "recipes" || kind == "coordinator" {
		return t, usagef("unknown inspect target kind %q in %s (targets: %s)", kind, t.raw, inspectTargets)
	}
	if kind == "run" || kind == "session" {
		if _, err := mailbox.Parse(t.raw); err != nil {
			return t, &cliError{exit: exitDataErr, code: "invalid_address", msg: err.Error(), hint: "inspect target=session:all view=runs lists runs"}
		}
	}
	if id == "" {
		return t, usagef("actor address %s needs an id after %q (targets: %s)", t.raw, kind+":", inspectTargets)
	}
	if kind == "tool" && !inspectIDRe.MatchString(id) {
		return t, usagef("invalid tool target: %s (a tool name has only letters, digits, _ . -)", t.raw)
	}
	t.kind, t.id = kind, id
	return t, nil
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

func runInspect(ctx context.Context, a *app, r *request) int {
	q, route, err := parseInspect(r)
	if err != nil {
		return a.fail(r, err)
	}
	if a.agentDir == "" {
		dir, err := config.AgentDir()
		if err != nil {
			return a.fail(r, err)
		}
		a.agentDir = dir
	}
	out, err := route.handle(ctx, a, r, q)
	if err != nil {
		return a.fail(r, err)
	}
	if r.json {
		return a.ok(r, "", out.details)
	}
	text := out.text
	if q.verbose && !out.textIsJSON {
		text = strings.TrimSuffix(text, "\n") + "\n" + inspectJSON(out.details)
	}
	return a.ok(r, text, out.details)
}

// parseInspect checks the parameters, the target and the view.
func parseInspect(r *request) (*inspectQuery, *inspectRoute, error) {
	if len(r.words) > 0 {
		return nil, nil, usagef("inspect takes parameters, not words (got %q): pi-actors inspect target=recipes view=doctor", r.words[0])
	}
	for _, k := range r.order {
		if !inspectHas(inspectParams, k) {
			return nil, nil, usagef("unknown inspect parameter %s (parameters: %s)", k, strings.Join(inspectParams, ", "))
		}
	}
	q := &inspectQuery{lines: defaultInspectLines, verbose: r.verbose}
	target, err := inspectString(r, "target")
	if err != nil {
		return nil, nil, err
	}
	if q.target, err = parseInspectTarget(target); err != nil {
		return nil, nil, err
	}
	if q.view, err = inspectString(r, "view"); err != nil {
		return nil, nil, err
	}
	q.view = strings.TrimSpace(q.view)
	if q.status, err = inspectString(r, "status"); err != nil {
		return nil, nil, err
	}
	if v, ok := r.params["lines"]; ok && v != nil && template.Stringify(v) != "" {
		n, err := strconv.Atoi(strings.TrimSpace(template.Stringify(v)))
		if err != nil || n < 1 {
			return nil, nil, usagef("lines must be a positive integer (got %s)", template.CompactJSON(v))
		}
		q.lines = n
	}
	if v, ok := r.params["verbose"]; ok {
		switch template.Stringify(v) {
		case "true":
			q.verbose = true
		case "false", "":
		default:
			return nil, nil, usagef("verbose must be true or false (got %s)", template.CompactJSON(v))
		}
	}
	route := inspectRoutes[q.target.raw]
	if route == nil {
		route = inspectRoutes[q.target.kind]
	}
	if route.handle == nil {
		return nil, nil, &cliError{exit: exitUsage, code: "not_available",
			msg:  fmt.Sprintf("inspect target=%s is not yet available in this build", q.target.raw),
			hint: "available now: inspect target=recipes, tool:<name>, tool:pi-actors, run:<id>, session:<id>|all, coordinator"}
	}
	if !inspectHas(route.views, q.view) {
		msg := fmt.Sprintf("inspect %s supports %s.", route.name, inspectViewList(route.views))
		if q.view == "" {
			msg = "missing view: " + msg
		}
		return nil, nil, &cliError{exit: exitUsage, code: "usage", msg: msg,
			hint: fmt.Sprintf("pi-actors inspect target=%s view=%s", q.target.raw, route.views[0])}
	}
	return q, route, nil
}

// inspectString reads an optional string parameter.
func inspectString(r *request, key string) (string, error) {
	v, ok := r.params[key]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", usagef("%s must be a string (got %s)", key, template.CompactJSON(v))
	}
	return s, nil
}

func inspectHas(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// inspectPreview writes whitespace runs as _ and cuts to max characters
// (the last one …).
func inspectPreview(s string, max int) string {
	c := inspectSpaces.ReplaceAllString(s, "_")
	if r := []rune(c); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return c
}

// inspectNext renders " next=a|b" (spaces in actions written _), or "".
func inspectNext(actions []string) string {
	if len(actions) == 0 {
		return ""
	}
	parts := make([]string, len(actions))
	for i, a := range actions {
		parts[i] = inspectSpaces.ReplaceAllString(a, "_")
	}
	return " next=" + strings.Join(parts, "|")
}

func inspectJSON(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}
