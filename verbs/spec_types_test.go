package verbs_test

import (
	"strings"
	"testing"

	"github.com/pi-actors/pi-actors/verbs"
)

// A value that does not fit its parameter is an invalid-data error that
// names the parameter, whichever type decodes it (the lenient ones too).
func TestDecodeErrorNamesTheParameter(t *testing.T) {
	for _, tc := range []struct {
		verb   string
		params map[string]any
		want   string
	}{
		{"message", map[string]any{"to": "run:w", "type": "a.b", "ttl_ms": "abc"}, `ttl_ms: expected an integer, got "abc"`},
		{"message", map[string]any{"to": "run:w", "type": "a.b", "summary": map[string]any{"x": 1}}, "summary: expected a string, got an object"},
		{"exec", map[string]any{"template": "echo hi", "stdin": "maybe"}, `stdin: expected true or false, got "maybe"`},
		{"spawn", map[string]any{"template": "sleep 1", "watch": 5}, "watch: expected globs as a string or an array of strings"},
	} {
		_, err := verbs.Find(tc.verb).DecodeCLI(nil, tc.params)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v: error %v, want it to contain %q", tc.verb, tc.params, err, tc.want)
			continue
		}
		if code := verbs.Classify(err).Exit; code != 65 {
			t.Errorf("%s %v: exit %d, want 65", tc.verb, tc.params, code)
		}
	}
}
