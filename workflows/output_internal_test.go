package workflows

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An upstream output reads back across a log rotation: the last
// OutputMax bytes of the rotated file and the current one, starting at a
// line (it read the current file only: 243 of 1,268 bytes kept).
func TestReadOutputAcrossRotation(t *testing.T) {
	dir := t.TempDir()
	cur, old := filepath.Join(dir, "stdout.log"), filepath.Join(dir, "stdout.log.1")
	if err := os.WriteFile(old, []byte("a1\na2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cur, []byte("b1\nb2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := ReadOutput(old, cur); got != "a1\na2\nb1\nb2" {
		t.Fatalf("across a rotation: %q", got)
	}
	if got := ReadOutput(cur); got != "b1\nb2" {
		t.Fatalf("one file: %q", got)
	}
	// More than OutputMax in all: the newest OutputMax bytes, from a line.
	line := strings.Repeat("x", 99) + "\n"
	big := strings.Repeat(line, OutputMax/100+10)
	if err := os.WriteFile(old, []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	got := ReadOutput(old, cur)
	if !strings.HasSuffix(got, "x\nb1\nb2") || len(got) > OutputMax || !strings.HasPrefix(got, "xxx") || strings.Count(got, "\n")+1 != len(strings.Split(got, "\n")) {
		t.Fatalf("over OutputMax: %d bytes, starts %q, ends %q", len(got), got[:10], got[len(got)-10:])
	}
	if first, _, _ := strings.Cut(got, "\n"); len(first) != 99 {
		t.Fatalf("the output does not start at a line: its first line is %d bytes", len(first))
	}
	if got := ReadOutput(filepath.Join(dir, "none")); got != "" {
		t.Fatalf("no file: %q", got)
	}
}
