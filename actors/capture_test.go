package actors_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/internal/config"
	"github.com/pi-actors/pi-actors/internal/testproc"
	"github.com/pi-actors/pi-actors/knowledge/store"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// A run that ends is captured as a history node of the store of its
// working directory, and recall finds it with its provenance; a
// task.result message it sends is captured too. Capture off captures
// nothing.
func TestCaptureRunsAndMessages(t *testing.T) {
	k, _, cwd := kernelWithRepo(t)
	endIn(k, "zebra-migration", cwd, "echo migrated the zebra tables")
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

	sendResult(k, cwd, "zebra-migration", "tr-1", "the okapi index was rebuilt", map[string]any{"ok": true})
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

// knowledge ingest streams its progress, then its result; the indexed
// code is searchable.
func TestKnowledgeIngestStream(t *testing.T) {
	agent := newAgent(t)
	k := startKernelIdle(t, agent, 0)
	repo, _ := newRepo(t, k)
	src := filepath.Join(repo, "src")
	os.MkdirAll(src, 0o755)
	for i := 0; i < 40; i++ {
		body := "package src\n\n// Filler" + string(rune('A'+i%26)) + " does nothing much.\nfunc Filler" + string(rune('A'+i%26)) + "() {}\n"
		os.WriteFile(filepath.Join(src, "f"+string(rune('a'+i%26))+string(rune('a'+i/26))+".go"), []byte(body), 0o644)
	}
	os.WriteFile(filepath.Join(src, "pelican.go"), []byte("package src\n\n// FeedPelicans rations fish among the pelicans of the harbour.\nfunc FeedPelicans(fish int) int { return fish / 3 }\n"), 0o644)
	c, err := wire.Dial(agent, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Send(wire.Request{Op: "knowledge_ingest", Cwd: repo, Env: []string{testproc.EnvVar + "=1"},
		Params: rawParams(map[string]any{"op": "ingest", "params": map[string]any{"path": "src", "glob": "**/*.go"}})}); err != nil {
		t.Fatal(err)
	}
	frames := 0
	var final map[string]any
	for final == nil {
		resp, err := c.Read()
		if err != nil {
			t.Fatal(err)
		}
		if resp.Error != nil {
			t.Fatalf("ingest: %+v", resp.Error)
		}
		m := resultMap(t, resp)
		if p, ok := m["progress"].(map[string]any); ok {
			frames++
			if p["total"].(float64) != 41 {
				t.Errorf("progress total = %v, want 41 files", p["total"])
			}
			continue
		}
		final, _ = m["result"].(map[string]any)
		if final == nil {
			t.Fatalf("neither progress nor result: %v", m)
		}
	}
	if frames == 0 || final["files"].(float64) != 41 {
		t.Errorf("%d progress frames, result %v", frames, final)
	}
	res := k.knowledgeOK(repo, "search", map[string]any{"query": "feed the pelicans fish", "domain": "code", "limit": 3})
	b, _ := json.Marshal(res)
	if !strings.Contains(string(b), "pelican.go") {
		t.Errorf("search does not find pelican.go: %s", b)
	}
}

// spoolFiles are the agent's capture spools and their contents.
func spoolFiles(t *testing.T, agent string) map[string]string {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(wire.TmpDir(agent), "capture", "*.jsonl"))
	out := map[string]string{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[p] = string(b)
	}
	return out
}

// sendResult sends a task.result message from run:<run> to the
// coordinator of session s1.
func sendResult(k *kernel, cwd, run, id, summary string, body map[string]any) {
	k.t.Helper()
	msg := callConn(k.t, k.agent, wire.Request{Op: "message", Session: "s1", Cwd: cwd, Env: []string{testproc.EnvVar + "=1"},
		Params: rawParams(map[string]any{"to": "coordinator", "from": "run:" + run, "type": "task.result", "id": id, "summary": summary, "body": body})})
	if msg.Error != nil {
		k.t.Fatalf("message: %+v", msg.Error)
	}
}

// A run's capture waits in the spool of its store: the kernel opens no
// store for it (nor creates the personal one). The spool outlives the
// kernel; the next kernel applies it before the first knowledge operation,
// so recall finds the run; a torn line in the spool is kept, and does not
// hold up the rest.
func TestCaptureWaitsInTheSpool(t *testing.T) {
	agent := newAgent(t)
	k := startKernelIdle(t, agent, 0)
	endIn(k, "walrus-ledger", k.agent, "echo the walrus ledger balanced")
	var spool string
	eventually(t, 5*time.Second, "the capture in a spool", func() bool {
		for p, body := range spoolFiles(t, agent) {
			if strings.Contains(body, "walrus ledger balanced") && strings.Count(body, "\n") == 1 {
				spool = p
				return true
			}
		}
		return false
	})
	if storeOpens(agent) > 0 {
		t.Error("a store was opened for a capture")
	}
	if _, err := os.Stat(store.PersonalPath(agent)); err == nil {
		t.Error("the personal store was created for a capture")
	}
	k.shutdown()

	f, err := os.OpenFile(spool, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"id":"torn`)
	f.Close()
	k = startKernelIdle(t, agent, 0)
	res := k.knowledgeOK(agent, "recall", map[string]any{"query": "walrus ledger balanced", "domain": "history"})
	if b, _ := json.Marshal(res); !strings.Contains(string(b), "walrus-ledger") {
		t.Fatalf("recall after a restart does not find the spooled run: %s", b)
	}
	if got := spoolFiles(t, agent)[spool]; got != `{"id":"torn`+"\n" {
		t.Errorf("spool after it was applied: %q, want only the torn line", got)
	}
}

// A spool that grows to its limit is applied without waiting for a
// knowledge operation.
func TestCaptureSpoolAppliedWhenLarge(t *testing.T) {
	agent := newAgent(t)
	k := startKernelIdle(t, agent, 0)
	endIn(k, "tapir", k.agent, "echo tapir")
	if storeOpens(agent) > 0 {
		b, _ := os.ReadFile(filepath.Join(wire.TmpDir(agent), "kernel.log"))
		t.Fatalf("a store was opened before the spool was full: %s", b)
	}
	big := strings.Repeat("the tapir herd grazes by the river; ", 300<<10/36)
	sendResult(k, agent, "tapir", "tr-big", "the tapir report", map[string]any{"report": big})
	eventually(t, 15*time.Second, "the full spool applied", func() bool {
		if storeOpens(agent) == 0 {
			return false
		}
		for _, body := range spoolFiles(t, agent) {
			if body != "" {
				return false
			}
		}
		return true
	})
}

// A spool its store cannot take stops growing at its cap: the capture is
// dropped and the kernel log says so.
func TestCaptureSpoolCapped(t *testing.T) {
	agent := newAgent(t)
	// The personal store's path holds a file that is not a store: the
	// spool cannot be applied.
	personal := store.PersonalPath(agent)
	os.MkdirAll(filepath.Dir(personal), 0o700)
	if err := os.WriteFile(personal, []byte("not a knowledge store"), 0o600); err != nil {
		t.Fatal(err)
	}
	k := startKernelIdle(t, agent, 0)
	endIn(k, "first", k.agent, "echo first")
	var spool string
	for p := range spoolFiles(t, agent) {
		spool = p
	}
	if spool == "" {
		t.Fatal("no spool after a run ended")
	}
	if err := os.Truncate(spool, 32<<20); err != nil {
		t.Fatal(err)
	}
	endIn(k, "second", k.agent, "echo second")
	logFile := filepath.Join(wire.TmpDir(agent), "kernel.log")
	eventually(t, 5*time.Second, "the dropped capture logged", func() bool {
		b, _ := os.ReadFile(logFile)
		return strings.Contains(string(b), "spool full, capture dropped")
	})
	if fi, err := os.Stat(spool); err != nil || fi.Size() != 32<<20 {
		t.Errorf("spool past its cap: %v %v", fi.Size(), err)
	}
}
