package verbs

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// A bar shows only on the progress writer, only after the delay, and is
// erased by Done; without a writer there is none.
func TestProgressBar(t *testing.T) {
	if bar := (&Env{}).StartProgress("spawn", 10); bar != nil {
		t.Fatal("a bar without a progress writer")
	}
	var nilBar *ProgressBar
	nilBar.Add(1) // no-ops
	nilBar.Done()

	var out bytes.Buffer
	env := &Env{Progress: &out, Width: 60}
	bar := env.StartProgress("spawn 200", 200)
	bar.Add(10)
	if out.Len() != 0 {
		t.Fatalf("drawn before the delay: %q", out.String())
	}
	bar.start = time.Now().Add(-2 * time.Second)
	bar.Add(40)
	got := out.String()
	if !strings.HasPrefix(got, "\r\x1b[K") || !strings.Contains(got, "spawn 200 [") || !strings.Contains(got, "] 50/200 2s") {
		t.Fatalf("bar: %q", got)
	}
	line := strings.TrimPrefix(got, "\r\x1b[K")
	if n := len([]rune(line)); n > 60 {
		t.Fatalf("bar wider than 60: %d %q", n, line)
	}
	if strings.Count(line, "=") != 7 { // 50/200 of a 30-wide bar
		t.Errorf("fill: %q", line)
	}
	bar.Add(150) // the last step always draws
	if !strings.Contains(out.String(), "200/200") {
		t.Errorf("final: %q", out.String())
	}
	bar.Done()
	if !strings.HasSuffix(out.String(), "\r\x1b[K") {
		t.Errorf("not erased: %q", out.String())
	}
}
