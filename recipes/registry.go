package recipes

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/pi-actors/pi-actors/internal/lazyre"

	"github.com/pi-actors/pi-actors/internal/fsutil"
	"github.com/pi-actors/pi-actors/recipes/template"
)

// This file is the register_tool operation: it creates, updates, deletes,
// lists and promotes the JSON recipes of the user root (<agent>/recipes),
// which are agent tools by location. Every request is validated in full —
// the file it would write is parsed and resolved like any discovered
// recipe — before anything touches the disk, and the one file written is
// replaced atomically under the user root's lock (LockName), so a failed
// request never leaves a partial or half-validated file.

// Registrar carries out register_tool requests for one agent root.
type Registrar struct {
	AgentDir string
	Home     string // for ~ in template and draft paths
	Cwd      string // relative template and draft paths resolve here
}

func (rg *Registrar) userRoot() string { return UserRoot(rg.AgentDir) }

func (rg *Registrar) resolver() *Resolver { return &Resolver{AgentDir: rg.AgentDir, Home: rg.Home} }

// List returns the names of the user tools: the active, valid, enabled
// recipes of the user root, sorted.
func (rg *Registrar) List() ([]string, error) {
	g, err := Discover(rg.AgentDir)
	if err != nil {
		return nil, err
	}
	names := []string{}
	for _, e := range g.Entries {
		if e.Tool() {
			names = append(names, e.ID)
		}
	}
	sort.Strings(names)
	return names, nil
}

// Registered is the outcome of one register_tool request.
type Registered struct {
	Action        string // created, updated, deleted or not_found
	Tool          string
	Path          string
	Args          []string
	Warnings      []string
	WrappedRecipe string // the wrapped recipe's path, for an import-wrapper
	WrappedFrom   string // the import value written
	Draft         string // the promoted draft
	Note          string
	DryRun        bool
	Document      []byte // the file written (or that would be, with DryRun)
}

// Message is the text answer: `Registered tool "x" (args: a, b).`, the
// wrapped recipe or draft, then `Warnings:` with one `- …` line each.
func (r *Registered) Message() string {
	var b strings.Builder
	args := "none"
	if len(r.Args) > 0 {
		args = strings.Join(r.Args, ", ")
	}
	switch r.Action {
	case "deleted":
		if r.DryRun {
			fmt.Fprintf(&b, "Would have deleted tool %q: %s (nothing removed: --dry-run).", r.Tool, r.Path)
			break
		}
		fmt.Fprintf(&b, "Deleted tool %q: removed %s.", r.Tool, r.Path)
	case "not_found":
		fmt.Fprintf(&b, "Tool %q not found; nothing to delete.", r.Tool)
	default:
		verb := "Registered"
		if r.Action == "updated" {
			verb = "Updated"
		}
		if r.DryRun {
			verb = "Would have " + strings.ToLower(verb)
		}
		from := ""
		if r.Draft != "" {
			from = " from draft recipe"
		}
		fmt.Fprintf(&b, "%s tool %q%s (args: %s).", verb, r.Tool, from, args)
		switch {
		case r.WrappedRecipe == "":
		case r.WrappedFrom == r.WrappedRecipe:
			fmt.Fprintf(&b, "\nWraps recipe %s through imports.", r.WrappedRecipe)
		default:
			fmt.Fprintf(&b, "\nWraps recipe %s (%s) through imports.", r.WrappedFrom, r.WrappedRecipe)
		}
	}
	if r.Note != "" {
		b.WriteString("\n" + r.Note)
	}
	if len(r.Warnings) > 0 {
		b.WriteString("\nWarnings:")
		for _, w := range r.Warnings {
			b.WriteString("\n- " + w)
		}
	}
	return b.String()
}

// Result is the machine answer: {tool, path, args, created|updated|deleted,
// warnings, wrapped_recipe?, draft?, promoted?, note?, dry_run?}.
func (r *Registered) Result() map[string]any {
	out := map[string]any{"tool": r.Tool, "path": r.Path}
	switch r.Action {
	case "deleted":
		out["deleted"] = true
	case "not_found":
		out["deleted"] = false
		out["found"] = false
	default:
		out[r.Action] = true
		args := r.Args
		if args == nil {
			args = []string{}
		}
		warnings := r.Warnings
		if warnings == nil {
			warnings = []string{}
		}
		out["args"], out["warnings"] = args, warnings
	}
	if r.WrappedRecipe != "" {
		out["wrapped_recipe"] = r.WrappedRecipe
		out["wrapped_from"] = r.WrappedFrom
	}
	if r.Draft != "" {
		out["draft"], out["promoted"] = r.Draft, !r.DryRun
	}
	if r.Note != "" {
		out["note"] = r.Note
	}
	if r.DryRun {
		out["dry_run"] = true
		if v, err := decodeOrdered(r.Document); err == nil {
			out["document"] = toPlain(v)
		}
	}
	return out
}

// Register carries out a request that names a tool (or a draft). Errors
// are *RegisterError (or errors from the file system).
func (rg *Registrar) Register(req *Registration) (*Registered, error) {
	requested := req.Name
	if requested == "" && req.Draft != "" {
		requested = IDOf(req.Draft)
	}
	if requested == "" {
		return nil, regErr("name", ErrInvalid, "pass name=<tool name>, or no parameters at all to list the tools", "name is required to register, update or delete a tool")
	}
	name, err := ToolName(requested)
	if err != nil {
		return nil, err
	}
	deleting := req.HasTemplate && isDeletion(req.Template) && req.Draft == ""
	if name, err = rg.spelling(strings.TrimSpace(requested), name, deleting); err != nil {
		return nil, err
	}
	if deleting {
		return rg.remove(name, req.DryRun)
	}
	// A file that changes between validation and the locked write (a
	// usage update racing an update) is read and validated again.
	for attempt := 1; ; attempt++ {
		var out *Registered
		if req.Draft != "" {
			out, err = rg.promote(name, req)
		} else {
			out, err = rg.register(name, req)
		}
		if !errors.Is(err, errChanged) || attempt == 3 {
			return out, err
		}
	}
}

// errChanged marks a file that changed while a request was validated
// (an ErrConflict). A type, not fmt.Errorf: a package-level fmt.Errorf
// costs every CLI start ~25 µs of initialisation.
var errChanged error = changedError{}

type changedError struct{}

func (changedError) Error() string { return ErrConflict.Error() + ": changed concurrently" }
func (changedError) Unwrap() error { return ErrConflict }

func isDeletion(t any) bool {
	s, isString := t.(string)
	return t == nil || isString && s == ""
}

// existing is what the user root holds under a tool's id.
type existing struct {
	jsonPath string
	jsonData []byte // nil when there is no JSON file
	mdPath   string // set when a Markdown recipe has the id
	doc      *jsonObject
}

func (x *existing) found() bool { return x.jsonData != nil || x.mdPath != "" }

func (x *existing) field(key string) (any, bool) {
	if x.doc == nil {
		return nil, false
	}
	return x.doc.get(key)
}

// lookupExisting reads the JSON (or, failing that, Markdown) recipe that
// has the tool's id. An unreadable JSON file still counts as existing; its
// content is not carried over.
func (rg *Registrar) lookupExisting(name string) (*existing, error) {
	x := &existing{jsonPath: filepath.Join(rg.userRoot(), name+".json")}
	data, err := os.ReadFile(x.jsonPath)
	switch {
	case err == nil:
		x.jsonData = data
		if v, err := decodeOrdered(data); err == nil {
			x.doc, _ = v.(*jsonObject)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("read %s: %w", x.jsonPath, err)
	}
	md := filepath.Join(rg.userRoot(), name+".md")
	if _, err := os.Stat(md); err == nil {
		x.mdPath = md
		if x.jsonData == nil {
			if r, err := Load(md); err == nil {
				x.doc = canonicalDoc(r.Raw)
			}
		}
	}
	return x, nil
}

func conflictErr(name string) error {
	return regErr("name", ErrConflict, "pass update=true to replace it, or choose another name", "tool %q already registered; use update=true to overwrite", name)
}

// register creates or updates <user>/<name>.json from a request.
func (rg *Registrar) register(name string, req *Registration) (*Registered, error) {
	prev, err := rg.lookupExisting(name)
	if err != nil {
		return nil, err
	}
	if prev.found() && !req.Update {
		return nil, conflictErr(name)
	}
	if !prev.found() && !req.HasTemplate {
		return nil, regErr("template", ErrInvalid, `pass template="cmd {arg}", template:='<JSON graph>', or the name or path of an existing recipe`, "template is required for new registrations")
	}
	out := &Registered{Tool: name, Path: prev.jsonPath, Action: "created", DryRun: req.DryRun}
	if prev.found() {
		out.Action = "updated"
	}
	doc, wrapped, err := rg.document(name, req, prev)
	if err != nil {
		return nil, err
	}
	if wrapped != nil {
		out.WrappedRecipe, out.WrappedFrom = wrapped.path, wrapped.from
	}
	data, err := marshalOrdered(doc)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", prev.jsonPath, err)
	}
	if err := rg.check(out, data, "template"); err != nil {
		return nil, err
	}
	if prev.mdPath != "" && prev.jsonData == nil {
		out.Warnings = append(out.Warnings, fmt.Sprintf("Markdown recipe %s is now shadowed by JSON recipe %s; delete the Markdown file when the JSON one works", prev.mdPath, prev.jsonPath))
	}
	if err := rg.commit(out, data, prev.jsonData, req.DryRun); err != nil {
		return nil, err
	}
	return out, nil
}

// managedKeys are the fields register_tool writes; other fields of an
// updated file are kept as they are.
var managedKeys = []string{"description", "async", "state_dir", "args", "defaults", "values", "imports", "template"}

// document builds the file a request stands for, in the persisted key
// order: description, async?, state_dir?, args?, defaults?, values?, the
// existing file's other fields, imports?, template.
func (rg *Registrar) document(name string, req *Registration, prev *existing) (*jsonObject, *wrapTarget, error) {
	tmpl, imports, wrapped, err := rg.templateFields(name, req, prev)
	if err != nil {
		return nil, nil, err
	}
	description, err := descriptionOf(req, prev, wrapped)
	if err != nil {
		return nil, nil, err
	}
	var used map[string]bool // nil: the template stays, so do they all
	if req.HasTemplate {
		used = placeholderNames(tmpl)
	}
	args, defaults, values, err := argFields(req, prev, used)
	if err != nil {
		return nil, nil, err
	}
	async, _ := mustGet(orEmpty(prev.doc), "async").(bool)
	switch {
	case req.Async != nil:
		async = *req.Async
	case wrapped != nil:
		async = wrapped.recipe.Async
	}
	stateDir, _ := mustGet(orEmpty(prev.doc), "state_dir").(string)
	if req.StateDir != nil {
		stateDir = *req.StateDir
	}

	doc := newJSONObject()
	doc.set("description", description)
	if async {
		doc.set("async", true)
	}
	if stateDir != "" {
		doc.set("state_dir", stateDir)
	}
	if len(args) > 0 {
		decl := make([]any, len(args))
		for i, a := range args {
			decl[i] = a.Canonical()
		}
		doc.set("args", decl)
	}
	if len(defaults.keys) > 0 {
		doc.set("defaults", defaults)
	}
	if values != nil {
		doc.set("values", values)
	}
	if prev.doc != nil {
		for _, k := range prev.doc.keys {
			if !contains(managedKeys, k) {
				doc.set(k, prev.doc.vals[k])
			}
		}
	}
	if imports != nil {
		doc.set("imports", imports)
	}
	doc.set("template", tmpl)
	return doc, wrapped, nil
}

// templateFields returns the template and imports to write: an
// import-wrapper for a template naming a recipe, the given template
// (keeping the old imports only if it uses import nodes), or — for an
// update without template — the existing ones.
func (rg *Registrar) templateFields(name string, req *Registration, prev *existing) (tmpl, imports any, wrapped *wrapTarget, err error) {
	if !req.HasTemplate {
		tmpl, _ = prev.field("template")
		imports, _ = prev.field("imports")
		if tmpl == nil {
			return nil, nil, nil, regErr("template", ErrInvalid, `pass template="…" to replace it`, "the existing tool %s has no readable template to keep", prev.jsonPath)
		}
		return tmpl, imports, nil, nil
	}
	if err := checkTemplateValue(req.Template); err != nil {
		return nil, nil, nil, err
	}
	w, err := rg.wrapTarget(name, req.Template)
	if err != nil {
		return nil, nil, nil, err
	}
	if w != nil {
		node, imp := newJSONObject(), newJSONObject()
		node.set("name", w.alias)
		imp.set(w.alias, w.from)
		return node, imp, w, nil
	}
	if old, ok := prev.field("imports"); ok && hasImportNode(req.Template) {
		imports = old
	}
	return toOrdered(req.Template), imports, nil, nil
}

// descriptionOf picks the description: the given one, else the existing
// tool's, else the wrapped recipe's. It is required.
func descriptionOf(req *Registration, prev *existing, wrapped *wrapTarget) (string, error) {
	description := ""
	if req.Description != nil {
		description = *req.Description
	}
	if description == "" {
		description, _ = mustGet(orEmpty(prev.doc), "description").(string)
	}
	if description == "" && wrapped != nil {
		description = wrapped.recipe.Description
	}
	if strings.TrimSpace(description) == "" {
		return "", regErr("description", ErrInvalid, `pass description="what the tool does and when to use it"`, "description is required unless deleting")
	}
	return description, nil
}

// argFields returns the args, defaults (args' name=default shorthand, then
// the defaults parameter over it) and values to write. An update keeps the
// existing ones it does not give — with a new template, those of the
// names it still uses (used; nil keeps all): a declaration of a name the
// template no longer has would describe nothing.
func argFields(req *Registration, prev *existing, used map[string]bool) (args []template.Arg, defaults *jsonObject, values any, err error) {
	keep := !req.HasArgs
	stays := func(name string) bool { return used == nil || used[name] }
	args = req.Args
	if keep {
		if old, ok := prev.field("args"); ok {
			if args, err = template.ParseArgs(toPlain(old)); err != nil {
				return nil, nil, nil, regErr("args", ErrInvalid, `pass args="…" to replace them`, "args of the existing tool are invalid: %v", err)
			}
			args = slices.DeleteFunc(args, func(a template.Arg) bool { return !stays(a.Name) })
		}
	}
	defaults = newJSONObject()
	for _, a := range args {
		if a.HasDefault {
			defaults.set(a.Name, a.Default)
		}
	}
	switch {
	case req.Defaults != nil:
		for _, k := range sortedObjectKeys(req.Defaults) {
			defaults.set(k, toOrdered(req.Defaults[k]))
		}
	case keep:
		if old, ok := mustGet(orEmpty(prev.doc), "defaults").(*jsonObject); ok {
			for _, k := range old.keys {
				if stays(k) {
					defaults.set(k, old.vals[k])
				}
			}
		}
	}
	if err := checkDefaults(args, defaults); err != nil {
		return nil, nil, nil, err
	}
	switch {
	case len(req.Values) > 0:
		values = toOrdered(req.Values)
	case req.Values == nil:
		values, _ = prev.field("values")
		if old, ok := values.(*jsonObject); ok && used != nil {
			kept := newJSONObject()
			for _, k := range old.keys {
				if stays(k) {
					kept.set(k, old.vals[k])
				}
			}
			values = kept
			if len(kept.keys) == 0 {
				values = nil
			}
		}
	}
	return args, defaults, values, nil
}

// Generous name finding for placeholderNames: every {…} group of a
// string, and every identifier in it ({start+count}, {items[idx]},
// {_(n+1)}, { flag?a:b} name them all).
var (
	braceGroupRe = lazyre.New(`\{[^{}]*\}`)
	identRe      = lazyre.New(`[A-Za-z_][A-Za-z0-9_-]*`)
)

// placeholderNames are the names a template (as written to the file, an
// import-wrapper's node included) refers to — generously: a name that
// only looks used is kept. Besides the identifiers inside every {…},
// when and output name values bare ("when": "verbose", "output": "ogg").
func placeholderNames(tmpl any) map[string]bool {
	used := map[string]bool{}
	addAll := func(s string) {
		for _, id := range identRe.FindAllString(s, -1) {
			used[id] = true
		}
	}
	var walk func(v any, key string)
	walk = func(v any, key string) {
		switch x := v.(type) {
		case string:
			for _, g := range braceGroupRe.FindAllString(x, -1) {
				addAll(g)
			}
			if key == "when" || key == "output" {
				addAll(x)
			}
		case []any:
			for _, e := range x {
				walk(e, "")
			}
		case map[string]any:
			for k, e := range x {
				walk(e, k)
			}
		}
	}
	walk(toPlain(tmpl), "")
	return used
}

func orEmpty(o *jsonObject) *jsonObject {
	if o == nil {
		return newJSONObject()
	}
	return o
}

// checkTemplateValue rejects template values that can never be a tool.
func checkTemplateValue(t any) error {
	hint := `pass template="cmd {arg}", or template:='["step one", "step two"]' / template:='{"template": …}' for a graph`
	switch x := t.(type) {
	case string:
		if strings.TrimSpace(x) == "" {
			return regErr("template", ErrInvalid, hint+`; template="" deletes the tool`, "template is blank")
		}
	case []any:
		if len(x) == 0 {
			return regErr("template", ErrInvalid, hint, "template sequence is empty: give at least one step")
		}
	case map[string]any:
	default:
		return regErr("template", ErrInvalid, hint, "template must be a string, object, or sequence (got %s)", template.CompactJSON(t))
	}
	return nil
}

// hasImportNode reports whether a template holds a {name: alias} node
// without template — a reference to the recipe's imports.
func hasImportNode(v any) bool {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			if hasImportNode(e) {
				return true
			}
		}
	case map[string]any:
		if _, ok := x["name"].(string); ok {
			if _, has := x["template"]; !has {
				return true
			}
		}
		return hasImportNode(x["template"]) || hasImportNode(x["recover"])
	}
	return false
}

// checkDefaults checks each declared type against its default with the
// template's own rule (template.Arg.CheckDefaultValue, which every template
// parse applies too), so the error names the parameter and the fix.
func checkDefaults(args []template.Arg, defaults *jsonObject) error {
	for _, a := range args {
		v, ok := defaults.get(a.Name)
		if !ok {
			continue
		}
		if err := a.CheckDefaultValue(toPlain(v)); err != nil {
			return regErr("defaults", ErrInvalid, fmt.Sprintf("give %s a default that fits %s, or drop it", a.Name, a.Canonical()), "defaults.%s: %v", a.Name, err)
		}
	}
	return nil
}

// check validates the file a request would write exactly as discovery
// would load it from its final path: the recipe compiles, its imports
// resolve and its template parses. No values are needed, so placeholders
// stay unresolved. It fills in the argument names and warnings.
func (rg *Registrar) check(out *Registered, data []byte, field string) error {
	if len(data) > MaxFileBytes {
		return regErr(field, ErrInvalid, "keep recipes small: move data into files the template reads", "recipe would exceed the size limit %d bytes", MaxFileBytes)
	}
	hint := "fix the template; pi-actors exec --dry-run shows how a template resolves"
	if field == "draft" {
		hint = "fix the draft file, or replay it with spawn to see the error"
	}
	what := "template is invalid"
	if field == "draft" {
		what = "draft recipe is invalid"
	}
	r, err := Parse(data, out.Path)
	if err != nil {
		return regErr(field, ErrInvalid, hint, "%s: %s", what, cleanReason(err, out.Path))
	}
	tool, err := rg.resolver().Tool(r)
	if ve := (*ValueError)(nil); errors.As(err, &ve) {
		return regErr("values", ErrInvalid, fmt.Sprintf("give %s a value that fits its type", ve.Key), "values.%s: %v", ve.Key, ve.Err)
	}
	if err != nil {
		return regErr(field, ErrInvalid, hint, "%s: %s", what, cleanReason(err, out.Path))
	}
	types := tool.Types()
	for _, k := range slices.Sorted(maps.Keys(tool.Node.Defaults)) {
		if ty, ok := types[k]; ok {
			if _, err := ty.Normalize(k, tool.Node.Defaults[k]); err != nil {
				return regErr("defaults", ErrInvalid, fmt.Sprintf("give %s a default that fits its type", k), "defaults.%s: %v", k, err)
			}
		}
	}
	out.Args = make([]string, len(tool.Params))
	for i, p := range tool.Params {
		out.Args[i] = p.Name
	}
	for _, w := range r.Warnings {
		out.Warnings = append(out.Warnings, "Recipe "+out.Path+": "+w)
	}
	// Warnings come from each leaf's words as written (Resolver.Risk): a
	// tool has no values yet, and a placeholder counts as a broad path.
	_, warnings, err := rg.resolver().Risk(r)
	if err != nil {
		return regErr(field, ErrInvalid, hint, "%s: %s", what, cleanReason(err, out.Path))
	}
	out.Warnings = append(out.Warnings, warnings...)
	out.Document = data
	return nil
}

// cleanReason strips the path and the "invalid recipe" prefix an error
// from the loader repeats.
func cleanReason(err error, path string) string {
	s := err.Error()
	s = strings.ReplaceAll(s, path+": ", "")
	return strings.ReplaceAll(s, ErrInvalid.Error()+": ", "")
}

// commit writes data to out.Path under the user root's lock, provided the
// file still holds what the request was validated against (before, nil
// for absent).
func (rg *Registrar) commit(out *Registered, data, before []byte, dryRun bool) error {
	if dryRun {
		return nil
	}
	root := rg.userRoot()
	if err := os.MkdirAll(root, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", root, err)
	}
	unlock, err := fsutil.Lock(filepath.Join(root, LockName))
	if err != nil {
		return err
	}
	defer unlock()
	now, err := os.ReadFile(out.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		now = nil
	case err != nil:
		return fmt.Errorf("read %s: %w", out.Path, err)
	}
	if (before == nil) != (now == nil) || !bytes.Equal(before, now) {
		if before == nil {
			return conflictErr(out.Tool)
		}
		return regErr("update", errChanged, "run register_tool again", "tool %q changed while it was being updated", out.Tool)
	}
	// A new recipe is its owner's alone (template defaults may hold a
	// token); an updated one keeps the mode its owner gave it.
	perm := fs.FileMode(0o600)
	if fi, err := os.Stat(out.Path); err == nil {
		perm = fi.Mode().Perm()
	}
	// A recipe that is a symlink (into a dotfiles repository, say) is
	// updated where it points: the link stays a link.
	path := out.Path
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if path, err = filepath.EvalSymlinks(path); err != nil {
			return fmt.Errorf("update %s: its link: %w", out.Path, err)
		}
	}
	return fsutil.WriteFile(path, data, perm)
}

// remove deletes <user>/<name>.json (with dryRun, it only says whether
// it would). A missing file is a note, not an error.
func (rg *Registrar) remove(name string, dryRun bool) (*Registered, error) {
	root := rg.userRoot()
	path := filepath.Join(root, name+".json")
	out := &Registered{Tool: name, Path: path, Action: "deleted", DryRun: dryRun}
	md := filepath.Join(root, name+".md")
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		out.Action = "not_found"
		if _, err := os.Stat(md); err == nil {
			out.Note = fmt.Sprintf("Markdown recipe %s has this id; register_tool only deletes the JSON recipes it writes, so remove that file by hand.", md)
		}
		return out, nil
	}
	if dryRun {
		return out, nil
	}
	unlock, err := fsutil.Lock(filepath.Join(root, LockName))
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := os.Remove(path); errors.Is(err, fs.ErrNotExist) {
		out.Action = "not_found"
		return out, nil
	} else if err != nil {
		return nil, fmt.Errorf("delete %s: %w", path, err)
	}
	if err := fsutil.SyncDir(root); err != nil {
		return nil, err
	}
	if _, err := os.Stat(md); err == nil {
		out.Note = fmt.Sprintf("Markdown recipe %s has the same id and is now the active tool.", md)
	}
	return out, nil
}

// wrapTarget is the recipe an import-wrapper registration wraps.
type wrapTarget struct {
	alias  string  // the import alias (the recipe id, sanitised)
	from   string  // the import value written: a bare name or a path
	path   string  // where it resolves now (an OS path or pkg:…)
	recipe *Recipe // the wrapped recipe
}

var nonAliasRe = lazyre.New(`[^A-Za-z0-9_.-]+`)

// canonicalDoc orders a recipe's fields the way register_tool writes them:
// description, disabled, async, state_dir, args, defaults, values, the
// other fields sorted, imports, template.
func canonicalDoc(raw map[string]any) *jsonObject {
	first := []string{"description", "disabled", "async", "state_dir", "args", "defaults", "values"}
	last := []string{"imports", "template"}
	o := newJSONObject()
	for _, k := range first {
		if v, ok := raw[k]; ok {
			o.set(k, toOrdered(v))
		}
	}
	for _, k := range sortedObjectKeys(raw) {
		if !contains(first, k) && !contains(last, k) {
			o.set(k, toOrdered(raw[k]))
		}
	}
	for _, k := range last {
		if v, ok := raw[k]; ok {
			o.set(k, toOrdered(v))
		}
	}
	return o
}
