package verbs

import "testing"

func TestQualifyRun(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"run=w1 next=inspect_target=run:w1_view=tail|message_to=run:w1_type=control.kill", "run=w1 next=inspect_target=run:w1@b_view=tail|message_to=run:w1@b_type=control.kill"},
		{"run:w1 ended; run:w10 too; run:w1@c stays", "run:w1@b ended; run:w10 too; run:w1@c stays"},
		{"see run:w1", "see run:w1@b"},
		{"run:w1_x is another run", "run:w1_x is another run"},
	} {
		if got := QualifyRun(c.in, "w1", "b"); got != c.want {
			t.Errorf("QualifyRun(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestSplitAddress(t *testing.T) {
	for _, c := range []struct{ in, addr, node string }{
		{"web@b", "web", "b"}, {"run:web@b", "run:web", "b"}, {"web", "web", ""}, {"branch:c/w1@a", "branch:c/w1", "a"},
	} {
		a, n, err := SplitAddress(c.in)
		if err != nil || a != c.addr || n != c.node {
			t.Errorf("SplitAddress(%q) = %q %q %v", c.in, a, n, err)
		}
	}
	if _, _, err := SplitAddress("session:x@b"); err == nil {
		t.Error("session:x@b: want an error")
	}
}
