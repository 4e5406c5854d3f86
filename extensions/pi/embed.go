package piext

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pi-actors/pi-actors/internal/config"
	"github.com/pi-actors/pi-actors/internal/fsutil"
)

//go:embed *.ts
var files embed.FS

// Name is the extension's directory under <agent>/extensions.
const Name = "pi-actors"

// marker marks a directory written by Install.
const marker = ".pi-actors-install"

const markerText = "Written by `pi-actors install pi`; `pi-actors uninstall pi` removes this directory.\n"

// Stage directories under <agent>/extensions; stale ones are removed.
const (
	installStage   = ".pi-actors-install-"
	uninstallStage = ".pi-actors-uninstall-"
	staleAfter     = time.Hour
)

// lockInstall serialises installs and uninstalls of one agent root (two
// at once raced: one failed with "file exists"). The lock file is in
// pi-actors' own scratch directory, not where pi looks for extensions.
func lockInstall(agentDir string) (unlock func(), err error) {
	tmp := config.TmpDir(agentDir)
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return nil, err
	}
	return fsutil.Lock(filepath.Join(tmp, "pi-extension.lock"))
}

// ErrForeign reports that <agent>/extensions/pi-actors exists but was not
// written by Install, so it is neither replaced nor removed.
var ErrForeign = errors.New("not written by pi-actors install (no " + marker + " marker)")

// Dir returns the directory Install writes for the agent root agentDir.
func Dir(agentDir string) string {
	return filepath.Join(agentDir, "extensions", Name)
}

// Source returns the embedded index.ts.
func Source() []byte {
	b, err := files.ReadFile("index.ts")
	if err != nil {
		panic("piext: index.ts not embedded: " + err.Error())
	}
	return b
}

// Install writes the extension into <agentDir>/extensions/pi-actors/,
// replacing an earlier installation as a whole, and returns that directory.
// A directory there that Install did not write is ErrForeign.
func Install(agentDir string) (dir string, err error) {
	if agentDir == "" {
		return "", errors.New("install pi extension: agent dir is empty")
	}
	ext := filepath.Join(agentDir, "extensions")
	dir = Dir(agentDir)
	if err := os.MkdirAll(ext, 0o755); err != nil {
		return "", fmt.Errorf("install pi extension: %w", err)
	}
	unlock, err := lockInstall(agentDir)
	if err != nil {
		return "", fmt.Errorf("install pi extension: %w", err)
	}
	defer unlock()
	removeStale(ext)
	if _, err := owned(dir); err != nil {
		return "", fmt.Errorf("install pi extension %s: %w", dir, err)
	}
	stage, err := os.MkdirTemp(ext, installStage)
	if err != nil {
		return "", fmt.Errorf("install pi extension: %w", err)
	}
	defer os.RemoveAll(stage)
	next := filepath.Join(stage, Name)
	if err := writeTree(next); err != nil {
		return "", fmt.Errorf("install pi extension: %w", err)
	}
	if err := swapIn(next, dir, filepath.Join(stage, "old")); err != nil {
		return "", fmt.Errorf("install pi extension %s: %w", dir, err)
	}
	if err := syncDir(ext); err != nil {
		return "", fmt.Errorf("install pi extension: %w", err)
	}
	return dir, nil
}

// Uninstall removes <agentDir>/extensions/pi-actors/ and reports whether
// there was one. An absent directory is not an error; one Install did not
// write is ErrForeign.
func Uninstall(agentDir string) (removed bool, err error) {
	if agentDir == "" {
		return false, errors.New("uninstall pi extension: agent dir is empty")
	}
	ext := filepath.Join(agentDir, "extensions")
	dir := Dir(agentDir)
	unlock, err := lockInstall(agentDir)
	if err != nil {
		return false, fmt.Errorf("uninstall pi extension: %w", err)
	}
	defer unlock()
	exists, err := owned(dir)
	if err != nil {
		return false, fmt.Errorf("uninstall pi extension %s: %w", dir, err)
	}
	if !exists {
		return false, nil
	}
	// Delete by renaming first: pi never sees a half-removed extension.
	stage, err := os.MkdirTemp(ext, uninstallStage)
	if err != nil {
		return false, fmt.Errorf("uninstall pi extension: %w", err)
	}
	defer os.RemoveAll(stage)
	if err := os.Rename(dir, filepath.Join(stage, Name)); err != nil {
		return false, fmt.Errorf("uninstall pi extension %s: %w", dir, err)
	}
	if err := syncDir(ext); err != nil {
		return true, fmt.Errorf("uninstall pi extension: %w", err)
	}
	return true, nil
}

// swapIn puts the directory next in place of dir at once: an atomic
// exchange when dir exists (pi never sees no extension), the old one
// left at next; a rename when it does not. Where the exchange is not
// supported the old one moves to old first (put back if the second
// rename fails).
func swapIn(next, dir, old string) error {
	err := unix.Renameat2(unix.AT_FDCWD, next, unix.AT_FDCWD, dir, unix.RENAME_EXCHANGE)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.ENOENT):
		return os.Rename(next, dir)
	case !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOSYS):
		return err
	}
	hadOld := true
	if err := os.Rename(dir, old); errors.Is(err, fs.ErrNotExist) {
		hadOld = false
	} else if err != nil {
		return err
	}
	if err := os.Rename(next, dir); err != nil {
		if hadOld {
			os.Rename(old, dir)
		}
		return err
	}
	return nil
}

// owned reports whether dir exists; an existing dir without the marker (or
// not a directory at all) is ErrForeign.
func owned(dir string) (exists bool, err error) {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !fi.IsDir() {
		return true, ErrForeign
	}
	m, err := os.Lstat(filepath.Join(dir, marker))
	if errors.Is(err, fs.ErrNotExist) || (err == nil && !m.Mode().IsRegular()) {
		return true, ErrForeign
	}
	if err != nil {
		return true, err
	}
	return true, nil
}

// writeTree creates dir with the embedded files and the marker, each
// fsynced, and fsyncs dir.
func writeTree(dir string) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	err := fs.WalkDir(files, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := files.ReadFile(name)
		if err != nil {
			return err
		}
		return writeSynced(filepath.Join(dir, filepath.FromSlash(name)), data)
	})
	if err != nil {
		return err
	}
	if err := writeSynced(filepath.Join(dir, marker), []byte(markerText)); err != nil {
		return err
	}
	return syncDir(dir)
}

func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync dir %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("sync dir %s: %w", dir, err)
	}
	return nil
}

// removeStale removes stage directories a crashed Install or Uninstall left
// behind, once they are old enough not to belong to one still running.
// Best effort: a stage that cannot be removed is harmless (pi ignores it).
func removeStale(ext string) {
	entries, err := os.ReadDir(ext)
	if err != nil {
		return
	}
	for _, e := range entries {
		n := e.Name()
		if !e.IsDir() || !(strings.HasPrefix(n, installStage) || strings.HasPrefix(n, uninstallStage)) {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > staleAfter {
			os.RemoveAll(filepath.Join(ext, n))
		}
	}
}
