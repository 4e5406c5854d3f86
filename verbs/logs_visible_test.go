package verbs

import "testing"

// A log line's control characters and non-UTF-8 bytes reach the text as
// \xNN (an escape sequence or a NUL would reach a terminal or an agent
// raw); tabs, other scripts and a CRLF line's \r (dropped) are kept.
func TestVisible(t *testing.T) {
	for in, want := range map[string]string{
		"plain\ttext":             "plain\ttext",
		"\x1b[31mred\x1b[0m":      `\x1b[31mred\x1b[0m`,
		"nul\x00byte":             `nul\x00byte`,
		"bad \xff\xfe utf8":       `bad \xff\xfe utf8`,
		"crlf line\r":             "crlf line",
		"progress 10%\r20%":       `progress 10%\x0d20%`,
		"C1 \u0085 next line":     `C1 \xc2\x85 next line`,
		"héllo wörld ✓ \ufffd ok": "héllo wörld ✓ \ufffd ok",
	} {
		if got := visible(in); got != want {
			t.Errorf("visible(%q) = %q, want %q", in, got, want)
		}
	}
}
