package recipes

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/pi-actors/pi-actors/internal/lazyre"

	"github.com/pi-actors/pi-actors/recipes/template"
)

// Resolver turns recipes into plain template graphs: import references
// substituted, import nodes expanded, the top-level envelope merged into
// the template node, context markers attached.
type Resolver struct {
	AgentDir string
	Home     string
	// loaded, when set, shares parsed recipes between resolutions (path →
	// *Recipe); discovery fills it so imports are not parsed again.
	loaded *sync.Map
}

// ContextRecord is one line of the actor_context bundle: a recipe the run
// is composed of.
type ContextRecord = template.ContextRecord

// Resolved is a recipe ready to plan.
type Resolved struct {
	Recipe  *Recipe
	Graph   any // the template graph, imports expanded
	Records []ContextRecord
	loaded  map[string]*Recipe
}

// Resolve expands r into a plain template graph.
func (rv *Resolver) Resolve(r *Recipe) (*Resolved, error) {
	res := &Resolved{Recipe: r, loaded: map[string]*Recipe{}}
	if err := rv.records(r, []string{r.Path}, nil, "", res); err != nil {
		return nil, err
	}
	graph, err := rv.expand(r, []string{r.Path}, nil, "", res)
	if err != nil {
		return nil, err
	}
	res.Graph = graph
	return res, nil
}

// expand returns r's template graph with its imports expanded. stack is
// the chain of files being expanded (for cycles and depth).
func (rv *Resolver) expand(r *Recipe, stack []string, importPath []string, alias string, res *Resolved) (any, error) {
	role := "entry"
	if len(importPath) > 0 {
		role = "import"
	}
	imported := map[string]*Recipe{}
	for _, a := range r.aliases() {
		imp := r.Imports[a]
		target, err := rv.importTarget(r, imp, res)
		if err != nil {
			return nil, err
		}
		imported[a] = target
	}
	raw, err := substituteRefs(r.Raw, r, imported)
	if err != nil {
		return nil, err
	}
	graph := envelope(raw)
	marker := map[string]any{"file": r.Path, "name": r.ID, "role": role}
	if role == "entry" {
		marker["path"] = r.ID
	} else {
		marker["path"] = strings.Join(importPath, ".")
		marker["alias"] = alias
	}
	if obj, ok := graph.(map[string]any); ok {
		obj["actorRecipeContext"] = marker
	}
	return rv.expandNodes(graph, r, imported, stack, importPath, res, "template")
}

// Check resolves r and parses its graph: the validity discovery needs,
// without the argument schema.
func (rv *Resolver) Check(r *Recipe) error {
	res := &Resolved{Recipe: r, loaded: map[string]*Recipe{}}
	graph, err := rv.expand(r, []string{r.Path}, nil, "", res)
	if err != nil {
		return err
	}
	node, err := template.Parse(graph)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrInvalid, r.Path, err)
	}
	return checkValues(r, params(node, r, false))
}

// envelope merges the top-level template controls into the template node.
func envelope(raw map[string]any) any {
	env := map[string]any{}
	for _, k := range envelopeKeys {
		if v, ok := raw[k]; ok {
			env[k] = v
		}
	}
	t := raw["template"]
	if obj, ok := t.(map[string]any); ok {
		out := make(map[string]any, len(env)+len(obj))
		for k, v := range env {
			out[k] = v
		}
		for k, v := range obj {
			out[k] = v
		}
		return out
	}
	env["template"] = t
	return env
}

// expandNodes walks a graph and replaces every import node {name: alias}
// (an object without template) with the imported recipe's graph.
func (rv *Resolver) expandNodes(v any, r *Recipe, imported map[string]*Recipe, stack, importPath []string, res *Resolved, path string) (any, error) {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			n, err := rv.expandNodes(e, r, imported, stack, importPath, res, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	case map[string]any:
		if name, ok := x["name"].(string); ok {
			if _, hasTemplate := x["template"]; !hasTemplate {
				return rv.importNode(x, name, r, imported, stack, importPath, res, path)
			}
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = e
		}
		for _, k := range []string{"template", "recover"} {
			if e, ok := x[k]; ok {
				n, err := rv.expandNodes(e, r, imported, stack, importPath, res, path+"."+k)
				if err != nil {
					return nil, err
				}
				out[k] = n
			}
		}
		return out, nil
	}
	return v, nil
}

// importNode expands one {name: alias, …} node. Defaults merge, later
// wins: the imported recipe's, the binding's defaults, the binding's
// values, the node's defaults, the node's values. Every other node key
// overrides the imported node's.
func (rv *Resolver) importNode(node map[string]any, alias string, r *Recipe, imported map[string]*Recipe, stack, importPath []string, res *Resolved, path string) (any, error) {
	target, ok := imported[alias]
	if !ok {
		return nil, fmt.Errorf("%w: %s: %s: unknown recipe import %q (declare it in imports)", ErrInvalid, r.Path, path, alias)
	}
	for i, p := range stack {
		if p == target.Path {
			chain := append(append([]string{}, stack[i:]...), target.Path)
			return nil, fmt.Errorf("%w: cyclic recipe import: %s", ErrInvalid, strings.Join(idsOf(chain), " -> "))
		}
	}
	if len(stack) >= MaxImportDepth {
		return nil, fmt.Errorf("%w: recipe import depth exceeds limit %d: %s", ErrInvalid, MaxImportDepth, strings.Join(idsOf(append(stack, target.Path)), " -> "))
	}
	sub, err := rv.expand(target, append(append([]string{}, stack...), target.Path), append(append([]string{}, importPath...), alias), alias, res)
	if err != nil {
		return nil, err
	}
	obj, ok := sub.(map[string]any)
	if !ok {
		obj = map[string]any{"template": sub}
	}
	bind := r.Imports[alias]
	defaults := map[string]any{}
	for _, layer := range []map[string]any{asObject(obj["defaults"]), bind.Defaults, bind.Values, asObject(node["defaults"]), asObject(node["values"])} {
		for k, v := range layer {
			defaults[k] = v
		}
	}
	for k, v := range node {
		switch k {
		case "name", "values", "defaults":
		default:
			obj[k] = v
		}
	}
	if len(defaults) > 0 {
		obj["defaults"] = defaults
	}
	return obj, nil
}

func asObject(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func idsOf(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = IDOf(p)
	}
	return out
}

// aliases lists the imports in declaration order (any the order missed,
// sorted, after).
func (r *Recipe) aliases() []string {
	out := make([]string, 0, len(r.Imports))
	seen := map[string]bool{}
	for _, a := range r.ImportOrder {
		if _, ok := r.Imports[a]; ok && !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	var rest []string
	for a := range r.Imports {
		if !seen[a] {
			rest = append(rest, a)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// records walks the declared imports depth first, in declaration order,
// and lists one context record per recipe reached (the actor_context
// bundle). A cyclic import is left out here; expansion reports it.
func (rv *Resolver) records(r *Recipe, stack, importPath []string, alias string, res *Resolved) error {
	role := "entry"
	if len(importPath) > 0 {
		role = "import"
	}
	res.Records = append(res.Records, ContextRecord{Alias: alias, Depth: len(importPath), File: r.Path,
		ImportPath: append([]string{}, importPath...), Name: r.ID, Recipe: r.Raw, Role: role})
	if len(stack) >= MaxImportDepth {
		return nil
	}
	for _, a := range r.aliases() {
		target, err := rv.importTarget(r, r.Imports[a], res)
		if err != nil {
			return err
		}
		if slices.Contains(stack, target.Path) {
			continue
		}
		if err := rv.records(target, append(append([]string{}, stack...), target.Path), append(append([]string{}, importPath...), a), a, res); err != nil {
			return err
		}
	}
	return nil
}

// importTarget loads the recipe an import binding names (once per
// resolution).
func (rv *Resolver) importTarget(r *Recipe, imp Import, res *Resolved) (*Recipe, error) {
	path := rv.importPath(r, imp.From)
	if t, ok := res.loaded[path]; ok {
		return t, nil
	}
	if rv.loaded != nil {
		if t, ok := rv.loaded.Load(path); ok {
			res.loaded[path] = t.(*Recipe)
			return t.(*Recipe), nil
		}
	}
	t, err := Load(path)
	if errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("%w: %s: recipe import not found: %s (%s)", ErrInvalid, r.Path, imp.Alias, imp.From)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: import %s: %w", r.Path, imp.Alias, err)
	}
	res.loaded[path] = t
	return t, nil
}

// importPath resolves an import's from: a path (contains /, starts with ~
// or holds {repo}/{agent}) against the importing recipe's directory; a bare
// name through the user root, the importing directory, then the packaged
// library, each as name.json then name.md.
func (rv *Resolver) importPath(r *Recipe, from string) string {
	from = strings.TrimSpace(from)
	dir := filepath.Dir(r.Path)
	if IsPackaged(r.Path) {
		dir = pkgPrefix
	}
	if strings.Contains(from, "/") || strings.HasPrefix(from, "~") || strings.Contains(from, "{") {
		return rv.expandPath(from, dir)
	}
	var candidates []string
	for _, root := range []string{UserRoot(rv.AgentDir), dir, pkgPrefix} {
		for _, name := range withExtensions(from) {
			if root == pkgPrefix {
				candidates = append(candidates, pkgPrefix+name)
			} else {
				candidates = append(candidates, filepath.Join(root, name))
			}
		}
	}
	for _, c := range candidates {
		if rv.loaded != nil {
			if _, ok := rv.loaded.Load(c); ok {
				return c
			}
		}
		if exists(c) {
			return c
		}
	}
	return candidates[0]
}

func withExtensions(name string) []string {
	if strings.HasSuffix(name, ".json") || strings.HasSuffix(name, ".md") {
		return []string{name}
	}
	return []string{name + ".json", name + ".md"}
}

// expandPath resolves {repo} (the parent of dir), {agent}, ~ and relative
// paths against dir.
func (rv *Resolver) expandPath(p, dir string) string {
	if dir == pkgPrefix {
		p = strings.ReplaceAll(p, "{repo}/recipes/", pkgPrefix)
		if strings.HasPrefix(p, "./") {
			return pkgPrefix + strings.TrimPrefix(p, "./")
		}
		if IsPackaged(p) {
			return p
		}
	}
	p = strings.ReplaceAll(p, "{agent}", rv.AgentDir)
	p = strings.ReplaceAll(p, "{repo}", filepath.Dir(dir))
	switch {
	case p == "~":
		return rv.Home
	case strings.HasPrefix(p, "~/"):
		return filepath.Join(rv.Home, p[2:])
	case filepath.IsAbs(p):
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}

func exists(path string) bool {
	if IsPackaged(path) {
		_, err := fs.Stat(library, "library/"+strings.TrimPrefix(path, pkgPrefix))
		return err == nil
	}
	_, err := os.Stat(path)
	return err == nil
}

var refRe = lazyre.New(`\{([^{}]+)\}`)

// substituteRefs replaces import references ({alias.name}, {alias.file},
// {alias.defaults.k.sub}, {alias.values.k}, with =fallback or ?yes:no)
// everywhere in the raw recipe. A string that is exactly one reference
// keeps the referenced value's JSON type. Other placeholders stay.
func substituteRefs(raw map[string]any, r *Recipe, imported map[string]*Recipe) (map[string]any, error) {
	if len(imported) == 0 {
		return raw, nil
	}
	v, err := substituteValue(raw, r, imported)
	if err != nil {
		return nil, err
	}
	return v.(map[string]any), nil
}

func substituteValue(v any, r *Recipe, imported map[string]*Recipe) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if k == "imports" || k == "usage" {
				out[k] = e
				continue
			}
			n, err := substituteValue(e, r, imported)
			if err != nil {
				return nil, err
			}
			out[k] = n
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			n, err := substituteValue(e, r, imported)
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	case string:
		return substituteString(x, r, imported)
	}
	return v, nil
}

func substituteString(s string, r *Recipe, imported map[string]*Recipe) (any, error) {
	if !strings.Contains(s, "{") {
		return s, nil
	}
	if m := refRe.FindStringSubmatchIndex(s); m != nil && m[0] == 0 && m[1] == len(s) {
		v, ok, err := evalRef(s[1:len(s)-1], r, imported)
		if err != nil || ok {
			return v, err
		}
		return s, nil
	}
	var firstErr error
	out := refRe.ReplaceAllStringFunc(s, func(m string) string {
		v, ok, err := evalRef(m[1:len(m)-1], r, imported)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		if !ok {
			return m
		}
		return template.Stringify(v)
	})
	return out, firstErr
}

// evalRef evaluates one reference; ok is false when the text is not an
// import reference (it stays a template placeholder).
func evalRef(content string, r *Recipe, imported map[string]*Recipe) (any, bool, error) {
	alias, rest, found := strings.Cut(content, ".")
	target, isAlias := imported[alias]
	if !found || !isAlias {
		return nil, false, nil
	}
	section, _, _ := strings.Cut(rest, ".")
	if i := strings.IndexAny(section, "=?"); i >= 0 {
		section = section[:i]
	}
	switch section {
	case "name", "file", "defaults", "values":
	default:
		return nil, false, nil
	}
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		if yes, no, ok := strings.Cut(rest[i+1:], ":"); ok {
			v, found := lookupRef(rest[:i], target, r.Imports[alias])
			if refTruthy(v, found) {
				return refOperand(yes, r, imported)
			}
			return refOperand(no, r, imported)
		}
	}
	ref, fallback, hasFallback := strings.Cut(rest, "=")
	v, ok := lookupRef(ref, target, r.Imports[alias])
	if ok && v != nil {
		return v, true, nil
	}
	if hasFallback {
		return fallback, true, nil
	}
	return nil, false, fmt.Errorf("%w: %s: unknown recipe import reference {%s}", ErrInvalid, r.Path, content)
}

func refOperand(s string, r *Recipe, imported map[string]*Recipe) (any, bool, error) {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		return s[1 : len(s)-1], true, nil
	}
	if v, ok, err := evalRef(s, r, imported); ok || err != nil {
		return v, ok, err
	}
	return s, true, nil
}

func refTruthy(v any, found bool) bool {
	if !found || v == nil {
		return false
	}
	switch x := v.(type) {
	case bool:
		return x
	case string:
		return x != ""
	}
	return template.Stringify(v) != "0"
}

// lookupRef reads name, file, or a dot path under defaults/values of the
// imported recipe (merged with the binding's defaults/values).
func lookupRef(ref string, target *Recipe, bind Import) (any, bool) {
	parts := strings.Split(ref, ".")
	switch parts[0] {
	case "name":
		return target.ID, len(parts) == 1
	case "file":
		return target.Path, len(parts) == 1
	}
	var cur any
	switch parts[0] {
	case "defaults":
		cur = mergeObjects(asObject(target.Raw["defaults"]), bind.Defaults)
	case "values":
		cur = mergeObjects(target.Values, bind.Values)
	}
	for _, p := range parts[1:] {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func mergeObjects(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}
