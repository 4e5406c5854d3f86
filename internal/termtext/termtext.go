// Package termtext makes text safe to print: what a run wrote, or a
// message carried, reaches no terminal or agent as a raw control
// sequence.
package termtext

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Visible is s as text output shows it: control characters (but tab, and
// the \r of a CRLF line end, dropped) and bytes that are not UTF-8
// written as \xNN, and the line and paragraph separators U+2028/U+2029 as
// \u2028/\u2029, so a binary or escape sequence reaches no terminal or
// agent raw (JSON output escapes them itself).
func Visible(s string) string {
	s = strings.TrimSuffix(s, "\r") // a CRLF line's end
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || r != '\t' && unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1, r < 0x80 && r != '\t' && unicode.IsControl(r):
			fmt.Fprintf(&b, "\\x%02x", s[i])
			n = 1
		case r != '\t' && unicode.IsControl(r): // C1 controls
			for _, c := range []byte(s[i : i+n]) {
				fmt.Fprintf(&b, "\\x%02x", c)
			}
		case r == '\u2028' || r == '\u2029':
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// VisibleLines is Visible for each line of a multi-line text: its
// newlines stay.
func VisibleLines(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool {
		return r == utf8.RuneError || r != '\t' && r != '\n' && unicode.IsControl(r) || r == '\u2028' || r == '\u2029'
	}) {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Visible(l)
	}
	return strings.Join(lines, "\n")
}
