package runs_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/runs"
)

// checkLogFiles checks a capped log's files against what was written
// (the whole output: keep is large enough that nothing rotated out): read
// oldest first they are the output; every file but the newest ends a
// line (a file begins where the one before it ends, so every file starts
// a line); and a file passes maxBytes only by its last line (begun while
// it fit, or alone in the file).
func checkLogFiles(t *testing.T, path string, maxBytes int64, want []byte) {
	t.Helper()
	files := runs.LogFiles(path)
	var all []byte
	for i, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(p)
		if i < len(files)-1 && (len(b) == 0 || b[len(b)-1] != '\n') {
			t.Errorf("%s does not end a line: ends %q", name, tailOf(b))
		}
		if before := beforeLastLine(b); int64(len(before)) > maxBytes {
			t.Errorf("%s holds %d bytes before its last line, past the cap %d", name, len(before), maxBytes)
		}
		all = append(all, b...)
	}
	if !bytes.Equal(all, want) {
		t.Fatalf("the files (%d of them, %d bytes) are not the output written (%d bytes)", len(files), len(all), len(want))
	}
}

// beforeLastLine is b up to the start of its last line.
func beforeLastLine(b []byte) []byte {
	return b[:bytes.LastIndexByte(bytes.TrimSuffix(b, []byte{'\n'}), '\n')+1]
}

func tailOf(b []byte) string {
	return string(b[max(0, len(b)-20):])
}

// numbered returns lines "<i> xxx…\n" of about width bytes, from first on.
func numbered(first, n, width int) []byte {
	var b []byte
	for i := first; i < first+n; i++ {
		line := strconv.Itoa(i) + " "
		b = append(b, line...)
		b = append(b, strings.Repeat("x", max(0, width-len(line)-1))...)
		b = append(b, '\n')
	}
	return b
}

// A capped log keeps every line whole in one file and no file past the
// cap but by its last line, whatever the writes: a first write into an empty file several
// times the cap, a write of many lines into a file partly full, a line
// longer than the cap (a file of its own), writes that end inside a line.
func TestLogRotationWholeLinesSmallCap(t *testing.T) {
	t.Parallel()
	const maxBytes = 1024
	cases := []struct {
		name   string
		writes [][]byte
	}{
		{"first write 5x the cap into an empty file", [][]byte{numbered(0, 50, 100)}},
		{"many lines into a file partly full", [][]byte{numbered(0, 3, 100), numbered(3, 200, 100), numbered(203, 1, 100)}},
		{"a line longer than the cap", [][]byte{numbered(0, 3, 100), numbered(3, 1, 3000), numbered(4, 3, 100)}},
		{"a line longer than the cap first", [][]byte{numbered(0, 1, 2500), numbered(1, 30, 100)}},
		{"a write that does not end a line", func() [][]byte {
			b := numbered(0, 60, 100)
			return [][]byte{b[:950], b[950:1050], b[1050:4321], b[4321:]}
		}()},
		{"the output ends without a newline", [][]byte{numbered(0, 25, 100), []byte("last words")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "stdout.log")
			l, err := runs.OpenLog(path, maxBytes, 60)
			if err != nil {
				t.Fatal(err)
			}
			var want []byte
			for _, w := range c.writes {
				if n, err := l.Write(w); err != nil || n != len(w) {
					t.Fatalf("write %d bytes: %d, %v", len(w), n, err)
				}
				want = append(want, w...)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			checkLogFiles(t, path, maxBytes, want)
		})
	}
}

// Writes cut anywhere (as a supervisor's pipe reads cut them) into a log
// with a small cap: the same guarantees over many rotations.
func TestLogRotationRandomChunksSmallCap(t *testing.T) {
	t.Parallel()
	const maxBytes = 1024
	path := filepath.Join(t.TempDir(), "stdout.log")
	l, err := runs.OpenLog(path, maxBytes, 60)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var out []byte
	for i := 0; len(out) < 50*maxBytes; i++ {
		out = append(out, numbered(i, 1, 20+rng.IntN(200))...)
	}
	for rest := out; len(rest) > 0; {
		k := min(len(rest), 1+rng.IntN(3000))
		if _, err := l.Write(rest[:k]); err != nil {
			t.Fatal(err)
		}
		rest = rest[k:]
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	checkLogFiles(t, path, maxBytes, out)
}

// A line the writer has not finished is on disk at once (a prompt, a
// progress bar; nothing read is held back where a kill would lose it), and
// its end goes into the same file even past the cap.
func TestLogWritesOutUnfinishedLine(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "stdout.log")
	l, err := runs.OpenLog(path, 1024, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	fmt.Fprint(l, "line 1\nPassword: ")
	if b, _ := os.ReadFile(path); string(b) != "line 1\nPassword: " {
		t.Fatalf("the unfinished line is not written out: the file holds %q", b)
	}
	end := strings.Repeat("s", 1100) + "\n" // past the 1024-byte cap
	fmt.Fprint(l, end)
	if b, _ := os.ReadFile(path); string(b) != "line 1\nPassword: "+end {
		t.Fatalf("the file holds %q", tailOf(b))
	}
	fmt.Fprint(l, "next\n")
	if b, _ := os.ReadFile(path); string(b) != "next\n" {
		t.Fatalf("the next line does not begin a new file: %q", tailOf(b))
	}
}

// Output that runs on without a newline is cut at 8 × the cap (at least
// 1 MiB): the only place a line spans two files.
func TestLogCutsEndlessLine(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "stdout.log")
	l, err := runs.OpenLog(path, 1024, 3)
	if err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte{'.'}, 32<<10)
	for range 40 { // 1.25 MiB, no newline
		if _, err := l.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	files := runs.LogFiles(path)
	if len(files) != 2 {
		t.Fatalf("files %v, want the cut line's two", files)
	}
	if st, _ := os.Stat(files[0]); st.Size() != 1<<20 {
		t.Errorf("%s holds %d bytes, want 1 MiB", files[0], st.Size())
	}
	if st, _ := os.Stat(files[1]); st.Size() != 40*32<<10-1<<20 {
		t.Errorf("%s holds %d bytes, want the rest", files[1], st.Size())
	}
}

// A real run printing 100-byte lines as fast as it can into logs capped
// at 1 KiB (the smallest runs.log_max_bytes): every file kept holds whole
// lines, none passes the cap but by its last line (a pipe read ends inside
// a line: its end follows it into its file), and together they are the
// newest output in order.
func TestSupervisorRotatesSmallCap(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	const total, maxBytes, keep = 3000, 1024, 4
	sp := spec(agent, "smallcap", "seq -f %100.0f 1 "+strconv.Itoa(total), nil)
	sp.Limits.LogMaxBytes, sp.Limits.LogKeep = maxBytes, keep
	r := start(t, agent, sp)
	if res := r.wait(60 * time.Second); res.Status != runs.StatusDone {
		t.Fatalf("status %s: %+v", res.Status, res)
	}
	path := r.dir.Path(runs.StdoutLog)
	checkSequence(t, path, total)
	files := runs.LogFiles(path)
	if len(files) != keep+1 {
		t.Errorf("%d files, want the current one and %d rotated", len(files), keep)
	}
	var size int64
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		size += int64(len(b))
		if len(beforeLastLine(b)) > maxBytes || len(b) == 0 || b[len(b)-1] != '\n' {
			t.Errorf("%s: %d bytes ending %q: want whole lines within %d bytes but the last", filepath.Base(p), len(b), tailOf(b), maxBytes)
		}
	}
	const line = 101 // seq's lines
	if size > (keep+1)*(maxBytes+line) {
		t.Errorf("the files hold %d bytes, past (log_keep+1) × (log_max_bytes + a line) = %d", size, (keep+1)*(maxBytes+line))
	}
}

// A write that fails part way (the rotation between two lines cannot
// create the new file) reports the bytes it wrote, as io.Writer says: the
// lines before the failure are in the file and counted.
func TestLogWriteCountsBytesBeforeAnError(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	l, err := runs.OpenLog(filepath.Join(dir, "stdout.log"), 64, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := fmt.Fprint(l, "first\n"); err != nil {
		t.Fatal(err)
	}
	// The directory goes: the open file takes writes, a rotation cannot
	// create the next file.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	p := []byte("second line\n" + strings.Repeat("x", 80) + "\n")
	n, err := l.Write(p)
	if err == nil || n != len("second line\n") {
		t.Fatalf("Write = %d, %v; want %d (the line before the failed rotation) and an error", n, err, len("second line\n"))
	}
}
