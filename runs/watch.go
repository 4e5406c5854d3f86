package runs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/fsnotify/fsnotify"
)

// watch= restarts a run when a file matching one of its globs (relative
// to the run's directory) changes: one inotify instance per watching run
// for the run's life (runs without watch= have none: a supervisor per run
// would exhaust the per-user instances otherwise), changes debounced,
// .git/ and the run's state directory ignored.

// Debounce: a restart waits for 300 ms without a matching change, and at
// most 3 s after the first one of a burst.
const (
	watchQuiet    = 300 * time.Millisecond
	watchMaxDelay = 3 * time.Second
	watchMaxDirs  = 8192 // directories watched at most (inotify watches are a per-user budget)
	watchMaxFiles = 20   // changed files named in a restart event
)

// fileWatch watches the directories the globs can match under root.
type fileWatch struct {
	fw      *fsnotify.Watcher
	root    string
	globs   []string
	ignore  []string // absolute paths never watched nor matched
	bases   []watchBase
	dirs    int
	changed func(files []string)
	done    chan struct{}
	exited  chan struct{}
}

// watchBase is the fixed directory in front of a glob's first wildcard
// and whether the rest of the glob can reach below it.
type watchBase struct {
	dir  string
	deep bool
}

// startWatch starts the run's file watch (watch=) and returns its stop.
// Without watch= it starts nothing. A watch that cannot start is logged
// to stderr.log and events.jsonl; the run goes on without it.
func (s *supervisor) startWatch() func() {
	h := s.meta.Health
	if h == nil || len(h.Watch) == 0 {
		return func() {}
	}
	w, err := newFileWatch(s.meta.Cwd, h.Watch, []string{string(s.dir)}, func(files []string) {
		s.mu.Lock()
		s.watchFiles = files
		s.mu.Unlock()
		s.request(reasonWatch)
	})
	if err != nil {
		s.logf("watch: %v", err)
		s.appendEvent(map[string]any{"event": "run.watch_failed", "error": err.Error()})
		return func() {}
	}
	s.appendEvent(map[string]any{"event": "run.watch", "globs": h.Watch, "dirs": w.dirs})
	return w.close
}

// newFileWatch watches root for changes to files matching globs.
func newFileWatch(root string, globs, ignore []string, changed func([]string)) (*fileWatch, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	w := &fileWatch{fw: fw, root: abs, globs: globs, changed: changed, done: make(chan struct{}), exited: make(chan struct{})}
	for _, ig := range ignore {
		if a, err := filepath.Abs(ig); err == nil {
			w.ignore = append(w.ignore, a)
		}
	}
	for _, g := range globs {
		base, rest := doublestar.SplitPattern(g)
		w.bases = append(w.bases, watchBase{dir: filepath.Join(abs, filepath.FromSlash(base)), deep: strings.Contains(rest, "/") || strings.Contains(rest, "**")})
	}
	for _, b := range w.bases {
		w.addBase(b)
	}
	if w.dirs == 0 {
		fw.Close()
		return nil, errors.New("no directory to watch under " + abs)
	}
	go w.run()
	return w, nil
}

// addBase watches a glob's base (and below it for a deep glob); a base
// that does not exist yet is watched through its nearest existing parent
// inside root until it is created.
func (w *fileWatch) addBase(b watchBase) {
	dir := b.dir
	for {
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			break
		}
		if dir == w.root || !strings.HasPrefix(dir, w.root+string(filepath.Separator)) {
			return
		}
		dir = filepath.Dir(dir)
	}
	if dir != b.dir || !b.deep {
		w.add(dir)
		return
	}
	w.addTree(dir)
}

func (w *fileWatch) add(dir string) {
	if w.dirs >= watchMaxDirs || w.ignored(dir) {
		return
	}
	if w.fw.Add(dir) == nil {
		w.dirs++
	}
}

// addTree watches dir and every directory below it (not the ignored ones).
func (w *fileWatch) addTree(dir string) {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if w.ignored(p) {
			return filepath.SkipDir
		}
		if w.dirs >= watchMaxDirs {
			return filepath.SkipAll
		}
		w.add(p)
		return nil
	})
}

// ignored reports whether a path is .git (or inside one) or inside an
// ignored directory (the run's state directory).
func (w *fileWatch) ignored(p string) bool {
	for _, ig := range w.ignore {
		if p == ig || strings.HasPrefix(p, ig+string(filepath.Separator)) {
			return true
		}
	}
	rel, err := filepath.Rel(w.root, p)
	if err != nil {
		return true
	}
	rel = filepath.ToSlash(rel)
	return rel == ".git" || strings.HasPrefix(rel, ".git/") || strings.Contains(rel, "/.git/") || strings.HasSuffix(rel, "/.git")
}

// match is a changed path's name relative to root when a glob matches it.
func (w *fileWatch) match(p string) (string, bool) {
	if w.ignored(p) {
		return "", false
	}
	rel, err := filepath.Rel(w.root, p)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return "", false
	}
	rel = filepath.ToSlash(rel)
	for _, g := range w.globs {
		if ok, _ := doublestar.Match(g, rel); ok {
			return rel, true
		}
	}
	return "", false
}

// created watches a directory that appeared: below a deep base, its
// whole tree; a missing base (or a parent of one), itself.
func (w *fileWatch) created(dir string) {
	for _, b := range w.bases {
		switch {
		case dir == b.dir && b.deep, b.deep && strings.HasPrefix(dir, b.dir+string(filepath.Separator)):
			w.addTree(dir)
			return
		case dir == b.dir, strings.HasPrefix(b.dir, dir+string(filepath.Separator)):
			w.add(dir)
			w.addBase(b)
			return
		}
	}
}

// run collects matching changes and reports each burst once it is quiet.
func (w *fileWatch) run() {
	defer close(w.exited)
	var timer *time.Timer
	var fire <-chan time.Time
	var first time.Time
	files := map[string]bool{}
	for {
		select {
		case <-w.done:
			if timer != nil {
				timer.Stop()
			}
			return
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			if ev.Op == fsnotify.Chmod {
				continue
			}
			if ev.Has(fsnotify.Create) {
				if st, err := os.Lstat(ev.Name); err == nil && st.IsDir() {
					w.created(ev.Name)
				}
			}
			rel, ok := w.match(ev.Name)
			if !ok {
				continue
			}
			files[rel] = true
			now := time.Now()
			if first.IsZero() {
				first = now
			}
			wait := min(watchQuiet, max(first.Add(watchMaxDelay).Sub(now), 0))
			if timer == nil {
				timer = time.NewTimer(wait)
			} else {
				timer.Reset(wait)
			}
			fire = timer.C
		case <-fire:
			fire, first = nil, time.Time{}
			names := make([]string, 0, len(files))
			for f := range files {
				names = append(names, f)
			}
			sort.Strings(names)
			if len(names) > watchMaxFiles {
				names = append(names[:watchMaxFiles], "…")
			}
			clear(files)
			w.changed(names)
		case _, ok := <-w.fw.Errors:
			if !ok {
				return
			}
		}
	}
}

func (w *fileWatch) close() {
	close(w.done)
	w.fw.Close()
	<-w.exited
}
