package vector

import (
	"strings"
	"testing"
)

// TestNoMatchHint: with a type filter the hint points at the filter, not
// at the words (a type=function search finds nothing where type=method
// would); without one it points at other domains or search_all.
func TestNoMatchHint(t *testing.T) {
	if h := noMatchHint([]string{"code"}, nil, "function"); !strings.Contains(h, "nothing of type function in code matches; the same search without type=") {
		t.Errorf("with a type: %q", h)
	}
	if h := noMatchHint([]string{"code"}, nil, ""); h != "nothing in code matches; try search_all" {
		t.Errorf("without: %q", h)
	}
	if h := noMatchHint([]string{"code"}, []string{"history"}, ""); !strings.Contains(h, "search domain=history") {
		t.Errorf("also in history: %q", h)
	}
}
