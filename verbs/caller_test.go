package verbs_test

import (
	"strings"
	"testing"

	"github.com/pi-actors/pi-actors/verbs"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

func TestCheckCaller(t *testing.T) {
	long := strings.Repeat("a", 257)
	for _, c := range []struct {
		session string
		cause   wire.Cause
		bad     string
	}{
		{"s1", wire.Cause{Message: "q.1795820285671952729.done", ToolCall: "toolu_01", MCPRequest: "7"}, ""},
		// A claimed branch message's copy in its run's inbox: <id>@<branch>.
		{"s1", wire.Cause{Message: "job1@b1"}, ""},
		{"s1", wire.Cause{Message: "e1@room@b1"}, ""},
		{"s1", wire.Cause{Message: "a@"}, "cause"},
		{"a\nsession=fake", wire.Cause{}, "session"},
		{strings.Repeat("s", 129), wire.Cause{}, "session"},
		{"s1", wire.Cause{Message: "a\nb"}, "cause"},
		{"s1", wire.Cause{Message: long}, "cause"},
		{"s1", wire.Cause{MCPRequest: "req 1"}, "cause.mcp_request"},
	} {
		err := verbs.CheckCaller(c.session, &c.cause)
		switch {
		case c.bad == "" && err != nil:
			t.Errorf("%q %+v: %v", c.session, c.cause, err)
		case c.bad != "" && (err == nil || !strings.HasPrefix(err.Error(), c.bad+" must be")):
			t.Errorf("%q %+v: %v, want an error naming %s", c.session, c.cause, err, c.bad)
		}
	}
	// A front door's own ids become tokens, the same for the same id.
	for _, id := range []string{"req 1", `{"a":1}`, long} {
		got := verbs.CauseID(id)
		if verbs.CheckCaller("", &wire.Cause{MCPRequest: got}) != nil || got != verbs.CauseID(id) || got == verbs.CauseID(id+"x") {
			t.Errorf("CauseID(%q) = %q", id, got)
		}
	}
	if verbs.CauseID("42") != "42" {
		t.Errorf("a token stays itself")
	}
}
