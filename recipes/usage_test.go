package recipes

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// usageOf reads a recipe file's usage object.
func usageOf(t testing.TB, path string) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(readText(t, path)), &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	u, _ := doc["usage"].(map[string]any)
	return u
}

func TestRecordUsageCountsAndKeepsTheFile(t *testing.T) {
	root := filepath.Join(t.TempDir(), "recipes")
	// Keys out of alphabetical order, a number whose text must survive,
	// characters encoding/json would escape in HTML mode.
	path := regPut(t, filepath.Join(root, "tool.json"), `{"template": "echo {a} && <b>", "description": "z first", "retry": 1.50, "args": ["a"]}`)
	t1 := time.Date(2025, 3, 4, 5, 6, 7, 891e6, time.FixedZone("x", 3600))
	if err := recordUsage(root, path, UsageTool, t1); err != nil {
		t.Fatal(err)
	}
	fp := Fingerprint(map[string]any{"template": "echo {a} && <b>", "description": "z first", "retry": json.Number("1.50"), "args": []any{"a"}})
	want := `{
  "template": "echo {a} && <b>",
  "description": "z first",
  "retry": 1.50,
  "args": [
    "a"
  ],
  "usage": {
    "calls": 1,
    "tool_calls": 1,
    "last_called": "2025-03-04T04:06:07.891Z",
    "launch_kind": "tool",
    "fingerprint": "` + fp + `"
  }
}
`
	if got := readText(t, path); got != want {
		t.Fatalf("after one call:\n%s\nwant:\n%s", got, want)
	}
	if err := recordUsage(root, path, UsageSpawn, t1.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := recordUsage(root, path, UsageTool, t1.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	u := usageOf(t, path)
	if u["calls"] != 3.0 || u["tool_calls"] != 2.0 || u["spawn_calls"] != 1.0 || u["launch_kind"] != "tool" || u["last_called"] != "2025-03-04T06:06:07.891Z" || u["fingerprint"] != fp {
		t.Errorf("usage after three calls: %v", u)
	}
	if _, ok := u["reset_at"]; ok {
		t.Errorf("unchanged content was reset: %v", u)
	}
	ents, _ := os.ReadDir(root)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

func TestRecordUsageResetsWhenContentChanges(t *testing.T) {
	root := filepath.Join(t.TempDir(), "recipes")
	path := regPut(t, filepath.Join(root, "tool.json"), `{"description": "d", "template": "echo one"}`)
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for range 3 {
		if err := recordUsage(root, path, UsageTool, now); err != nil {
			t.Fatal(err)
		}
	}
	if err := recordUsage(root, path, UsageDirect, now); err != nil {
		t.Fatal(err)
	}
	// Edit the template, keeping the usage block.
	edited := strings.Replace(readText(t, path), "echo one", "echo two", 1)
	if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	later := now.Add(time.Minute)
	if err := recordUsage(root, path, UsageSpawn, later); err != nil {
		t.Fatal(err)
	}
	u := usageOf(t, path)
	if u["calls"] != 1.0 || u["spawn_calls"] != 1.0 || u["tool_calls"] != nil || u["direct_calls"] != nil {
		t.Errorf("counters after a content change: %v", u)
	}
	if u["reset_at"] != "2025-01-01T00:01:00.000Z" || u["reset_reason"] != ResetReason {
		t.Errorf("reset fields: %v", u)
	}
	if u["fingerprint"] != Fingerprint(map[string]any{"description": "d", "template": "echo two"}) {
		t.Errorf("fingerprint not updated: %v", u)
	}
	// The next call counts on from the reset.
	if err := recordUsage(root, path, UsageTool, later); err != nil {
		t.Fatal(err)
	}
	if u := usageOf(t, path); u["calls"] != 2.0 || u["tool_calls"] != 1.0 || u["reset_reason"] != ResetReason {
		t.Errorf("after reset and one more call: %v", u)
	}
}

func TestRecordUsageTracksOnlyUserRootJSON(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "recipes")
	good := `{"description": "d", "template": "echo"}`
	draft := regPut(t, filepath.Join(root, "drafts", "d.json"), good)
	untouched := []string{
		regPut(t, filepath.Join(root, "md.md"), "---\ndescription: d\n---\n```command\necho\n```\n"),
		regPut(t, filepath.Join(root, "sub", "deep.json"), good),
		regPut(t, filepath.Join(root, "drafts", "sub", "deep.json"), good),
		regPut(t, filepath.Join(base, "elsewhere.json"), good),
		regPut(t, filepath.Join(root, "broken.json"), `{"template": `),
		regPut(t, filepath.Join(root, "array.json"), `["echo"]`),
	}
	ro := regPut(t, filepath.Join(root, "ro.json"), good)
	if err := os.Chmod(ro, 0o444); err != nil {
		t.Fatal(err)
	}
	hard := regPut(t, filepath.Join(root, "hard.json"), good)
	if err := os.Link(hard, filepath.Join(base, "hardlink.json")); err != nil {
		t.Fatal(err)
	}
	untouched = append(untouched, ro, hard)
	link := filepath.Join(root, "link.json")
	if err := os.Symlink(filepath.Join(base, "elsewhere.json"), link); err != nil {
		t.Fatal(err)
	}
	untouched = append(untouched, link)
	before := map[string]string{}
	for _, p := range untouched {
		before[p] = readText(t, p)
	}
	now := time.Now()
	for _, p := range append(untouched, draft, "pkg:utility-git-status.json", filepath.Join(root, "missing.json")) {
		if err := recordUsage(root, p, UsageSpawn, now); err != nil {
			t.Errorf("recordUsage(%s): %v", p, err)
		}
	}
	for _, p := range untouched {
		if readText(t, p) != before[p] {
			t.Errorf("%s was rewritten", p)
		}
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced: %v", err)
	}
	if u := usageOf(t, draft); u["spawn_calls"] != 1.0 {
		t.Errorf("draft usage %v", u)
	}
	if err := recordUsage(root, draft, "bogus", now); err == nil {
		t.Error("an unknown kind was accepted")
	}
}

func TestRecordUsageUsesTheAgentRoot(t *testing.T) {
	agent := t.TempDir()
	t.Setenv("PI_CODING_AGENT_DIR", agent)
	path := regPut(t, filepath.Join(UserRoot(agent), "t.json"), `{"template": "echo"}`)
	if err := RecordUsage(path, UsageTool); err != nil {
		t.Fatal(err)
	}
	if u := usageOf(t, path); u["tool_calls"] != 1.0 {
		t.Errorf("usage %v", u)
	}
	other := regPut(t, filepath.Join(t.TempDir(), "recipes", "t.json"), `{"template": "echo"}`)
	if err := RecordUsage(other, UsageTool); err != nil {
		t.Fatal(err)
	}
	if usageOf(t, other) != nil {
		t.Error("a recipe outside the agent root was tracked")
	}
}

func TestRecordUsageConcurrentCallsAllCount(t *testing.T) {
	root := filepath.Join(t.TempDir(), "recipes")
	path := regPut(t, filepath.Join(root, "t.json"), `{"template": "echo"}`)
	const n = 20
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if err := recordUsage(root, path, UsageTool, time.Now()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if u := usageOf(t, path); u["calls"] != float64(n) {
		t.Errorf("calls = %v, want %d", u["calls"], n)
	}
}

func TestRegisterAndUsageShareTheLock(t *testing.T) {
	rg := newRegistrar(t)
	out := mustRegister(t, rg, map[string]any{"name": "t", "description": "d", "template": "echo"})
	if err := recordUsage(UserRoot(rg.AgentDir), out.Path, UsageTool, time.Now()); err != nil {
		t.Fatal(err)
	}
	// An update keeps the usage block; its fingerprint no longer matches,
	// so the next call restarts the counters.
	mustRegister(t, rg, map[string]any{"name": "t", "update": true, "description": "new"})
	if u := usageOf(t, out.Path); u["calls"] != 1.0 {
		t.Fatalf("usage lost by the update: %v", u)
	}
	if err := recordUsage(UserRoot(rg.AgentDir), out.Path, UsageTool, time.Now()); err != nil {
		t.Fatal(err)
	}
	if u := usageOf(t, out.Path); u["calls"] != 1.0 || u["reset_reason"] != ResetReason {
		t.Errorf("usage after update and call: %v", u)
	}
}

// TestRecordUsageNeverPassesTheSizeLimit: a recipe near MaxFileBytes is
// left as it is rather than grown past the limit by its counters (every
// later load would refuse it).
func TestRecordUsageNeverPassesTheSizeLimit(t *testing.T) {
	root := filepath.Join(t.TempDir(), "recipes")
	body := `{"description": "d", "template": "echo ` + strings.Repeat("a", MaxFileBytes-60) + `"}`
	path := regPut(t, filepath.Join(root, "near.json"), body)
	if _, err := Load(path); err != nil {
		t.Fatalf("the recipe does not load to begin with: %v", err)
	}
	if err := recordUsage(root, path, UsageTool, time.Now()); err != nil {
		t.Fatal(err)
	}
	if got := readText(t, path); got != body {
		t.Errorf("the file changed (%d bytes, limit %d)", len(got), MaxFileBytes)
	}
	if _, err := Load(path); err != nil {
		t.Errorf("after a call the recipe does not load: %v", err)
	}
}
