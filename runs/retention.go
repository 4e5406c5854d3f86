package runs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pi-actors/pi-actors/internal/fsutil"
	"github.com/pi-actors/pi-actors/internal/lazyre"
)

// Archive moves a terminal run's state directory to
// <parent>/archived/<run>-<timestamp> and leaves a tombstone where it was,
// so the run stays listable and inspectable as archived. It returns the
// archive directory.
func Archive(in *Info) (string, error) {
	dir := string(in.Dir)
	ts := time.Now().UTC()
	dest := filepath.Join(filepath.Dir(dir), archivedDir, in.Meta.Run+"-"+strings.NewReplacer(":", "-", ".", "-").Replace(ts.Format(time.RFC3339Nano)))
	if err := os.MkdirAll(filepath.Dir(dest), 0o700); err != nil {
		return "", fmt.Errorf("archive: %w", err)
	}
	// The tombstone directory is made whole beside the state dir first,
	// then the state dir moves to the archive and the tombstone takes its
	// place: a crash leaves the run as it was, or archived, or (between
	// the two renames) a staged tombstone the next kernel puts in place
	// (CleanStaging) — never a state dir with neither run.json nor a
	// tombstone, which no verb could see or remove.
	stage, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+archivingInfix)
	if err != nil {
		return "", fmt.Errorf("archive: %w", err)
	}
	tomb := Tombstone{Archived: true, ArchiveDir: dest, OriginalStateDir: dir, Run: in.Meta.Run, Status: in.Status, TS: ts}
	if err := Dir(stage).WriteJSON(TombstoneFile, tomb); err != nil {
		os.RemoveAll(stage)
		return "", fmt.Errorf("archive: %w", err)
	}
	if err := os.Rename(dir, dest); err != nil {
		os.RemoveAll(stage)
		return "", fmt.Errorf("archive: %w", err)
	}
	if err := os.Rename(stage, dir); err != nil {
		return "", fmt.Errorf("archive: put the tombstone in place (the next kernel does): %w", err)
	}
	if err := fsutil.SyncDir(filepath.Dir(dir)); err != nil {
		return "", fmt.Errorf("archive: %w", err)
	}
	return dest, nil
}

// placeTombstone finishes an archive a crash cut between its renames:
// the staged tombstone directory stage takes the place of the state dir
// that moved to the archive. It reports whether it did; a stage whose
// archive never happened (the state dir is still there) is left to be
// removed.
func placeTombstone(stage string) bool {
	var tomb Tombstone
	if err := Dir(stage).ReadJSON(TombstoneFile, &tomb); err != nil || tomb.OriginalStateDir == "" || tomb.ArchiveDir == "" {
		return false
	}
	if _, err := os.Lstat(tomb.OriginalStateDir); !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	if _, err := os.Stat(tomb.ArchiveDir); err != nil {
		return false
	}
	return os.Rename(stage, tomb.OriginalStateDir) == nil
}

// archiveStamp is the suffix Archive gives an archive after "<run>-".
var archiveStamp = lazyre.New(`^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(-\d+)?Z$`)

// earlierArchives are the archives of run id that were the state
// directory dir (their run.json says so): Archive's
// <parent>/archived/<run>-<timestamp>.
func earlierArchives(dir, id string) []string {
	root := filepath.Join(filepath.Dir(dir), archivedDir)
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		stamp, ok := strings.CutPrefix(e.Name(), id+"-")
		if !ok || !e.IsDir() || !archiveStamp.MatchString(stamp) {
			continue
		}
		a := filepath.Join(root, e.Name())
		if m, err := Dir(a).Meta(); err == nil && m.Run == id && filepath.Clean(m.StateDir) == filepath.Clean(dir) {
			out = append(out, a)
		}
	}
	return out
}

// ErrNotPreservable is a declared artifact that prune cannot copy to
// preserve it: a FIFO, a socket or a device, or a directory holding one.
var ErrNotPreservable = errors.New("artifact cannot be preserved")

// ArtifactFile is where a declared artifact (a path string, or an object
// with path) is on disk: a relative path is taken from the run's working
// directory (run.json "cwd"), where its commands wrote it, not from the
// reader's; for an archived run a path inside its state directory is
// looked up in the archive, where the file moved. "" when the artifact
// names no path.
func (in *Info) ArtifactFile(a any) string {
	p := artifactPath(a)
	if p == "" {
		return ""
	}
	if !filepath.IsAbs(p) && in.Meta != nil && in.Meta.Cwd != "" {
		p = filepath.Join(in.Meta.Cwd, p)
	}
	p = filepath.Clean(p)
	if in.Archived != nil && in.Archived.OriginalStateDir != "" {
		if rel, err := filepath.Rel(in.Archived.OriginalStateDir, p); err == nil && filepath.IsLocal(rel) {
			p = filepath.Join(in.Archived.ArchiveDir, rel)
		}
	}
	return p
}

// Prune deletes a terminal run's state directory. With preserve, every
// declared artifact (found by ArtifactFile) is first copied to
// <parent>/preserved-artifacts/<run>/<basename> — a directory with what it
// holds (symbolic links inside copied as links) — never over an earlier
// copy: a name taken already gets .1, .2, … appended. It returns the
// copies by artifact name; an artifact that does not exist is not copied
// and not in them. An artifact that cannot be copied (ErrNotPreservable),
// or a copy that fails, deletes nothing and leaves no copy: the error
// names the artifact.
func Prune(in *Info, preserve bool) (map[string]string, error) {
	kept := map[string]string{}
	if preserve {
		var err error
		if kept, err = preserveArtifacts(in); err != nil {
			return nil, err
		}
	}
	target := string(in.Dir)
	if in.Archived != nil {
		os.RemoveAll(in.Archived.ArchiveDir)
	}
	// The archives of earlier runs of this id in this state directory
	// (rm, spawned again, rm again): no tombstone names them any more.
	for _, old := range earlierArchives(target, in.Meta.Run) {
		os.RemoveAll(old)
	}
	// Rename first so a crash never leaves a half-deleted run that still
	// looks like a run.
	// Hidden (.<name>.pruning-<n>): no index scan takes it for a run, and
	// the next kernel removes one a failed removal left (CleanStaging).
	trash := filepath.Join(filepath.Dir(target), "."+filepath.Base(target)+pruningInfix+fmt.Sprint(time.Now().UnixNano()))
	if err := os.Rename(target, trash); err != nil {
		return nil, fmt.Errorf("prune: %w", err)
	}
	if err := fsutil.RemoveTree(trash); err != nil {
		return nil, fmt.Errorf("prune: %w", err)
	}
	return kept, nil
}

// preserveArtifacts copies a run's existing artifacts for Prune: every one
// is checked before the first is copied, and a failure removes the copies
// made.
func preserveArtifacts(in *Info) (map[string]string, error) {
	type source struct{ name, path string }
	var srcs []source
	dest := filepath.Join(filepath.Dir(string(in.Dir)), preservedDir, in.Meta.Run)
	for _, name := range ArtifactNames(in.Meta.Artifacts) {
		src := in.ArtifactFile(in.Meta.Artifacts[name])
		if src == "" {
			continue
		}
		if _, err := os.Stat(src); errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return nil, fmt.Errorf("prune: preserve artifact %s: %w", name, err)
		}
		if err := checkCopyable(src, dest); err != nil {
			return nil, fmt.Errorf("prune: preserve artifact %s: %w", name, err)
		}
		srcs = append(srcs, source{name, src})
	}
	kept := map[string]string{}
	if len(srcs) == 0 {
		return kept, nil
	}
	if err := os.MkdirAll(dest, 0o700); err != nil {
		return nil, fmt.Errorf("prune: preserve artifacts: %w", err)
	}
	// The copies are made durable before the run is deleted: a crash of
	// the machine must not take both.
	syncs := &fsutil.DirSyncs{}
	syncs.Add(dest)
	syncs.Add(filepath.Dir(dest))
	syncs.Add(filepath.Dir(filepath.Dir(dest)))
	for _, s := range srcs {
		to, err := copyNew(s.path, dest, syncs)
		if err != nil {
			for _, p := range kept {
				os.RemoveAll(p)
			}
			os.Remove(dest) // made for these copies (kept when it holds earlier ones)
			return nil, fmt.Errorf("prune: preserve artifact %s: %w", s.name, err)
		}
		kept[s.name] = to
	}
	if err := syncs.Sync(); err != nil {
		for _, p := range kept {
			os.RemoveAll(p)
		}
		return nil, fmt.Errorf("prune: preserve artifacts: %w", err)
	}
	return kept, nil
}

// checkCopyable reports ErrNotPreservable when path (followed if a link)
// is, or as a directory holds, something other than regular files,
// directories and symbolic links, or holds dest, where the copies go (a
// copy into itself would never end).
func checkCopyable(path, dest string) error {
	root, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	if holds(root, dest) {
		return fmt.Errorf("%w: %s holds %s, where the copies go; declare the files to keep as artifacts, or prune without preserve_artifacts", ErrNotPreservable, path, dest)
	}
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if t := d.Type(); t&^(fs.ModeDir|fs.ModeSymlink) != 0 {
			return fmt.Errorf("%w: %s is a %s (only files and directories are copied); prune without preserve_artifacts, or copy what you need first", ErrNotPreservable, p, fsutil.FileKind(t))
		}
		return nil
	})
}

// holds reports whether the directory dir holds path (or is it), both
// compared with their symbolic links resolved as far as they exist.
func holds(dir, path string) bool {
	real := path
	for p, rest := path, ""; ; {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			real = filepath.Join(r, rest)
			break
		}
		parent := filepath.Dir(p)
		if parent == p {
			break
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
	rel, err := filepath.Rel(dir, real)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// copyNew copies src (a file, or a directory with what it holds) into
// dir under its base name, or the first of <name>.1, <name>.2, … not
// taken, and returns the copy's path. Files are fsynced; the directories
// that got entries are added to syncs.
func copyNew(src, dir string, syncs *fsutil.DirSyncs) (string, error) {
	root, err := filepath.EvalSymlinks(src)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(root)
	if err != nil {
		return "", err
	}
	base := filepath.Base(src)
	if base == "/" || base == "." {
		base = "root"
	}
	for i := 0; i < 1000; i++ {
		to := filepath.Join(dir, base)
		if i > 0 {
			to += "." + strconv.Itoa(i)
		}
		if !st.IsDir() {
			err = copyFile(root, to)
		} else if err = os.Mkdir(to, 0o700); err == nil {
			if err = copyTree(root, to, syncs); err != nil {
				os.RemoveAll(to)
			}
		}
		if !errors.Is(err, fs.ErrExist) {
			return to, err
		}
	}
	return "", fmt.Errorf("copy %s: too many copies named %s.N in %s", src, base, dir)
}

// copyTree copies what directory src holds into the existing directory
// dst: files, directories, symbolic links as links.
func copyTree(src, dst string, syncs *fsutil.DirSyncs) error {
	syncs.Add(dst)
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == src {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		syncs.Add(filepath.Dir(to))
		switch t := d.Type(); {
		case t.IsDir():
			return os.Mkdir(to, 0o700)
		case t&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, to)
		case t.IsRegular():
			return copyFile(p, to)
		default:
			return fmt.Errorf("%w: %s is a %s", ErrNotPreservable, p, fsutil.FileKind(t))
		}
	})
}

func artifactPath(a any) string {
	switch x := a.(type) {
	case string:
		return x
	case map[string]any:
		s, _ := x["path"].(string)
		return s
	}
	return ""
}

// copyFile copies the regular file src to dst, which must not exist, and
// fsyncs the copy.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	if err != nil {
		out.Close()
		os.Remove(dst)
		return err
	}
	if err := out.Close(); err != nil {
		os.Remove(dst)
		return err
	}
	return nil
}

// CleanTemp removes what in <agent>/tmp/pi-actors is older than maxAge,
// except the runs and sessions directories, the kernel's own files and
// the names in keep (what lives there for good). A top-level file ages by
// its own mtime; a top-level directory (outputs, spill) is swept entry by
// entry, each aged by the newest mtime in it — never removed whole by its
// own mtime, the creation of its newest entry, which says nothing of an
// older entry still in use. It returns how many entries it removed.
// Errors are ignored (fail open).
func CleanTemp(tmp string, maxAge time.Duration, keep ...string) int {
	ents, err := os.ReadDir(tmp)
	if err != nil {
		return 0
	}
	old := func(path string) bool { return time.Since(newestMtime(path)) >= maxAge }
	n := 0
	remove := func(path string) {
		if os.RemoveAll(path) == nil {
			n++
		}
	}
	for _, e := range ents {
		switch e.Name() {
		case "runs", "sessions", "kernel.lock", "kernel.sock", "kernel.json", "kernel.err", "kernel.log", "kernel.log.1", "kernel.log.2", "kernel.log.times":
			continue
		}
		if slices.Contains(keep, e.Name()) {
			continue
		}
		p := filepath.Join(tmp, e.Name())
		if !e.IsDir() {
			if old(p) {
				remove(p)
			}
			continue
		}
		subs, err := os.ReadDir(p)
		if err != nil {
			continue
		}
		for _, s := range subs {
			if sp := filepath.Join(p, s.Name()); old(sp) {
				remove(sp)
			}
		}
	}
	return n
}

// newestMtime is the newest modification time of path and, for a
// directory, of everything under it; the zero time when path is gone.
func newestMtime(path string) time.Time {
	var newest time.Time
	filepath.WalkDir(path, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if info, err := d.Info(); err == nil && info.ModTime().After(newest) {
			newest = info.ModTime()
		}
		return nil
	})
	return newest
}

// Expired lists the terminal runs of agentDir's index entries whose last
// change is older than maxAge (re-checked from their state dirs): what
// retention prunes. A run with a custom state_dir is never one: its
// directory is the caller's, to remove with rm --prune (retention deleted
// it whole, files of the caller's own beside the run's included).
func Expired(agentDir string, entries []Entry, maxAge time.Duration) []Entry {
	var out []Entry
	for _, e := range entries {
		if Dir(e.StateDir) != StateDirFor(agentDir, e.Run) {
			continue
		}
		if Terminal(e.Status) && time.Since(e.UpdatedAt) > maxAge {
			in, err := Load(Dir(e.StateDir))
			if err != nil || !Terminal(in.Status) {
				continue
			}
			out = append(out, e)
		}
	}
	return out
}
