package runs

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"runtime"
	"testing"
)

// A run without probes, max_rss or watch pays nothing for them: its
// leaves write straight to its logs, and no goroutine, timer or watcher
// is started (a watch-only run starts no probe machinery either).
func TestNoHealthStartsNothing(t *testing.T) {
	dir := t.TempDir()
	stdout, _ := OpenLog(filepath.Join(dir, "out"), 0, 0)
	stderr, _ := OpenLog(filepath.Join(dir, "err"), 0, 0)
	for _, h := range []*Health{nil, {}, {Watch: []string{"*.go"}}} {
		s := &supervisor{dir: Dir(dir), meta: &Meta{Health: h}, stdout: stdout, stderr: stderr}
		before := runtime.NumGoroutine()
		out, errw, stop := s.startHealth(context.Background(), 1)
		if out != io.Writer(stdout) || errw != io.Writer(stderr) {
			t.Errorf("health %+v: the leaves' output is wrapped", h)
		}
		if n := runtime.NumGoroutine(); n != before {
			t.Errorf("health %+v: %d goroutines after startHealth, %d before", h, n, before)
		}
		stop()
		if h == nil || len(h.Watch) == 0 {
			stopWatch := s.startWatch()
			if n := runtime.NumGoroutine(); n != before {
				t.Errorf("health %+v: %d goroutines after startWatch, %d before", h, n, before)
			}
			stopWatch()
		}
	}
}

// The line tap hands every whole line to the probes (lines split across
// writes joined, \r\n trimmed, a long line cut at 64 KiB) and passes
// every byte through.
func TestLineTap(t *testing.T) {
	var out bytes.Buffer
	var lines []string
	tap := &lineTap{w: &out, lines: func(b []byte) { lines = append(lines, string(b)) }}
	for _, w := range []string{"he", "llo\r\nwor", "ld\n\npartial"} {
		tap.Write([]byte(w))
	}
	if out.String() != "hello\r\nworld\n\npartial" {
		t.Errorf("passed through %q", out.String())
	}
	if len(lines) != 3 || lines[0] != "hello" || lines[1] != "world" || lines[2] != "" {
		t.Errorf("lines %q", lines)
	}
	lines = nil
	tap.Write(bytes.Repeat([]byte("x"), maxTapLine+10))
	tap.Write([]byte("\n"))
	if len(lines) != 1 || len(lines[0]) != maxTapLine {
		t.Errorf("long line: %d lines, first %d bytes", len(lines), len(lines[0]))
	}
}
