package runs

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Archive moves a terminal run's state directory to
// <parent>/archived/<run>-<timestamp> and leaves a tombstone where it was,
// so the run stays listable and inspectable as archived. It returns the
// archive directory.
func Archive(in *Info) (string, error) {
	dir := string(in.Dir)
	ts := time.Now().UTC()
	dest := filepath.Join(filepath.Dir(dir), "archived", in.Meta.Run+"-"+strings.NewReplacer(":", "-", ".", "-").Replace(ts.Format(time.RFC3339Nano)))
	if err := os.MkdirAll(filepath.Dir(dest), 0o700); err != nil {
		return "", fmt.Errorf("archive: %w", err)
	}
	if err := os.Rename(dir, dest); err != nil {
		return "", fmt.Errorf("archive: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("archive: %w", err)
	}
	tomb := Tombstone{Archived: true, ArchiveDir: dest, OriginalStateDir: dir, Run: in.Meta.Run, Status: in.Status, TS: ts}
	if err := Dir(dir).WriteJSON(TombstoneFile, tomb); err != nil {
		return "", err
	}
	return dest, nil
}

// Prune deletes a terminal run's state directory. With preserve, every
// declared artifact that exists is first copied to
// <parent>/preserved-artifacts/<run>/<basename>. It returns the preserved
// copies by artifact name.
func Prune(in *Info, preserve bool) (map[string]string, error) {
	kept := map[string]string{}
	if preserve {
		dest := filepath.Join(filepath.Dir(string(in.Dir)), "preserved-artifacts", in.Meta.Run)
		for name, a := range in.Meta.Artifacts {
			src := artifactPath(a)
			if src == "" {
				continue
			}
			if in.Archived != nil {
				// An archived run's files moved with its state directory.
				if rel, err := filepath.Rel(in.Archived.OriginalStateDir, src); err == nil && filepath.IsLocal(rel) {
					src = filepath.Join(in.Archived.ArchiveDir, rel)
				}
			}
			if _, err := os.Stat(src); err != nil {
				continue
			}
			if err := os.MkdirAll(dest, 0o700); err != nil {
				return nil, fmt.Errorf("prune: %w", err)
			}
			to := filepath.Join(dest, filepath.Base(src))
			if err := copyFile(src, to); err != nil {
				return nil, fmt.Errorf("prune: preserve %s: %w", name, err)
			}
			kept[name] = to
		}
	}
	target := string(in.Dir)
	if in.Archived != nil {
		os.RemoveAll(in.Archived.ArchiveDir)
	}
	// Rename first so a crash never leaves a half-deleted run that still
	// looks like a run.
	trash := target + ".pruning-" + fmt.Sprint(time.Now().UnixNano())
	if err := os.Rename(target, trash); err != nil {
		return nil, fmt.Errorf("prune: %w", err)
	}
	if err := os.RemoveAll(trash); err != nil {
		return nil, fmt.Errorf("prune: %w", err)
	}
	return kept, nil
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

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// CleanTemp removes top-level entries of <agent>/tmp/pi-actors older than
// maxAge, except the runs and sessions directories and the kernel's own
// files. Errors are ignored (fail open).
func CleanTemp(tmp string, maxAge time.Duration) int {
	ents, err := os.ReadDir(tmp)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		switch e.Name() {
		case "runs", "sessions", "kernel.lock", "kernel.sock", "kernel.json", "kernel.err", "kernel.log", "kernel.log.1", "kernel.log.2":
			continue
		}
		info, err := e.Info()
		if err != nil || time.Since(info.ModTime()) < maxAge {
			continue
		}
		if os.RemoveAll(filepath.Join(tmp, e.Name())) == nil {
			n++
		}
	}
	return n
}

// Expired lists terminal runs whose last update is older than maxAge.
// Live runs are never listed.
func Expired(entries []Entry, maxAge time.Duration) []Entry {
	var out []Entry
	for _, e := range entries {
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
