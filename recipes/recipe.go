package recipes

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pi-actors/pi-actors/internal/lazyre"

	"github.com/pi-actors/pi-actors/recipes/template"
	"github.com/pi-actors/pi-actors/runs/restart"
)

// MaxFileBytes is the largest recipe file read; larger files are rejected
// before parsing.
const MaxFileBytes = 1 << 20

// MaxImportDepth bounds import chains.
const MaxImportDepth = 32

// ErrInvalid marks a recipe that cannot be used (bad JSON, no template, a
// cycle…); ErrNotFound a recipe that does not exist; ErrDisabled a
// disabled one.
var (
	ErrInvalid  = errors.New("invalid recipe")
	ErrNotFound = errors.New("recipe not found")
	ErrDisabled = errors.New("recipe disabled")
)

// Recipe is one loaded recipe file. Identity is the file name without its
// extension; a `name` field inside the file is ignored.
type Recipe struct {
	ID     string
	Path   string // absolute path, or "pkg:<file>" for the packaged library
	Format string // "json" or "md"
	// Raw is the recipe object as written (Markdown compiled to the same
	// shape), with import references still in place.
	Raw map[string]any

	Description  string
	Disabled     bool
	Async        bool
	StateDir     string
	Imports      map[string]Import
	ImportOrder  []string // aliases in the order the file declares them
	Artifacts    map[string]Artifact
	Mailbox      *Mailbox
	RetireWhen   string
	Restart      map[string]any
	ActorContext bool // the actor_context bundle is on (the default)
	Values       map[string]any
	Usage        map[string]any
	Warnings     []string // non-fatal load diagnostics
	// Workflow is the workflow the recipe runs (a file with a workflow
	// object instead of a template): spawned, it is a workflow run.
	Workflow any
}

// Import is one entry of `imports`.
type Import struct {
	Alias    string
	From     string
	Defaults map[string]any
	Values   map[string]any
}

// Artifact is a declared output of a run.
type Artifact struct {
	Path      string `json:"path"`
	Kind      string `json:"kind,omitempty"`
	MediaType string `json:"media_type,omitempty"`
	Required  bool   `json:"required,omitempty"`
}

// Mailbox is the advisory message contract of a recipe.
type Mailbox struct {
	Accepts []MailboxEntry `json:"accepts,omitempty"`
	Emits   []MailboxEntry `json:"emits,omitempty"`
}

// MailboxEntry is one accepted or emitted message type.
type MailboxEntry struct {
	Type             string `json:"type"`
	BodySchema       any    `json:"body_schema,omitempty"`
	Ack              any    `json:"ack,omitempty"`
	Idempotency      string `json:"idempotency,omitempty"`
	Level            string `json:"level,omitempty"`
	RequiresResponse bool   `json:"requires_response,omitempty"`
	Summary          string `json:"summary,omitempty"`
}

// envelopeKeys are template controls a recipe may write at top level; they
// merge into the template node.
var envelopeKeys = []string{"args", "defaults", "parallel", "label", "when", "timeout", "delay", "output", "retry", "failure", "recover", "repeat"}

// recipeKeys are the other fields a recipe may have.
var recipeKeys = []string{"description", "disabled", "async", "state_dir", "imports", "artifacts", "mailbox", "retire_when", "restart", "values", "usage", "actor_context", "template", "name", "workflow"}

// WorkflowTemplate is the template of a recipe that holds a workflow: its
// run's leaf is the workflow's scheduler.
const WorkflowTemplate = "{pi_actors} workflow run {state_dir}"

var aliasRe = lazyre.New(`^[A-Za-z0-9_.-]+$`)

// IDOf returns the recipe id of a file path: its base name without .json
// or .md.
func IDOf(path string) string {
	base := filepath.Base(path)
	if i := strings.LastIndex(base, ":"); i >= 0 {
		base = base[i+1:]
	}
	for _, ext := range []string{".json", ".md"} {
		if strings.HasSuffix(base, ext) {
			return strings.TrimSuffix(base, ext)
		}
	}
	return base
}

// compile builds a Recipe from its raw object, checking every field.
func compile(raw map[string]any, path, format string) (*Recipe, error) {
	r := &Recipe{ID: IDOf(path), Path: path, Format: format, Raw: raw, ActorContext: true}
	if wf, ok := raw["workflow"]; ok {
		if err := r.setWorkflow(wf); err != nil {
			return nil, err
		}
	}
	if _, ok := raw["template"]; !ok {
		return nil, fmt.Errorf("%w: recipe must define template (or workflow)", ErrInvalid)
	}
	var unknown []string
	for k := range raw {
		if !contains(envelopeKeys, k) && !contains(recipeKeys, k) {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		r.Warnings = append(r.Warnings, fmt.Sprintf("unknown field %s is ignored", k))
	}
	var err error
	if r.Description, err = optString(raw, "description"); err != nil {
		return nil, err
	}
	if r.Disabled, err = optBool(raw, "disabled"); err != nil {
		return nil, err
	}
	if r.Async, err = optBool(raw, "async"); err != nil {
		return nil, err
	}
	if r.StateDir, err = optString(raw, "state_dir"); err != nil {
		return nil, err
	}
	if r.RetireWhen, err = optString(raw, "retire_when"); err != nil {
		return nil, err
	}
	if r.RetireWhen != "" && r.RetireWhen != "children_terminal" {
		return nil, fmt.Errorf("%w: retire_when must be \"children_terminal\" (got %q)", ErrInvalid, r.RetireWhen)
	}
	if v, ok := raw["actor_context"]; ok {
		switch v {
		case false, "off":
			r.ActorContext = false
		case true, "on", nil:
		default:
			return nil, fmt.Errorf("%w: actor_context must be true, false or \"off\" (got %s)", ErrInvalid, template.CompactJSON(v))
		}
	}
	if s, ok := raw["restart"].(string); ok {
		// A bare policy name, as spawn takes it (restart=on-failure): the
		// other fields take their defaults.
		if strings.TrimSpace(s) == "" {
			return nil, fmt.Errorf("%w: restart must be a policy name (never, on-failure, on-abnormal, always) or an object {policy, backoff_ms, …}", ErrInvalid)
		}
		raw = maps.Clone(raw)
		raw["restart"] = map[string]any{"policy": s}
	}
	for _, f := range []struct {
		key string
		dst *map[string]any
	}{{"values", &r.Values}, {"usage", &r.Usage}, {"restart", &r.Restart}} {
		if *f.dst, err = optObject(raw, f.key); err != nil {
			return nil, err
		}
	}
	if r.Restart != nil {
		// Checked now, not first at spawn: doctor lists it, call refuses it.
		if _, err := restart.Parse(r.Restart); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
		}
	}
	if r.Imports, err = parseImports(raw["imports"]); err != nil {
		return nil, err
	}
	if r.Artifacts, err = parseArtifacts(raw["artifacts"]); err != nil {
		return nil, err
	}
	if r.Mailbox, err = parseMailbox(raw["mailbox"]); err != nil {
		return nil, err
	}
	if err := checkTemplateShape(raw["template"]); err != nil {
		return nil, err
	}
	return r, nil
}

// setWorkflow takes a recipe's workflow object: the recipe is async
// (spawned, never run in the foreground) and runs the workflow's
// scheduler. The workflow itself is checked when it is spawned.
func (r *Recipe) setWorkflow(wf any) error {
	if _, ok := wf.(map[string]any); !ok {
		return fmt.Errorf("%w: workflow must be an object {id, nodes, policy, …} (got %s)", ErrInvalid, template.CompactJSON(wf))
	}
	if _, ok := r.Raw["template"]; ok {
		return fmt.Errorf("%w: a recipe holds a template or a workflow, not both", ErrInvalid)
	}
	r.Workflow, r.Raw["template"], r.Raw["async"] = wf, WorkflowTemplate, true
	return nil
}

// checkTemplateShape rejects templates that can never run: a blank string,
// an empty array, a value of the wrong type.
func checkTemplateShape(v any) error {
	switch t := v.(type) {
	case string:
		if strings.TrimSpace(t) == "" {
			return fmt.Errorf("%w: template is empty", ErrInvalid)
		}
	case []any:
		if len(t) == 0 {
			return fmt.Errorf("%w: template sequence is empty", ErrInvalid)
		}
	case map[string]any:
	default:
		return fmt.Errorf("%w: template must be a string, an array or an object (got %s)", ErrInvalid, template.CompactJSON(v))
	}
	return nil
}

func optString(raw map[string]any, key string) (string, error) {
	v, ok := raw[key]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%w: %s must be a string (got %s)", ErrInvalid, key, template.CompactJSON(v))
	}
	return s, nil
}

func optBool(raw map[string]any, key string) (bool, error) {
	v, ok := raw[key]
	if !ok || v == nil {
		return false, nil
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("%w: %s must be true or false (got %s)", ErrInvalid, key, template.CompactJSON(v))
	}
	return b, nil
}

func optObject(raw map[string]any, key string) (map[string]any, error) {
	v, ok := raw[key]
	if !ok || v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: %s must be an object (got %s)", ErrInvalid, key, template.CompactJSON(v))
	}
	return m, nil
}

func parseImports(v any) (map[string]Import, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: imports must be an object of alias → recipe (got %s)", ErrInvalid, template.CompactJSON(v))
	}
	out := make(map[string]Import, len(m))
	for alias, b := range m {
		if !aliasRe.MatchString(alias) {
			return nil, fmt.Errorf("%w: invalid recipe import alias %q (letters, digits, _ . - only)", ErrInvalid, alias)
		}
		imp := Import{Alias: alias}
		switch x := b.(type) {
		case string:
			imp.From = x
		case map[string]any:
			from, _ := x["from"].(string)
			if strings.TrimSpace(from) == "" {
				return nil, fmt.Errorf("%w: recipe import %s must define from", ErrInvalid, alias)
			}
			imp.From = from
			var err error
			if imp.Defaults, err = optObject(x, "defaults"); err != nil {
				return nil, fmt.Errorf("imports.%s: %w", alias, err)
			}
			if imp.Values, err = optObject(x, "values"); err != nil {
				return nil, fmt.Errorf("imports.%s: %w", alias, err)
			}
		default:
			return nil, fmt.Errorf("%w: recipe import %s must be a string or an object {from, defaults, values}", ErrInvalid, alias)
		}
		if strings.TrimSpace(imp.From) == "" {
			return nil, fmt.Errorf("%w: recipe import %s must define from", ErrInvalid, alias)
		}
		out[alias] = imp
	}
	return out, nil
}

func parseArtifacts(v any) (map[string]Artifact, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: artifacts must be an object of name → path or {path, kind, media_type, required}", ErrInvalid)
	}
	out := map[string]Artifact{}
	for name, a := range m {
		if strings.TrimSpace(name) == "" {
			continue
		}
		switch x := a.(type) {
		case string:
			out[name] = Artifact{Path: x}
		case map[string]any:
			p, _ := x["path"].(string)
			if p == "" {
				return nil, fmt.Errorf("%w: artifacts.%s needs a path", ErrInvalid, name)
			}
			art := Artifact{Path: p}
			art.Kind, _ = x["kind"].(string)
			art.MediaType, _ = x["media_type"].(string)
			art.Required, _ = x["required"].(bool)
			out[name] = art
		default:
			return nil, fmt.Errorf("%w: artifacts.%s must be a path or {path, kind, media_type, required}", ErrInvalid, name)
		}
	}
	return out, nil
}

func parseMailbox(v any) (*Mailbox, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: mailbox must be an object {accepts, emits}", ErrInvalid)
	}
	mb := &Mailbox{Accepts: mailboxEntries(m["accepts"]), Emits: mailboxEntries(m["emits"])}
	return mb, nil
}

// mailboxEntries normalises a mailbox list: strings become {type}; objects
// keep their typed fields; anything else (and empty types) is dropped.
func mailboxEntries(v any) []MailboxEntry {
	list, _ := v.([]any)
	var out []MailboxEntry
	for _, e := range list {
		switch x := e.(type) {
		case string:
			if t := strings.TrimSpace(x); t != "" {
				out = append(out, MailboxEntry{Type: t})
			}
		case map[string]any:
			t, _ := x["type"].(string)
			if t = strings.TrimSpace(t); t == "" {
				continue
			}
			me := MailboxEntry{Type: t, BodySchema: x["body_schema"], Ack: x["ack"]}
			me.Idempotency, _ = x["idempotency"].(string)
			me.Level, _ = x["level"].(string)
			me.Summary, _ = x["summary"].(string)
			me.RequiresResponse, _ = x["requires_response"].(bool)
			out = append(out, me)
		}
	}
	return out
}

// Allows reports whether the contract accepts a message type; an empty
// accepts list accepts everything.
func (m *Mailbox) Allows(typ string) bool {
	if m == nil || len(m.Accepts) == 0 {
		return true
	}
	for _, e := range m.Accepts {
		if e.Type == typ || strings.HasSuffix(e.Type, ".*") && strings.HasPrefix(typ, strings.TrimSuffix(e.Type, "*")) {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
