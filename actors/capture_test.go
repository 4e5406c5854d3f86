package actors_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/actors/wire"
	"github.com/pi-actors/pi-actors/internal/config"
	"github.com/pi-actors/pi-actors/internal/testproc"
)

// A run that ends is captured as a history node of the store of its
// working directory, and recall finds it with its provenance; a
// task.result message it sends is captured too. Capture off captures
// nothing.
func TestCaptureRunsAndMessages(t *testing.T) {
	agent := newAgent(t)
	k := startKernelIdle(t, agent, 0)
	repo, _ := newRepo(t, k)
	cwd := filepath.Join(repo, "src")
	os.MkdirAll(cwd, 0o755)
	resp := callConn(t, agent, wire.Request{Op: "spawn", Session: "s1", Cwd: cwd, Env: append(os.Environ(), testproc.EnvVar+"=1"),
		Params: rawParams(map[string]any{"as": "run:zebra-migration", "template": "echo migrated the zebra tables"})})
	if resp.Error != nil {
		t.Fatalf("spawn: %+v", resp.Error)
	}
	var hit map[string]any
	eventually(t, 15*time.Second, "recall finds the run", func() bool {
		res := k.knowledgeOK(cwd, "recall", map[string]any{"query": "zebra migration tables", "domain": "history"})
		b, _ := json.Marshal(res)
		if !strings.Contains(string(b), "zebra-migration") {
			return false
		}
		hits, _ := res["hits"].([]any)
		hit, _ = hits[0].(map[string]any)
		return true
	})
	b, _ := json.Marshal(hit)
	for _, want := range []string{`"store":"project"`, "migrated the zebra tables", "zebra-migration"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("recall hit lacks %s: %s", want, b)
		}
	}

	msg := callConn(t, agent, wire.Request{Op: "message", Session: "s1", Cwd: cwd, Env: []string{testproc.EnvVar + "=1"},
		Params: rawParams(map[string]any{"to": "coordinator", "from": "run:zebra-migration", "type": "task.result", "id": "tr-1",
			"summary": "the okapi index was rebuilt", "body": map[string]any{"ok": true}})})
	if msg.Error != nil {
		t.Fatalf("message: %+v", msg.Error)
	}
	eventually(t, 15*time.Second, "recall finds the task.result", func() bool {
		res := k.knowledgeOK(cwd, "recall", map[string]any{"query": "okapi index rebuilt", "domain": "history"})
		b, _ := json.Marshal(res)
		return strings.Contains(string(b), "okapi")
	})
}

func TestCaptureOff(t *testing.T) {
	agent := newAgent(t)
	k := startKernel(t, agent, settings(func(c *config.Config) { c.Knowledge.Capture = false }))
	resp := callConn(t, agent, wire.Request{Op: "spawn", Session: "s1", Cwd: agent, Env: append(os.Environ(), testproc.EnvVar+"=1"),
		Params: rawParams(map[string]any{"as": "run:quiet-capybara", "template": "echo capybara"})})
	if resp.Error != nil {
		t.Fatalf("spawn: %+v", resp.Error)
	}
	eventually(t, 15*time.Second, "the run's follow-up", func() bool { return len(k.followups("s1")) > 0 })
	time.Sleep(300 * time.Millisecond) // a capture would have been started with the follow-up
	res := k.knowledgeOK(agent, "recall", map[string]any{"query": "capybara"})
	if b, _ := json.Marshal(res); strings.Contains(string(b), "quiet-capybara") {
		t.Errorf("captured with capture off: %s", b)
	}
}
