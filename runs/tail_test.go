package runs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-actors/pi-actors/runs"
)

// The tail of a log whose last MiB is one line (output that ran on
// without a newline) shows that line's end, marked cut; it showed nothing.
// A line cut by the window among others shows its end after "…" too.
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
	if lines := runs.TailLines(path, 40); len(lines) != 3 || !strings.HasPrefix(lines[0], "…y") || lines[1] != "last 1" || lines[2] != "last 2" {
		t.Errorf("mixed: %d lines, want the cut one's end after … and the two whole ones", len(lines))
	}
}

// The line that straddles the 1 MiB window is kept as "…" and its end
// (docs/cli.md): logs and view=tail dropped it.
func TestTailKeepsTheStraddlingLine(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "stdout.log")
	data := strings.Repeat("x", 600<<10) + "\n" + strings.Repeat("y", 600<<10) + "YEND\nlast\n"
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	lines, cut := runs.Tail(path, 10)
	if len(lines) != 3 || !cut {
		t.Fatalf("got %d lines (cut=%v), want 3: the straddling line's end, then the two whole ones", len(lines), cut)
	}
	if !strings.HasPrefix(lines[0], "…x") || !strings.HasSuffix(lines[0], "x") || len(lines[0]) >= 600<<10 {
		t.Errorf("first line %q…: want the x line's end after …", lines[0][:min(8, len(lines[0]))])
	}
	if !strings.HasSuffix(lines[1], "yYEND") || lines[2] != "last" {
		t.Errorf("then %q…, %q; want the y line whole and last", lines[1][:8], lines[2])
	}
	// logs -f starts with the same lines (a follower's first read).
	got, fl := runs.FollowTail(path, 10)
	fl.Close()
	if len(got) != 3 || !strings.HasPrefix(got[0], "…x") {
		t.Errorf("follow: %d lines, want 3, the first after …", len(got))
	}
}

// A tail asked for more lines than the last MiB of a log holds stops
// there and says so (cut): it joined on the rotated file's lines after a
// gap of the current file's unread ones. A small current file still
// joins on its rotated one, whole.
func TestTailStopsAtTheWindow(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "stdout.log")
	var old, cur strings.Builder
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&old, "old-%d\n", i)
	}
	for i := 1; i <= 30000; i++ { // ~2.9 MB
		fmt.Fprintf(&cur, "new-%05d %s\n", i, strings.Repeat("n", 86))
	}
	os.WriteFile(path+".1", []byte(old.String()), 0o600)
	os.WriteFile(path, []byte(cur.String()), 0o600)
	lines, cut := runs.Tail(path, 100000)
	if !cut || len(lines) == 0 || len(lines) >= 30000 {
		t.Fatalf("cut=%v, %d lines; want a cut tail of the last MiB", cut, len(lines))
	}
	if lines[len(lines)-1] != "new-30000 "+strings.Repeat("n", 86) || strings.HasPrefix(lines[0], "old-") {
		t.Errorf("lines %q … %q: want the newest, none of the rotated file", lines[0][:9], lines[len(lines)-1][:9])
	}
	os.WriteFile(path, []byte("new-1\nnew-2\n"), 0o600)
	lines, cut = runs.Tail(path, 100)
	if cut || len(lines) != 12 || lines[0] != "old-1" || lines[11] != "new-2" {
		t.Errorf("small log: cut=%v %q, want old-1…old-10 new-1 new-2", cut, lines)
	}
}

// A window that starts exactly at a line's start keeps that line whole
// (no "…" in front of it).
func TestTailWindowAtALineStart(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "stdout.log")
	line := strings.Repeat("z", 1<<20-1) + "\n" // exactly the window
	if err := os.WriteFile(path, []byte("before\n"+line), 0o600); err != nil {
		t.Fatal(err)
	}
	if lines := runs.TailLines(path, 5); len(lines) != 1 || lines[0] != strings.TrimSuffix(line, "\n") {
		t.Errorf("got %d lines, the first %q…; want the whole line, no mark", len(lines), lines[0][:min(5, len(lines[0]))])
	}
}
