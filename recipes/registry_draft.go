package recipes

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// promote copies a draft from <user>/drafts to <user>/<name>.json: the raw
// JSON as it is (a Markdown draft as its compiled JSON). The draft stays.
func (rg *Registrar) promote(name string, req *Registration) (*Registered, error) {
	for _, f := range []struct {
		key   string
		given bool
	}{{"template", req.HasTemplate}, {"description", req.Description != nil}, {"args", req.HasArgs},
		{"defaults", req.Defaults != nil}, {"values", req.Values != nil}, {"async", req.Async != nil}, {"state_dir", req.StateDir != nil}} {
		if f.given {
			return nil, regErr(f.key, ErrInvalid, fmt.Sprintf("promote the draft as it is, then change it with register_tool name=%s update=true %s=…", name, f.key),
				"%s cannot be combined with draft: a draft is promoted as it is", f.key)
		}
	}
	path, err := rg.draftPath(req.Draft)
	if err != nil {
		return nil, err
	}
	data, err := readFile(path)
	if errors.Is(err, ErrNotFound) {
		return nil, regErr("draft", ErrNotFound, "inspect target=recipes view=summary lists the drafts", "draft not found: %s", path)
	}
	if err != nil {
		return nil, regErr("draft", ErrInvalid, "fix the draft file", "draft recipe is invalid: %s", cleanReason(err, path))
	}
	prev, err := rg.lookupExisting(name)
	if err != nil {
		return nil, err
	}
	if prev.found() && !req.Update {
		return nil, conflictErr(name)
	}
	out := &Registered{Tool: name, Path: prev.jsonPath, Action: "created", Draft: path, DryRun: req.DryRun}
	if prev.found() {
		out.Action = "updated"
	}
	content := data
	if strings.HasSuffix(path, ".md") {
		r, err := Parse(data, path)
		if err != nil {
			return nil, regErr("draft", ErrInvalid, "fix the draft file", "draft recipe is invalid: %s", cleanReason(err, path))
		}
		if content, err = marshalOrdered(canonicalDoc(r.Raw)); err != nil {
			return nil, fmt.Errorf("encode %s: %w", prev.jsonPath, err)
		}
	}
	if err := rg.check(out, content, "draft"); err != nil {
		return nil, err
	}
	if r, err := Parse(content, out.Path); err == nil && strings.TrimSpace(r.Description) == "" && !prev.found() {
		// A new tool needs one, as any registration does: agents pick
		// tools by it.
		return nil, regErr("description", ErrInvalid, "add a \"description\" (what the tool does and when to use it) to "+path+", then promote it",
			"the draft has no description; a new tool needs one")
	}
	if err := rg.commit(out, content, prev.jsonData, req.DryRun); err != nil {
		return nil, err
	}
	return out, nil
}

// draftPath resolves a draft reference strictly inside <user>/drafts: a
// bare file name (with or without .json/.md) is taken from the drafts
// directory; other relative paths from the working directory, else from
// the recipes root (drafts/x.json). ../ escapes
// and symbolic links that lead out of the drafts directory are refused,
// comparing the real (symlink-evaluated) paths.
func (rg *Registrar) draftPath(ref string) (string, error) {
	root := filepath.Join(rg.userRoot(), "drafts")
	escape := func() error {
		return regErr("draft", ErrInvalid, "use inspect target=recipes view=summary to list drafts",
			"draft must be under %s (got %s: give a draft's file name, drafts/<file>, or its absolute path); use inspect target=recipes view=summary to list drafts", root, ref)
	}
	var p string
	switch {
	case ref == "~" || strings.HasPrefix(ref, "~/"):
		p = filepath.Join(rg.Home, strings.TrimPrefix(ref, "~"))
	case filepath.IsAbs(ref):
		p = ref
	case !strings.Contains(ref, "/"):
		p = filepath.Join(root, ref)
		if !strings.HasSuffix(ref, ".json") && !strings.HasSuffix(ref, ".md") && ref != "." && ref != ".." {
			p += ".json"
			if _, err := os.Lstat(p); err != nil {
				if _, err := os.Lstat(strings.TrimSuffix(p, ".json") + ".md"); err == nil {
					p = strings.TrimSuffix(p, ".json") + ".md"
				}
			}
		}
	default:
		p = filepath.Join(rg.Cwd, ref)
		if alt := filepath.Join(rg.userRoot(), ref); !strictlyInside(root, filepath.Clean(p)) && strictlyInside(root, filepath.Clean(alt)) {
			p = alt // drafts/x.json: relative to the recipes root, as inspect lists it
		}
	}
	p = filepath.Clean(p)
	if !strictlyInside(root, p) {
		return "", escape()
	}
	if !strings.HasSuffix(p, ".json") && !strings.HasSuffix(p, ".md") {
		return "", regErr("draft", ErrInvalid, "drafts are .json or .md recipe files; inspect target=recipes view=summary lists them", "draft %s is not a .json or .md recipe file", p)
	}
	if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
		return "", regErr("draft", ErrNotFound, "inspect target=recipes view=summary lists the drafts", "draft not found: %s", p)
	} else if err != nil {
		return "", fmt.Errorf("draft %s: %w", p, err)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", escape()
	}
	realP, err := filepath.EvalSymlinks(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", regErr("draft", ErrNotFound, "inspect target=recipes view=summary lists the drafts", "draft not found: %s (a dangling link)", p)
	}
	if err != nil || !strictlyInside(realRoot, realP) {
		return "", escape()
	}
	return p, nil
}

// strictlyInside reports whether p lies below dir (not dir itself).
func strictlyInside(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return false
	}
	return true
}
