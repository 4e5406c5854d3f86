package actors

import (
	"slices"
	"testing"

	"github.com/pi-actors/pi-actors/sessions"
)

// A request from another node loses the caller's run identity (the id
// may name another run here) but stays a run's call: it is not the
// session's activity on this node either.
func TestRemoteEnviron(t *testing.T) {
	out := remoteEnviron("a", []string{"PI_ACTORS_RUN_ID=w1", "PI_ACTORS_STATE_DIR=/x/w1", "PI_ACTORS_ADDRESS=run:w1", "HOME=/h", sessions.RemoteRunEnv + "=forged@z"})
	for _, want := range []string{"PI_ACTORS_ADDRESS=run:w1@a", "HOME=/h", sessions.RemoteRunEnv + "=w1@a"} {
		if !slices.Contains(out, want) {
			t.Errorf("remote environment %q lacks %s", out, want)
		}
	}
	for _, gone := range []string{"PI_ACTORS_RUN_ID=w1", "PI_ACTORS_STATE_DIR=/x/w1", sessions.RemoteRunEnv + "=forged@z"} {
		if slices.Contains(out, gone) {
			t.Errorf("remote environment %q keeps %s", out, gone)
		}
	}
	if sessions.Caller(out) {
		t.Error("a run's call from another node counts as the session's activity")
	}
	if out := remoteEnviron("a", []string{"HOME=/h"}); !sessions.Caller(out) {
		t.Errorf("a person's call from another node (%q) does not count as the session's activity", out)
	}
}
