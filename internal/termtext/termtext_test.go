package termtext

import "testing"

// Control characters and bytes that are not UTF-8 reach the text as
// \xNN (an escape sequence or a NUL would reach a terminal or an agent
// raw), the line and paragraph separators as \u2028/\u2029; tabs, other
// scripts and a CRLF line's \r (dropped) are kept.
func TestVisible(t *testing.T) {
	for in, want := range map[string]string{
		"plain\ttab":                "plain\ttab",
		"x\x1b[31mRED":              `x\x1b[31mRED`,
		"a\x1b[2J":                  `a\x1b[2J`,
		"crlf\r":                    "crlf",
		"bell\a\x00":                `bell\x07\x00`,
		"c1\u009b2J":                `c1\xc2\x9b2J`,
		"bad\xffbyte":               `bad\xffbyte`,
		"sep\u2028para\u2029end":    `sep\u2028para\u2029end`,
		"é and 漢字 stay as they are": "é and 漢字 stay as they are",
		"\x1b[31mred\x1b[0m":        `\x1b[31mred\x1b[0m`,
		"bad \xff\xfe utf8":         `bad \xff\xfe utf8`,
		"progress 10%\r20%":         `progress 10%\x0d20%`,
		"C1 \u0085 next line":       `C1 \xc2\x85 next line`,
		"héllo wörld ✓ \ufffd ok":   "héllo wörld ✓ \ufffd ok",
	} {
		if got := Visible(in); got != want {
			t.Errorf("Visible(%q) = %q, want %q", in, got, want)
		}
	}
	if got := VisibleLines("one\x1b[2J\ntwo\n"); got != "one\\x1b[2J\ntwo\n" {
		t.Errorf("VisibleLines: %q", got)
	}
}
