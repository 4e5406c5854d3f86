package template

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/pi-actors/pi-actors/internal/lazyre"
)

// Default bounds of what an agent reads from a foreground command.
const (
	DefaultTailLines = 2000
	DefaultTailBytes = 50 << 10
)

// Tail is the bounded end of an output.
type Tail struct {
	Text       string
	Truncated  bool
	Lines      int   // lines in Text
	TotalLines int   // lines in the whole output
	Bytes      int   // bytes in Text
	TotalBytes int64 // bytes in the whole output
}

// TailOf returns the last maxLines lines of b, then at most the last
// maxBytes bytes of those (never starting inside a UTF-8 character).
func TailOf(b *Buffer, maxLines, maxBytes int) Tail {
	t := Tail{TotalBytes: b.Len(), TotalLines: countLines(b)}
	if t.TotalBytes == 0 {
		return t
	}
	n := min(t.TotalBytes, int64(maxBytes))
	p := make([]byte, n)
	k, _ := b.ReadAt(p, t.TotalBytes-n)
	p = p[:k]
	// Count lines from the end, ignoring the final newline.
	body := p
	if len(body) > 0 && body[len(body)-1] == '\n' {
		body = body[:len(body)-1]
	}
	lines := 0
	for i := len(body) - 1; i >= 0; i-- {
		if body[i] == '\n' {
			lines++
			if lines == maxLines {
				p = p[i+1:]
				break
			}
		}
	}
	for len(p) > 0 && !utf8.RuneStart(p[0]) {
		p = p[1:]
	}
	t.Text = string(p)
	t.Bytes = len(p)
	t.Lines = countLinesIn(p)
	t.Truncated = int64(t.Bytes) < t.TotalBytes
	return t
}

func countLines(b *Buffer) int {
	r := b.Reader()
	buf := make([]byte, 64<<10)
	lines, last := 0, byte('\n')
	for {
		n, err := r.Read(buf)
		if n > 0 {
			lines += bytes.Count(buf[:n], []byte{'\n'})
			last = buf[n-1]
		}
		if err != nil {
			break
		}
	}
	if last != '\n' {
		lines++
	}
	return lines
}

func countLinesIn(p []byte) int {
	if len(p) == 0 {
		return 0
	}
	n := bytes.Count(p, []byte{'\n'})
	if p[len(p)-1] != '\n' {
		n++
	}
	return n
}

// Notice is the line appended to a truncated tail for an agent.
func (t Tail) Notice(fullPath string) string {
	if !t.Truncated {
		return ""
	}
	where := "Full output could not be saved."
	if fullPath != "" {
		where = "Full output saved to: " + fullPath
	}
	return fmt.Sprintf("[Output truncated: %d of %d lines (%s of %s). %s]", t.Lines, t.TotalLines, FormatSize(int64(t.Bytes)), FormatSize(t.TotalBytes), where)
}

// FormatSize prints a byte count as <n>B, <x.x>KB or <x.x>MB.
func FormatSize(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%dB", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1fKB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1fMB", float64(n)/(1024*1024))
}

var unsafeNameRe = lazyre.New(`[^a-z0-9_]+`)

// SafeName is a tool name as part of a file name: lower case, runs of
// anything but letters, digits and _ as one _.
func SafeName(tool string) string { return unsafeNameRe.ReplaceAllString(strings.ToLower(tool), "_") }

// SaveOutput writes the whole of b to <dir>/tool-output-XXXXXX/<tool>-<stream>.txt
// and returns the path.
func SaveOutput(b *Buffer, dir, tool, stream string) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("save output: %w", err)
	}
	sub, err := os.MkdirTemp(dir, "tool-output-")
	if err != nil {
		return "", fmt.Errorf("save output: %w", err)
	}
	name := SafeName(tool) + "-" + SafeName(stream) + ".txt"
	path := filepath.Join(sub, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("save output: %w", err)
	}
	if _, err := io.Copy(f, b.Reader()); err != nil {
		f.Close()
		return "", fmt.Errorf("save output %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("save output %s: %w", path, err)
	}
	return path, nil
}
