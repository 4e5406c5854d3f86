package verbs

import (
	"fmt"
	"strings"

	"github.com/pi-actors/pi-actors/recipes/template"
)

// A failed foreground command's error names its cause: the end of the
// failing command's stderr, after a command line cut short enough not to
// bury it (details.failure.command keeps commandChars of it).
const (
	messageCommandChars = 300
	stderrTailLines     = 20
	stderrTailBytes     = 2000
)

// failureMessage is the error message of a failed foreground command:
// `exit N from <command> (at <path>)`, then, when the command wrote to
// stderr, `; stderr: <text>` — its end (stderrTail: text and t), saying
// where the whole is when cut (wholeStderr: a saved file; "" = only the
// head, in details.failure.stderr).
func failureMessage(f *template.Failure, text string, t template.Tail, wholeStderr string) string {
	msg := fmt.Sprintf("exit %d%s from %s (at %s)", f.Code, killedNote(f.Killed), cutLine(f.Command, messageCommandChars), f.Path)
	if text == "" {
		return msg
	}
	if t.Truncated {
		where := "the whole: " + wholeStderr
		if wholeStderr == "" {
			where = "not saved; its first 1000 bytes are in details.failure.stderr"
		}
		shown := strings.Count(text, "\n") + 1
		msg += fmt.Sprintf("; stderr (last %d of %d lines, %s; %s):\n%s", shown, t.TotalLines, template.FormatSize(t.TotalBytes), where, text)
		return msg
	}
	if !strings.Contains(text, "\n") {
		return msg + "; stderr: " + text
	}
	return msg + "; stderr:\n" + text
}

// stderrTail is the end of a failing command's stderr for its error
// message: the last stderrTailLines lines, at most stderrTailBytes,
// starting on a line (a single longer line keeps its end, after "…"),
// without surrounding blank lines. "" when there is none.
func stderrTail(b *template.Buffer) (string, template.Tail) {
	if b == nil || b.Len() == 0 {
		return "", template.Tail{}
	}
	t := template.TailOf(b, stderrTailLines, stderrTailBytes)
	text := t.Text
	if start := t.TotalBytes - int64(t.Bytes); start > 0 {
		var prev [1]byte
		if n, _ := b.ReadAt(prev[:], start-1); n == 1 && prev[0] != '\n' {
			// Cut inside a line: drop its rest, unless it is all there is.
			if i := strings.IndexByte(text, '\n'); i >= 0 && strings.TrimSpace(text[i+1:]) != "" {
				text = text[i+1:]
			} else {
				text = "…" + text
			}
		}
	}
	text = strings.ToValidUTF8(strings.Trim(text, "\r\n"), "\uFFFD")
	if strings.TrimSpace(text) == "" {
		return "", t
	}
	return text, t
}
