package rooms

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pi-actors/pi-actors/internal/lazyre"
	"github.com/pi-actors/pi-actors/internal/termtext"
	"github.com/pi-actors/pi-actors/mailbox"
)

// Output bounds (PARITY A6).
const (
	DefaultLines      = 40  // entries a view shows unless told otherwise
	PreviewChars      = 320 // body_preview of the previews view
	CompactChars      = 160 // one token of a compact text line
	maxDiagnostics    = 5   // diagnostics listed by the status view
	diagnosticRawSpan = 80  // bytes of a malformed line quoted in a diagnostic
)

var spaces = lazyre.New(`\s+`)

// compactPreview makes a value one token of a text line: whitespace runs
// become "_", every other control character is escaped
// (termtext.Visible: \x1b, \u2028), and past CompactChars it is cut to
// 159 characters and "…".
func compactPreview(s string) string {
	return cut(termtext.Visible(spaces.ReplaceAllString(s, "_")), CompactChars)
}

// bodyPreview is a body as one line: a string as is, anything else as
// JSON, whitespace collapsed to single spaces and trimmed, control
// characters escaped, cut past PreviewChars.
func bodyPreview(body any) string {
	return cut(termtext.Visible(strings.TrimSpace(spaces.ReplaceAllString(bodyString(body), " "))), PreviewChars)
}

// bodyString is a body as text: a string as is, anything else as compact
// JSON ("" for no body).
func bodyString(body any) string {
	switch b := body.(type) {
	case nil:
		return ""
	case string:
		return b
	case json.RawMessage:
		return string(b)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(body); err != nil {
		return fmt.Sprint(body)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// cut shortens s to max characters, the last being "…".
func cut(s string, max int) string {
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}

func defaultLines(n int) int {
	if n <= 0 {
		return DefaultLines
	}
	return n
}

// tailRecords converts the last n lines of a JSONL file with conv and
// counts the malformed ones among them, and the file's lines in all (a
// view's corrupted= and total=).
func tailRecords[T any](path string, n int, conv func(map[string]any) T) (recs []T, corrupted, total int, err error) {
	lines, err := mailbox.Tail(path, n)
	if err != nil {
		return nil, 0, 0, err
	}
	recs = []T{}
	for _, l := range lines {
		if l.Err != nil {
			corrupted++
			continue
		}
		recs = append(recs, conv(l.Value))
	}
	total, err = mailbox.CountLines(path)
	return recs, corrupted, total, err
}

// JoinWithMore joins text lines and, when the view showed fewer lines of
// the file than it has, says where the rest is (every bounded view's note).
func JoinWithMore(out []string, shown, total int, file string) string {
	if total > shown && file != "" {
		out = append(out, fmt.Sprintf("(last %d of %d lines; lines=%d shows more; all in %s)", shown, total, min(total, 4*max(shown, DefaultLines)), file))
	}
	return strings.Join(out, "\n")
}

// decodeMap decodes a JSON object with exact numbers.
func decodeMap(b []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}
