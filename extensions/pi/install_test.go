package piext

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

func extEntries(t *testing.T, agent string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(agent, "extensions"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestInstallWritesTheExtension(t *testing.T) {
	agent := t.TempDir()
	dir, err := Install(agent)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(agent, "extensions", "pi-actors"); dir != want || Dir(agent) != want {
		t.Fatalf("dir = %s, Dir = %s, want %s", dir, Dir(agent), want)
	}
	got, err := os.ReadFile(filepath.Join(dir, "index.ts"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, Source()) || !bytes.Contains(got, []byte("export default async function piActors")) {
		t.Fatalf("index.ts is not the embedded source (%d bytes)", len(got))
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sources, _ := filepath.Glob("*.ts")
	if want := append([]string{marker}, sources...); !slices.Equal(names, want) {
		t.Fatalf("extension dir holds %v, want %v", names, want)
	}
	for _, name := range sources {
		if got, want := readFile(t, filepath.Join(dir, name)), readFile(t, name); !bytes.Equal(got, want) {
			t.Errorf("%s is not the source", name)
		}
	}
	// No stage is left where pi looks.
	if names := extEntries(t, agent); !slices.Equal(names, []string{"pi-actors"}) {
		t.Fatalf("extensions/ holds %v", names)
	}
}

func TestInstallReplacesAnEarlierInstallWhole(t *testing.T) {
	agent := t.TempDir()
	dir, err := Install(agent)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "index.ts"), []byte("// old version\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "leftover.ts"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(agent); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "index.ts"))
	if !bytes.Equal(got, Source()) {
		t.Fatal("index.ts was not replaced")
	}
	if _, err := os.Stat(filepath.Join(dir, "leftover.ts")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a file of the old installation survived: %v", err)
	}
	if names := extEntries(t, agent); !slices.Equal(names, []string{"pi-actors"}) {
		t.Fatalf("extensions/ holds %v", names)
	}
}

func TestForeignDirectoryIsLeftAlone(t *testing.T) {
	agent := t.TempDir()
	dir := Dir(agent)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	mine := []byte("// a hand-written extension\n")
	if err := os.WriteFile(filepath.Join(dir, "index.ts"), mine, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(agent); !errors.Is(err, ErrForeign) {
		t.Fatalf("Install over a foreign dir: %v, want ErrForeign", err)
	}
	if _, err := Uninstall(agent); !errors.Is(err, ErrForeign) {
		t.Fatalf("Uninstall of a foreign dir: %v, want ErrForeign", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "index.ts")); !bytes.Equal(got, mine) {
		t.Fatal("the foreign extension was changed")
	}
	// A symlink there (say, to a development checkout) is foreign too.
	link := t.TempDir()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(link, dir); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(agent); !errors.Is(err, ErrForeign) {
		t.Fatalf("Install over a symlink: %v, want ErrForeign", err)
	}
}

func TestUninstallRemovesOnlyTheExtension(t *testing.T) {
	agent := t.TempDir()
	if removed, err := Uninstall(agent); err != nil || removed {
		t.Fatalf("Uninstall with nothing installed: removed=%v, %v", removed, err)
	}
	if _, err := Install(agent); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(agent, "extensions", "other.ts")
	if err := os.WriteFile(other, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if removed, err := Uninstall(agent); err != nil || !removed {
		t.Fatalf("Uninstall: removed=%v, %v", removed, err)
	}
	if names := extEntries(t, agent); !slices.Equal(names, []string{"other.ts"}) {
		t.Fatalf("extensions/ holds %v after Uninstall", names)
	}
	if removed, err := Uninstall(agent); err != nil || removed {
		t.Fatalf("second Uninstall: removed=%v, %v", removed, err)
	}
}

func TestInstallRemovesStaleStages(t *testing.T) {
	agent := t.TempDir()
	ext := filepath.Join(agent, "extensions")
	stale := filepath.Join(ext, installStage+"crashed")
	fresh := filepath.Join(ext, uninstallStage+"running")
	for _, d := range []string{stale, fresh} {
		if err := os.MkdirAll(filepath.Join(d, Name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * staleAfter)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(agent); err != nil {
		t.Fatal(err)
	}
	if names := extEntries(t, agent); !slices.Equal(names, []string{filepath.Base(fresh), "pi-actors"}) {
		t.Fatalf("extensions/ holds %v, want the fresh stage and pi-actors", names)
	}
}

func TestEmptyAgentDirIsAnError(t *testing.T) {
	if _, err := Install(""); err == nil {
		t.Fatal("Install(\"\") succeeded")
	}
	if _, err := Uninstall(""); err == nil {
		t.Fatal("Uninstall(\"\") succeeded")
	}
}

// Installs and uninstalls at once do not fail each other ("file exists"
// from one's swap meeting another's), and while installs replace an
// installed extension pi never finds it missing (an atomic exchange).
func TestInstallConcurrent(t *testing.T) {
	agent := t.TempDir()
	if _, err := Install(agent); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(Dir(agent), "index.ts")
	stop := make(chan struct{})
	missing := make(chan string, 1)
	go func() {
		for {
			select {
			case <-stop:
				close(missing)
				return
			default:
			}
			if _, err := os.Stat(index); err != nil {
				missing <- err.Error()
				close(missing)
				return
			}
		}
	}()
	errs := make(chan error, 64)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				if _, err := Install(agent); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	close(errs)
	for err := range errs {
		t.Errorf("concurrent install: %v", err)
	}
	if m, ok := <-missing; ok {
		t.Errorf("the extension was missing during a reinstall: %s", m)
	}
	if names := extEntries(t, agent); !slices.Equal(names, []string{"pi-actors"}) {
		t.Fatalf("extensions/ holds %v", names)
	}
	var wg2 sync.WaitGroup
	removed := make(chan bool, 4)
	for range 4 {
		wg2.Add(1)
		go func() {
			defer wg2.Done()
			r, err := Uninstall(agent)
			if err != nil {
				t.Errorf("concurrent uninstall: %v", err)
			}
			removed <- r
		}()
	}
	wg2.Wait()
	close(removed)
	n := 0
	for r := range removed {
		if r {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d uninstalls removed the extension, want 1", n)
	}
}
