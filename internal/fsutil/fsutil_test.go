package fsutil

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplaceModes checks both replacements: the content and mode land,
// an existing file is replaced, and no temporary file is left.
func TestReplaceModes(t *testing.T) {
	for name, write := range map[string]func(string, []byte, fs.FileMode) error{"WriteFile": WriteFile, "WriteSnapshot": WriteSnapshot} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "state.json")
			for _, want := range []string{"{\"n\":1}\n", "{\"n\":2}\n"} {
				if err := write(path, []byte(want), 0o640); err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(path)
				if err != nil || string(got) != want {
					t.Fatalf("content %q, %v; want %q", got, err, want)
				}
			}
			if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o640 {
				t.Fatalf("mode %v, %v; want 0640", st.Mode().Perm(), err)
			}
			ents, _ := os.ReadDir(dir)
			if len(ents) != 1 {
				t.Fatalf("directory holds %d entries, want only state.json", len(ents))
			}
		})
	}
}

// TestReplaceMissingDir fails with the path named and creates nothing.
func TestReplaceMissingDir(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no-such-dir", "state.json")
	for _, write := range []func(string, []byte, fs.FileMode) error{WriteFile, WriteSnapshot} {
		err := write(path, []byte("{}\n"), 0o600)
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), path) {
			t.Fatalf("err = %v, want a not-exist error naming %s", err, path)
		}
	}
}

func TestExpandHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for in, want := range map[string]string{
		"~": home, "~/agent": filepath.Join(home, "agent"), "~other/x": "~other/x",
		"/abs/~/x": "/abs/~/x", "rel": "rel", "": "",
	} {
		if got := ExpandHome(in); got != want {
			t.Errorf("ExpandHome(%q) = %q, want %q", in, got, want)
		}
	}
}
