package mcpserver_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pi-actors/pi-actors/sessions"
)

// A spawn and a message made through MCP record the JSON-RPC id of the
// tool call that made them as their cause (run.json and the session's
// causal record); two calls get their own ids.
func TestMCPRequestIDIsTheCause(t *testing.T) {
	agent := t.TempDir()
	c := connect(t, agent, "PI_ACTORS_SESSION=carol")
	if res := c.call("spawn", map[string]any{"as": "run:traced", "template": "sleep 600"}); res.IsError {
		t.Fatalf("spawn: %s", text(res))
	}
	if res := c.call("message", map[string]any{"to": "run:traced", "type": "task.do"}); res.IsError {
		t.Fatalf("message: %s", text(res))
	}
	meta, err := os.ReadFile(filepath.Join(agent, "tmp", "pi-actors", "runs", "traced", "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	spawnID := regexp.MustCompile(`"mcp_request": "([^"]+)"`).FindStringSubmatch(string(meta))
	if spawnID == nil {
		t.Fatalf("run.json has no mcp_request cause:\n%s", meta)
	}
	log, err := os.ReadFile(sessions.TracePath(agent, "carol"))
	if err != nil {
		t.Fatal(err)
	}
	ids := regexp.MustCompile(`"mcp_request":"([^"]+)"`).FindAllStringSubmatch(string(log), -1)
	if len(ids) != 2 || ids[0][1] != spawnID[1] || ids[1][1] == ids[0][1] {
		t.Fatalf("causal record's MCP request ids %v; want the spawn's (%s), then the message's own:\n%s", ids, spawnID[1], log)
	}
	if !strings.Contains(string(log), `"session":"carol"`) {
		t.Errorf("causal record without the session:\n%s", log)
	}
	c.call("message", map[string]any{"to": "run:traced", "type": "control.kill"})
}
