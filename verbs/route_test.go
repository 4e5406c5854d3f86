package verbs

import (
	"encoding/json"
	"testing"
)

func TestQualifyRun(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"run=w1 next=inspect_target=run:w1_view=tail|message_to=run:w1_type=control.kill", "run=w1 next=inspect_target=run:w1@b_view=tail|message_to=run:w1@b_type=control.kill"},
		{"run:w1 ended; run:w10 too; run:w1@c stays", "run:w1@b ended; run:w10 too; run:w1@c stays"},
		{"see run:w1", "see run:w1@b"},
		{"run:w1_x is another run", "run:w1_x is another run"},
		{"to=branch:w1/a type=t next=inspect_target=branch:w1/a_view=mailbox", "to=branch:w1/a@b type=t next=inspect_target=branch:w1/a@b_view=mailbox"},
		{"room:w1 and room:w10", "room:w1@b and room:w10"},
		// A placeholder branch stays as it is; a listing's from= is qualified.
		{"see branch:w1/<branch>", "see branch:w1/<branch>"},
		{"id=m3 from=run:w1 to=branch:w1/x", "id=m3 from=run:w1@b to=branch:w1/x@b"},
	} {
		if got := QualifyRun(c.in, "w1", "b"); got != c.want {
			t.Errorf("QualifyRun(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestQualifyResult: a JSON answer from another node names the node in
// its run addresses (next actions too) and in "node"; what it cannot read
// comes back untouched.
func TestQualifyResult(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"address":"run:w1","next_actions":["inspect target=run:w1 view=tail"]}`, `{"address":"run:w1@b","next_actions":["inspect target=run:w1@b view=tail"],"node":"b"}`},
		{`{"address":"run:w1@b","node":"b"}`, `{"address":"run:w1@b","node":"b"}`},
		{`["run:w1"]`, `["run:w1"]`},
		{`{"broken"`, `{"broken"`},
	} {
		if got := string(QualifyResult(json.RawMessage(c.in), "w1", "b")); got != c.want {
			t.Errorf("QualifyResult(%s) = %s, want %s", c.in, got, c.want)
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

// An error's from=<address> values stay bare (from= refuses @node); the
// rest of it names the node.
func TestQualifyErrorKeepsFromValues(t *testing.T) {
	e := QualifyError(&Error{Message: "message to room:w1 requires from=<actor address>: from=run:w1 or from=branch:w1/<branch>; got run:w1x",
		Hint: "give from=run:w1, or message run:w1"}, "w1", "b")
	if want := "message to room:w1@b requires from=<actor address>: from=run:w1 or from=branch:w1/<branch>; got run:w1x"; e.Message != want {
		t.Errorf("message %q, want %q", e.Message, want)
	}
	if want := "give from=run:w1, or message run:w1@b"; e.Hint != want {
		t.Errorf("hint %q, want %q", e.Hint, want)
	}
}
