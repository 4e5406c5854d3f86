package graph

import (
	"slices"
	"testing"
)

// patternScopes bounds an atom's relink to where its patterns can match:
// a literal pattern's file, a glob's literal leading directory, all of
// the root for a glob in the first segment; scopes inside another go.
func TestPatternScopes(t *testing.T) {
	for _, c := range []struct {
		pats, want []string
	}{
		{[]string{"src/pay/**"}, []string{"src/pay/"}},
		{[]string{"src/a.go", "src/b/*.go", "src/b/c/**", "src/b.go"}, []string{"src/a.go", "src/b.go", "src/b/"}},
		{[]string{"src/*.go", "lib/x.go", "**/y.go"}, []string{""}},
		{[]string{"a/{b,c}/*.go", "a.go"}, []string{"a.go", "a/"}},
	} {
		if got := patternScopes(c.pats); !slices.Equal(got, c.want) {
			t.Errorf("%q: %q, want %q", c.pats, got, c.want)
		}
	}
}
