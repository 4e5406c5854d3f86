package actors

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-actors/pi-actors/internal/config"
)

// TestLiveSettings: an edit of pi-actors.toml reaches the kernel's
// settings on the next read; a version that does not load leaves them as
// they were and says why; a removed file is the defaults.
func TestLiveSettings(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, config.FileName)
	write := func(s string) {
		t.Helper()
		// Through a rename, as editors and config tools write: a new inode.
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	write("[exec]\nkill_grace_ms = 300\n")
	c, err := config.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	l := newLiveSettings(dir, c)
	if got := l.get().Exec.KillGraceMS; got != 300 {
		t.Fatalf("kill_grace_ms = %d, want 300", got)
	}
	write("[exec]\nkill_grace_ms = 700\n")
	if got := l.get().Exec.KillGraceMS; got != 700 {
		t.Fatalf("after an edit kill_grace_ms = %d, want 700", got)
	}
	if err := l.loadError(); err != nil {
		t.Fatalf("loadError = %v", err)
	}
	write("[exec]\nkill_grace_ms = \"x\"\n")
	if got := l.get().Exec.KillGraceMS; got != 700 {
		t.Fatalf("after a broken edit kill_grace_ms = %d, want the 700 before it", got)
	}
	if err := l.loadError(); err == nil || !strings.Contains(err.Error(), "kill_grace_ms") {
		t.Fatalf("loadError = %v, want one naming kill_grace_ms", err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if got, want := l.get().Exec.KillGraceMS, config.Defaults().Exec.KillGraceMS; got != want {
		t.Fatalf("with no file kill_grace_ms = %d, want the default %d", got, want)
	}
	if err := l.loadError(); err != nil {
		t.Fatalf("loadError with no file = %v", err)
	}
}
