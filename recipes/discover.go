package recipes

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"
)

// Layer is a discovery source; a higher layer wins its id.
type Layer int

// Layers, low → high priority.
const (
	LayerPackaged Layer = iota + 1
	LayerAdHoc
	LayerUser
)

func (l Layer) String() string {
	switch l {
	case LayerPackaged:
		return "packaged"
	case LayerAdHoc:
		return "adhoc"
	case LayerUser:
		return "user"
	}
	return "unknown"
}

// Entry is one discovered recipe file.
type Entry struct {
	ID         string
	Path       string
	Layer      Layer
	Recipe     *Recipe // nil when the file is invalid
	Err        error   // why it is invalid
	Active     bool    // wins its id
	ShadowedBy string  // the winner's path, when shadowed
	Shadows    []string
	Size       int64
	data       []byte
	rv         *Resolver // validates on first Invalid()
	once       sync.Once
}

// Invalid reports whether the file could not be loaded.
// A recipe that cannot resolve (bad template, missing or cyclic import)
// counts as invalid too — checked on first asking, so discovering a
// thousand recipes does not resolve them all.
func (e *Entry) Invalid() bool {
	e.once.Do(func() {
		if e.Recipe != nil && e.rv != nil && e.Layer != LayerPackaged {
			if err := e.rv.Check(e.Recipe); err != nil {
				e.Recipe, e.Err = nil, err
			}
		}
	})
	return e.Recipe == nil
}

// Disabled reports whether the recipe is disabled.
func (e *Entry) Disabled() bool { return e.Recipe != nil && e.Recipe.Disabled }

// Tool reports whether the entry is an agent tool: an active, valid,
// enabled recipe in the user root.
func (e *Entry) Tool() bool {
	return e.Active && e.Layer == LayerUser && !e.Invalid() && !e.Disabled()
}

// SHA256 is the hex digest of the file content.
func (e *Entry) SHA256() string {
	sum := sha256.Sum256(e.data)
	return hex.EncodeToString(sum[:])
}

// Registry is the result of discovery: every recipe file of every layer,
// the winner of each id and diagnostics (drafts are read on demand:
// ListDrafts).
type Registry struct {
	AgentDir    string
	UserRoot    string
	Entries     []*Entry          // sorted by id, then priority (winner first)
	Active      map[string]*Entry // id → winner
	Diagnostics []string
}

// UserRoot returns <agent>/recipes.
func UserRoot(agentDir string) string { return filepath.Join(agentDir, "recipes") }

// Discover scans the packaged library, the given ad hoc files and
// <agent>/recipes (direct *.json and *.md files only; drafts/ is listed
// separately, never as tools).
func Discover(agentDir string, adhoc ...string) (*Registry, error) {
	g := &Registry{AgentDir: agentDir, UserRoot: UserRoot(agentDir), Active: map[string]*Entry{}}
	var paths []struct {
		path  string
		layer Layer
	}
	pkg, err := fs.ReadDir(library, "library")
	if err != nil {
		return nil, fmt.Errorf("read packaged recipes: %w", err)
	}
	for _, e := range pkg {
		paths = append(paths, struct {
			path  string
			layer Layer
		}{pkgPrefix + e.Name(), LayerPackaged})
	}
	for _, p := range adhoc {
		paths = append(paths, struct {
			path  string
			layer Layer
		}{p, LayerAdHoc})
	}
	user, err := recipeFiles(g.UserRoot)
	if err != nil {
		return nil, err
	}
	for _, p := range user {
		paths = append(paths, struct {
			path  string
			layer Layer
		}{p, LayerUser})
	}
	g.Entries = make([]*Entry, len(paths))
	parallel(len(paths), func(i int) { g.Entries[i] = loadEntry(paths[i].path, paths[i].layer) })
	// Validation (resolving imports, parsing the graph) waits until an
	// entry is asked whether it is valid; imports are then served from what
	// was just parsed.
	home, _ := os.UserHomeDir()
	rv := &Resolver{AgentDir: agentDir, Home: home, loaded: &sync.Map{}}
	for _, e := range g.Entries {
		e.rv = rv
		if e.Recipe != nil {
			rv.loaded.Store(e.Path, e.Recipe)
		}
	}
	g.rank()
	g.Diagnostics = append(rootDiagnostics(g.UserRoot), g.diagnose()...)
	return g, nil
}

// parallel runs fn(0..n-1) on every CPU.
func parallel(n int, fn func(int)) {
	var wg sync.WaitGroup
	work := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range work {
				fn(i)
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
}

// recipeFiles lists the regular *.json and *.md files directly in dir.
func recipeFiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list recipes in %s: %w", dir, err)
	}
	var out []string
	for _, e := range ents {
		n := e.Name()
		if !e.Type().IsRegular() && e.Type()&fs.ModeSymlink == 0 {
			continue
		}
		if strings.HasPrefix(n, ".") || !(strings.HasSuffix(n, ".json") || strings.HasSuffix(n, ".md")) {
			continue
		}
		out = append(out, filepath.Join(dir, n))
	}
	return out, nil
}

func loadEntry(path string, layer Layer) *Entry {
	e := &Entry{ID: IDOf(path), Path: path, Layer: layer}
	data, err := readFile(path)
	if err != nil {
		e.Err = err
		return e
	}
	e.data, e.Size = data, int64(len(data))
	e.Recipe, e.Err = Parse(data, path)
	return e
}

// rank picks each id's winner: the highest layer, then JSON before
// Markdown, then path. An invalid or disabled winner still wins: it
// blocks the fallback until it is fixed, disabled on purpose, or removed.
func (g *Registry) rank() {
	sort.SliceStable(g.Entries, func(i, j int) bool {
		a, b := g.Entries[i], g.Entries[j]
		if a.ID != b.ID {
			return a.ID < b.ID
		}
		if a.Layer != b.Layer {
			return a.Layer > b.Layer
		}
		// Path order first (a .md compares as its .json twin), so a JSON
		// file beats the Markdown one beside it.
		if ka, kb := asJSONPath(a.Path), asJSONPath(b.Path); ka != kb {
			return ka < kb
		}
		return !strings.HasSuffix(a.Path, ".md") && strings.HasSuffix(b.Path, ".md")
	})
	for _, e := range g.Entries {
		w, ok := g.Active[e.ID]
		if !ok {
			e.Active = true
			g.Active[e.ID] = e
			continue
		}
		e.ShadowedBy = w.Path
		w.Shadows = append(w.Shadows, e.Path)
	}
}

func asJSONPath(p string) string {
	if strings.HasSuffix(p, ".md") {
		return strings.TrimSuffix(p, ".md") + ".json"
	}
	return p
}

func (g *Registry) diagnose() []string {
	var d []string
	for _, e := range g.Entries {
		switch {
		case e.Recipe == nil: // did not load (resolution is checked on demand)
			d = append(d, fmt.Sprintf("Invalid recipe: %s: %s", e.Path, reason(e.Path, e.Err)))
		case len(e.Recipe.Warnings) > 0:
			for _, w := range e.Recipe.Warnings {
				d = append(d, fmt.Sprintf("Recipe %s: %s", e.Path, w))
			}
		}
		if !e.Active {
			if strings.HasSuffix(e.Path, ".md") && strings.HasSuffix(e.ShadowedBy, ".json") && filepath.Dir(e.Path) == filepath.Dir(e.ShadowedBy) {
				d = append(d, fmt.Sprintf("Markdown recipe %s is shadowed by JSON recipe %s", e.Path, e.ShadowedBy))
			}
			continue
		}
		if len(e.Shadows) > 0 {
			d = append(d, fmt.Sprintf("Recipe %s shadows %d lower-priority recipe(s)", e.ID, len(e.Shadows)))
			if e.Invalid() {
				d = append(d, fmt.Sprintf("Recipe %s is invalid and blocks lower-priority recipes", e.ID))
			}
			if e.Disabled() {
				d = append(d, fmt.Sprintf("Recipe %s is disabled and blocks lower-priority recipes", e.ID))
			}
		}
	}
	return d
}

// reason strips the path prefixes an error repeats about its own file.
func reason(path string, err error) string {
	if err == nil {
		return ""
	}
	s := err.Error()
	for strings.HasPrefix(s, path+": ") {
		s = strings.TrimPrefix(s, path+": ")
	}
	s = strings.TrimPrefix(s, ErrInvalid.Error()+": ")
	for strings.HasPrefix(s, path+": ") {
		s = strings.TrimPrefix(s, path+": ")
	}
	return s
}

func rootDiagnostics(root string) []string {
	st, err := os.Stat(root)
	if err != nil {
		return nil
	}
	var d []string
	if st.Mode().Perm()&0o002 != 0 {
		d = append(d, "Recipe root is world-writable; review permissions: "+root)
	}
	if st.Mode().Perm()&0o020 != 0 {
		d = append(d, "Recipe root is group-writable; review ownership and permissions: "+root)
	}
	return d
}

// LaunchError explains why a recipe named by a bare name cannot launch.
type LaunchError struct {
	Name            string
	Reason          string // shadowed_invalid, shadowed_disabled, invalid, disabled
	ActivePath      string
	BlockedFallback string
	Err             error
}

func (e *LaunchError) Error() string {
	msg := e.Err.Error()
	if e.BlockedFallback != "" {
		msg += fmt.Sprintf(" reason=%s active_path=%s blocked_fallback=%s hint=inspect_recipes_doctor", e.Reason, e.ActivePath, e.BlockedFallback)
	}
	return msg
}

func (e *LaunchError) Unwrap() error { return e.Err }

// Lookup returns the winning recipe for a bare name: its exact id, else
// the one id spelt differently (Resolve: my-tool finds my_tool). An
// invalid or disabled winner is an error (a *LaunchError naming the
// fallback it blocks, if any).
func (g *Registry) Lookup(name string) (*Entry, error) {
	id, err := g.Resolve(name, nil)
	if err != nil {
		return nil, err
	}
	e, ok := g.Active[id]
	if !ok {
		return nil, fmt.Errorf("%w: %s (looked in %s and the packaged library; inspect target=recipes view=summary lists them)", ErrNotFound, name, g.UserRoot)
	}
	name = id
	le := &LaunchError{Name: name, ActivePath: e.Path}
	if len(e.Shadows) > 0 {
		le.BlockedFallback = e.Shadows[0]
	}
	switch {
	case e.Invalid():
		le.Reason, le.Err = "shadowed_invalid", e.Err
		if le.BlockedFallback == "" {
			le.Reason = "invalid"
		}
		return nil, le
	case e.Disabled():
		le.Reason, le.Err = "shadowed_disabled", fmt.Errorf("%w: template recipe is disabled: %s", ErrDisabled, e.Path)
		if le.BlockedFallback == "" {
			le.Reason = "disabled"
		}
		return nil, le
	}
	return e, nil
}

// Draft is a recipe captured in <agent>/recipes/drafts/.
type Draft struct {
	ID              string    `json:"id"`
	Path            string    `json:"path"`
	SHA256          string    `json:"sha256"`
	Size            int64     `json:"size"`
	CreatedAt       time.Time `json:"created_at"`
	ModifiedAt      time.Time `json:"modified_at"`
	Valid           bool      `json:"valid"`
	Diagnostics     []string  `json:"diagnostics"`
	RiskLabels      []string  `json:"risk_labels,omitempty"`
	Description     string    `json:"description,omitempty"`
	SourceRun       string    `json:"source_run,omitempty"`
	Async           bool      `json:"async,omitempty"`
	TemplatePreview string    `json:"template_preview,omitempty"`
}

// ListDrafts reads the drafts in <agent>/recipes/drafts. Discovery does
// not: every inline spawn captures one, they are never deleted for the
// user, and each is read whole (thousands of them made every call, tool
// listing and message to a tool read them all).
func (g *Registry) ListDrafts() []*Draft {
	files, _ := recipeFiles(filepath.Join(g.UserRoot, "drafts"))
	var out []*Draft
	for _, p := range files {
		e := loadEntry(p, LayerAdHoc)
		d := &Draft{ID: e.ID, Path: p, Size: e.Size, SHA256: e.SHA256(), Diagnostics: []string{}}
		if st, err := os.Stat(p); err == nil {
			d.ModifiedAt = st.ModTime().UTC()
			d.CreatedAt = birthTime(st)
		}
		if e.Invalid() {
			d.Diagnostics = append(d.Diagnostics, reason(e.Path, e.Err))
		} else {
			d.Valid = true
			d.Description = e.Recipe.Description
			d.Async = e.Recipe.Async
			if i := strings.Index(d.Description, "spawn run "); i >= 0 {
				d.SourceRun = strings.Fields(d.Description[i+len("spawn run "):] + " ")[0]
			}
			d.TemplatePreview = preview(e.Recipe.Raw["template"], 120)
		}
		out = append(out, d)
	}
	return out
}

// preview renders a template (string or JSON) cut to n characters with
// "..." when longer.
func preview(v any, n int) string {
	s, ok := v.(string)
	if !ok {
		s = string(jsonBytes(v))
	}
	if r := []rune(s); len(r) > n {
		return string(r[:n-3]) + "..."
	}
	return s
}
