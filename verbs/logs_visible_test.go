package verbs

import "testing"

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
