package mailbox

import (
	"errors"
	"strings"
	"testing"
)

func TestSplitNode(t *testing.T) {
	for _, c := range []struct{ in, addr, node string }{
		{"run:web@b1", "run:web", "b1"},
		{"run:web", "run:web", ""},
		{" branch:coord/w1@gpu-2 ", "branch:coord/w1", "gpu-2"},
		{"room:coord@a", "room:coord", "a"},
	} {
		a, n, err := SplitNode(c.in)
		if err != nil || a != c.addr || n != c.node {
			t.Errorf("SplitNode(%q) = %q, %q, %v; want %q, %q", c.in, a, n, err, c.addr, c.node)
		}
	}
	for _, bad := range []string{"run:web@", "run:web@a/b", "tool:x@a", "coordinator@a", "session:s@n"} {
		if _, _, err := SplitNode(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("SplitNode(%q): err = %v, want ErrInvalid", bad, err)
		}
	}
	a, n, err := ParseNode("branch:coord/w1@b")
	if err != nil || a.Kind != KindBranch || a.ID != "coord" || a.Branch != "w1" || n != "b" {
		t.Fatalf("ParseNode = %+v %q %v", a, n, err)
	}
}

func TestParseRefusesNodeWithHint(t *testing.T) {
	_, err := Parse("run:web@b")
	if err == nil || !strings.Contains(err.Error(), "names a node") {
		t.Fatalf("Parse(run:web@b) = %v", err)
	}
}
