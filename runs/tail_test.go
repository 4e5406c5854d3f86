package runs_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-actors/pi-actors/runs"
)

// The tail of a log whose last MiB is one line (output that ran on
// without a newline) shows that line's end, marked cut; it showed nothing.
// A line cut by the window among others is still dropped.
func TestTailLinesOneLongLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, tail := range map[string]string{"no newline": "", "newline": "\n"} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".log")
		if err := os.WriteFile(path, []byte("first\n"+strings.Repeat("x", 3<<20)+"END"+tail), 0o600); err != nil {
			t.Fatal(err)
		}
		lines := runs.TailLines(path, 40)
		if len(lines) != 1 || !strings.HasPrefix(lines[0], "…x") || !strings.HasSuffix(lines[0], "xEND") {
			t.Errorf("%s: %d lines, want one: the long line's end after …", name, len(lines))
		}
	}
	path := filepath.Join(dir, "mixed.log")
	if err := os.WriteFile(path, []byte(strings.Repeat("y", 3<<20)+"\nlast 1\nlast 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if lines := runs.TailLines(path, 40); len(lines) != 2 || lines[0] != "last 1" || lines[1] != "last 2" {
		t.Errorf("mixed: %d lines, want the two whole ones", len(lines))
	}
}
