package recipes

import (
	"os"
	"path/filepath"
	"strings"
)

// wrapTarget decides whether a template names an existing recipe rather
// than a command (decision C5): a single word that is a path ending in
// .json or .md (relative to the working directory; ~, {agent} and {repo}
// expanded), or a bare name that is the id of a recipe in the user root or
// the packaged library. Such a registration persists an import-wrapper,
// {imports: {alias: from}, template: {name: alias}}, instead of a command
// that would run the file name. A single word ending in .json/.md that
// names no existing recipe is an error rather than a broken command.
func (rg *Registrar) wrapTarget(name string, t any) (*wrapTarget, error) {
	s, ok := t.(string)
	if !ok {
		return nil, nil
	}
	word := strings.TrimSpace(s)
	if word == "" || strings.ContainsAny(word, " \t\r\n\"'\\") {
		return nil, nil
	}
	hasExt := strings.HasSuffix(word, ".json") || strings.HasSuffix(word, ".md")
	isPath := strings.Contains(word, "/") || strings.HasPrefix(word, "~")
	templated := strings.Contains(word, "{")
	w := &wrapTarget{}
	switch {
	case isPath && !hasExt:
		return nil, nil // a command path such as ./build.sh
	case hasExt:
		p := rg.expandTemplatePath(word)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			w.path, w.from = p, p
			if strings.HasPrefix(word, "~") || templated {
				w.from = word // keep it portable, as written
			}
		} else if !isPath && !templated {
			w.path, w.from = rg.findBare(word), word
		}
		if w.path == "" {
			return nil, regErr("template", ErrNotFound,
				"give the path of an existing recipe file (relative to the working directory), a recipe name (inspect target=recipes view=summary lists them), or a command",
				"template names recipe file %s, which does not exist", p)
		}
	default:
		if templated {
			return nil, nil
		}
		if w.path = rg.findBare(word); w.path == "" {
			return nil, nil // a plain command such as `date`
		}
		w.from = word
	}
	dest := filepath.Join(rg.userRoot(), name+".json")
	self := w.path == dest
	if !isPath && withExtensions(w.from)[0] == name+".json" {
		self = true // after the write, the bare name would resolve to the wrapper itself
	}
	if real, err := filepath.EvalSymlinks(w.path); err == nil && !IsPackaged(w.path) {
		if realDest, err := filepath.EvalSymlinks(dest); err == nil && real == realDest {
			self = true
		}
	}
	if self {
		return nil, regErr("template", ErrInvalid, "choose another tool name, or give the path of the recipe to wrap",
			"template %q names the tool %q itself; a tool cannot wrap itself", word, name)
	}
	r, err := Load(w.path)
	if err != nil {
		return nil, regErr("template", ErrInvalid, "fix that recipe first (inspect target=recipes view=doctor), or wrap another one",
			"template names recipe %s, which cannot be used: %s", w.path, cleanReason(err, w.path))
	}
	if r.Disabled {
		return nil, regErr("template", ErrInvalid, "enable that recipe first, or wrap another one", "template names recipe %s, which is disabled", w.path)
	}
	w.recipe = r
	w.alias = strings.Trim(nonAliasRe.ReplaceAllString(r.ID, "_"), "_")
	if w.alias == "" {
		w.alias = "recipe"
	}
	return w, nil
}

// expandTemplatePath resolves a recipe path given as a template: {agent}
// and {repo} (the agent root, as a user recipe sees them), ~, then the
// working directory.
func (rg *Registrar) expandTemplatePath(p string) string {
	p = strings.ReplaceAll(p, "{agent}", rg.AgentDir)
	p = strings.ReplaceAll(p, "{repo}", rg.AgentDir)
	switch {
	case p == "~":
		p = rg.Home
	case strings.HasPrefix(p, "~/"):
		p = filepath.Join(rg.Home, p[2:])
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(rg.Cwd, p)
	}
	return filepath.Clean(p)
}

// findBare looks a bare recipe name up the way an import of it resolves
// from the user root: the user root, then the packaged library, each as
// name.json then name.md (or the exact name when it has an extension). It
// returns "" when no such recipe exists.
func (rg *Registrar) findBare(name string) string {
	for _, n := range withExtensions(name) {
		if p := filepath.Join(rg.userRoot(), n); exists(p) {
			return p
		}
	}
	for _, n := range withExtensions(name) {
		if p := pkgPrefix + n; exists(p) {
			return p
		}
	}
	return ""
}
