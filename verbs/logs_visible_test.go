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

// In --json a line keeps its characters (JSON escapes control ones), but a
// line with bytes that are not UTF-8 is shown as the text shows it: JSON
// would turn them into U+FFFD and lose them.
func TestJSONSafe(t *testing.T) {
	in := []string{"\x1b[31mred", "bin\x01\xff", "ok ✓"}
	got := jsonSafe(in)
	if got[0] != in[0] || got[1] != `bin\x01\xff` || got[2] != in[2] || in[1] != "bin\x01\xff" {
		t.Errorf("jsonSafe(%q) = %q", in, got)
	}
	if clean := []string{"a", "b"}; &jsonSafe(clean)[0] != &clean[0] {
		t.Error("clean lines are copied")
	}
}
