package fsutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
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

// RemoveTree removes a tree whose directories are read-only or
// unreadable to their owner (a Go module cache), which os.RemoveAll
// cannot when the caller is not root: as root, the test runs the removal
// as another user (uid 65534) owning the tree.
func TestRemoveTreeReadOnlyDirs(t *testing.T) {
	if p := os.Getenv("FSUTIL_REMOVE_TREE"); p != "" {
		if err := RemoveTree(p); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		os.Exit(0)
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the removal as another user (a caller's own read-only directories are what os.RemoveAll cannot remove, and root removes anything)")
	}
	base := t.TempDir()
	for d := base; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		os.Chmod(d, 0o711) // the other user reaches the tree
	}
	parent := filepath.Join(base, "p")
	root := filepath.Join(parent, "tree")
	deep := filepath.Join(root, "cache", "mod", "x")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(deep, "f"), []byte("x"), 0o444)
	filepath.WalkDir(parent, func(p string, _ fs.DirEntry, _ error) error { return os.Lchown(p, 65534, 65534) })
	os.Chmod(deep, 0o555)
	os.Chmod(filepath.Join(root, "cache", "mod"), 0o000)
	os.Chmod(filepath.Join(root, "cache"), 0o555)
	t.Cleanup(func() {
		filepath.WalkDir(base, func(p string, _ fs.DirEntry, _ error) error { os.Chmod(p, 0o755); return nil })
	})
	self, err := os.ReadFile(os.Args[0]) // the build dir is root's alone
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, "fsutil.test")
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^TestRemoveTreeReadOnlyDirs$")
	cmd.Env = append(os.Environ(), "FSUTIL_REMOVE_TREE="+root)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("RemoveTree as uid 65534: %v\n%s", err, out)
	}
	if _, err := os.Lstat(root); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the tree is still there: %v", err)
	}
}
