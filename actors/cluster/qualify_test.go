package cluster_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/internal/clustertest"
)

// TestClusterRoutedContentIntact: what a run on another node printed and
// what its inbox holds come back byte for byte through logs and inspect
// (text and --json), although they name the run's own addresses; the
// answer's own addresses name the node.
func TestClusterRoutedContentIntact(t *testing.T) {
	t.Parallel()
	c := clustertest.New(t, bin, "a", "b")
	c.Run("a", "spawn", "as=run:q1", "node=b", `template=sh -c 'echo literal: run:q1 room:q1 branch:q1/w; echo addr=$PI_ACTORS_ADDRESS; sleep 60'`)
	line := "literal: run:q1 room:q1 branch:q1/w"
	clustertest.Eventually(t, 10*time.Second, "the run's output on b", func() bool {
		b, _ := os.ReadFile(filepath.Join(c.Members["b"].Root, "tmp", "pi-actors", "runs", "q1", "stdout.log"))
		return strings.Contains(string(b), "addr=run:q1\n")
	})
	if o := c.Run("a", "logs", "q1@b"); !strings.Contains(o, "\n"+line+"\naddr=run:q1\n") {
		t.Fatalf("logs q1@b rewrote the run's output:\n%s", o)
	}
	env, _ := c.JSON("a", "logs", "q1@b")
	res, _ := env["result"].(map[string]any)
	if out, _ := json.Marshal(res["stdout"]); string(out) != `["`+line+`","addr=run:q1"]` || res["node"] != "b" {
		t.Fatalf("logs q1@b --json: %v", env)
	}

	body := "please reply to run:q1 soon"
	c.Run("a", "message", "to=run:q1@b", "type=note.x", "body="+body)
	env, _ = c.JSON("a", "inspect", "target=run:q1@b", "view=mailbox")
	res, _ = env["result"].(map[string]any)
	msgs, _ := res["messages"].([]any)
	if len(msgs) != 1 {
		t.Fatalf("mailbox of q1@b: %v", env)
	}
	if m := msgs[0].(map[string]any); m["body"] != body || m["to"] != "run:q1@b" {
		t.Fatalf("mailbox message of q1@b: body %q to %q, want %q and run:q1@b", m["body"], m["to"], body)
	}
	if o := c.Run("a", "inspect", "target=run:q1@b", "view=status"); !strings.Contains(o, "last=addr=run:q1\n") || !strings.Contains(o, "target=run:q1@b_view=tail") {
		t.Fatalf("status of q1@b: content rewritten or next actions without the node:\n%s", o)
	}
	// A message the other node refuses names the room as the caller does;
	// the from= it asks for stays bare (from= refuses @node).
	if o, code := c.CLI("a", "message", "to=room:q1@b", "type=chat.message", "body=x"); code == 0 || !strings.Contains(o, "message to room:q1@b ") || !strings.Contains(o, "from=run:q1 ") {
		t.Fatalf("a refused message to room:q1@b (exit %d) does not name room:q1@b, or asks for from=run:q1@b:\n%s", code, o)
	}
}
