// Package fsutil holds the file primitives every state file goes through:
// atomic replacement (temp file → fsync → rename → fsync dir) and
// cross-process locks. Nothing else in pi-actors writes a state file
// another way, so a crash never leaves a half-written JSON document.
package fsutil

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/rogpeppe/go-internal/lockedfile"
)

// WriteFile atomically replaces path with data: it writes a temporary file
// in the same directory, fsyncs it, renames it over path and fsyncs the
// directory. On any error path is unchanged and the temporary file is gone.
func WriteFile(path string, data []byte, perm fs.FileMode) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Chmod(perm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("replace %s: %w", path, err)
	}
	return SyncDir(dir)
}

// WriteJSON atomically writes v as indented JSON with a final newline.
func WriteJSON(path string, v any, perm fs.FileMode) error {
	data, err := MarshalIndent(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	return WriteFile(path, data, perm)
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

// Lock takes an exclusive cross-process lock on path (created if needed)
// and returns its release function. It blocks until the lock is free.
func Lock(path string) (func(), error) {
	m := lockedfile.MutexAt(path)
	unlock, err := m.Lock()
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return unlock, nil
}
