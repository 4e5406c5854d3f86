// Package fsutil holds the file primitives every state file goes through:
// atomic replacement (temp file → fsync → rename → fsync dir; snapshots
// without the fsyncs) and cross-process locks. Nothing else in pi-actors
// writes a state file another way, so a crash never leaves a half-written
// JSON document.
package fsutil

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// WriteFile atomically and durably replaces path with data: it writes a
// temporary file in the same directory, fsyncs it, renames it over path
// and fsyncs the directory. On any error path is unchanged and the
// temporary file is gone. It is for state that a crash of the machine
// must not lose (run.json, result.json, rosters, queues rewritten whole).
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	return replace(path, data, perm, true)
}

// WriteSnapshot atomically replaces path with data like WriteFile, without
// the two fsyncs: a crashed or killed process never leaves a torn or
// half-written file (the rename is atomic), but a crash of the operating
// system may lose the latest version — or, for a file written for the
// first time, leave it empty. It is for snapshots that are rewritten as
// their subject changes and that nothing needs after such a crash, when
// every process they describe is gone: a supervisor's progress.json, a
// communication snapshot. Readers treat an empty or unreadable snapshot as
// absent.
func WriteSnapshot(path string, data []byte, perm fs.FileMode) error {
	return replace(path, data, perm, false)
}

// CreateFile writes data to a new file path (O_EXCL: it must not exist)
// in place, with no temporary file: for a directory no other process
// opens yet (a state directory being staged before its rename), where a
// reader never sees the file half-written. durable fsyncs the file. On
// any error the file is gone.
func CreateFile(path string, data []byte, perm fs.FileMode, durable bool) (err error) {
	f, err := OpenRaw(path, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	_, err = f.Write(data)
	if err == nil && durable {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// replace writes data to a new temporary file beside path (plain system
// calls: an os.File would also try to register each descriptor with the
// runtime's poller), renames it over path, and with durable fsyncs the
// file before the rename and the directory after it.
func replace(path string, data []byte, perm fs.FileMode, durable bool) (err error) {
	dir := filepath.Dir(path)
	f, err := createTemp(dir, "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			if f != nil {
				f.Close()
			}
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Chmod(perm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if durable {
		if err = f.Sync(); err != nil {
			return fmt.Errorf("sync %s: %w", path, err)
		}
	}
	err = f.Close()
	f = nil
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("replace %s: %w", path, err)
	}
	if !durable {
		return nil
	}
	return SyncDir(dir)
}

// createTemp creates a new file dir/prefix<random> (mode 0600, O_EXCL).
func createTemp(dir, prefix string) (*RawFile, error) {
	for try := 0; ; try++ {
		name := filepath.Join(dir, prefix+strconv.FormatUint(uint64(rand.Uint32()), 10))
		f, err := OpenRaw(name, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL, 0o600)
		if err == nil || !errors.Is(err, fs.ErrExist) || try == 100 {
			return f, err
		}
	}
}

// WriteJSON atomically writes v as indented JSON with a final newline.
func WriteJSON(path string, v any, perm fs.FileMode) error {
	data, err := MarshalIndent(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	return WriteFile(path, data, perm)
}

// MarshalCompact encodes v as one line of JSON without HTML escaping
// ("<" stays "<": what agents read) and without a newline.
func MarshalCompact(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// MarshalIndent encodes v with two-space indentation, no HTML escaping and
// a final newline.
func MarshalIndent(v any) ([]byte, error) {
	var buf []byte
	w := &sliceWriter{b: &buf}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf, nil
}

type sliceWriter struct{ b *[]byte }

func (w *sliceWriter) Write(p []byte) (int, error) {
	*w.b = append(*w.b, p...)
	return len(p), nil
}

// SyncDir fsyncs a directory so a rename or create in it is durable.
func SyncDir(dir string) error {
	d, err := OpenRaw(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return fmt.Errorf("sync dir %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("sync dir %s: %w", dir, err)
	}
	return nil
}

// Lock takes an exclusive cross-process lock (flock) on path, created
// 0600 if needed like every other state file, and returns its release
// function. It blocks until the lock is free.
func Lock(path string) (func(), error) {
	f, err := OpenRaw(path, unix.O_RDWR|unix.O_CREAT, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return lockOpen(f, path, time.Duration(math.MaxInt64))
}

// DirSyncs collects the directories a batch added entries to, so each is
// fsynced once for the whole batch (a group commit) rather than once per
// entry. Safe for concurrent use; the zero value is ready.
type DirSyncs struct {
	mu   sync.Mutex
	dirs map[string]bool
}

// Add records that dir got a new entry.
func (g *DirSyncs) Add(dir string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.dirs == nil {
		g.dirs = map[string]bool{}
	}
	g.dirs[dir] = true
}

// Sync fsyncs every directory added since the last Sync, each once, and
// returns the first error.
func (g *DirSyncs) Sync() error {
	g.mu.Lock()
	dirs := g.dirs
	g.dirs = nil
	g.mu.Unlock()
	var first error
	for dir := range dirs {
		if err := SyncDir(dir); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// FileKind names what a file that is not a regular file is, for errors:
// directory, FIFO, socket, device or special file.
func FileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

// ExpandHome is p with a leading "~" or "~/" taken as the home directory
// ($HOME), as a shell (and pi, for PI_CODING_AGENT_DIR) reads it; any
// other p, or no home directory, leaves p as it is.
func ExpandHome(p string) string {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return p
	}
	return filepath.Join(home, p[1:])
}

// RemoveTree is os.RemoveAll that also removes what a read-only
// directory of the caller's holds (a Go module cache, a chmod 555 build
// output): where a pass is refused, it gives the caller's own directories
// back their owner permissions and tries again (a few passes: a
// directory unreadable before is walked after). Another user's
// directories are left as they are.
func RemoveTree(path string) error {
	uid := os.Geteuid()
	var err error
	for range 4 {
		if err = os.RemoveAll(path); err == nil || !errors.Is(err, fs.ErrPermission) {
			return err
		}
		filepath.WalkDir(path, func(p string, d fs.DirEntry, werr error) error {
			if d == nil || !d.IsDir() {
				return nil
			}
			if info, err := d.Info(); err == nil {
				if st, ok := info.Sys().(*syscall.Stat_t); ok && int(st.Uid) == uid && info.Mode().Perm()&0o700 != 0o700 {
					os.Chmod(p, info.Mode().Perm()|0o700)
				}
			}
			if werr != nil {
				return fs.SkipDir // unreadable until now: the next pass walks it
			}
			return nil
		})
	}
	return err
}
