package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func write(t *testing.T, dir, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestMissingFileMeansDefaults(t *testing.T) {
	t.Setenv("PI_ACTORS_MAX_PARALLEL_BRANCHES", "")
	t.Setenv("PI_ACTORS_PI_TOOLS", "")
	c, err := Load(t.TempDir())
	if err != nil || !reflect.DeepEqual(c, Defaults()) {
		t.Fatalf("Load: %+v, %v", c, err)
	}
}

func TestValuesOverDefaults(t *testing.T) {
	t.Setenv("PI_ACTORS_MAX_PARALLEL_BRANCHES", "")
	dir := t.TempDir()
	write(t, dir, "[exec]\nmax_parallel_branches = 256\n[runs]\nmax_depth = 3\n")
	c, err := Load(dir)
	if err != nil || c.Exec.MaxParallelBranches != 256 || c.Runs.MaxDepth != 3 || c.Output.MaxLines != 2000 {
		t.Fatalf("Load: %+v, %v", c, err)
	}
}

func TestUnknownKeyNamesIt(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "[exec]\nmax_paralel_branches = 256\n")
	_, err := Load(dir)
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "exec.max_paralel_branches") {
		t.Fatalf("err = %v", err)
	}
}

// A [cluster] without its name is an error naming the key, not a kernel
// of one machine; no [cluster] at all is.
func TestClusterNeedsAName(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "[cluster]\nnode = \"n1\"\nprovider = \"automanaged\"\n")
	if _, err := Load(dir); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "cluster.name is required") {
		t.Fatalf("err = %v", err)
	}
	write(t, dir, "[exec]\nmax_leaves = 5\n")
	if c, err := Load(dir); err != nil || c.Cluster.Enabled() {
		t.Fatalf("without [cluster]: %v, enabled %v", err, c.Cluster.Enabled())
	}
}

func TestBadValues(t *testing.T) {
	for _, body := range []string{"[exec]\nmax_leaves = 0\n", "[output]\nmax_bytes = -1\n", "[exec\n", "[runs]\nmax_depth = \"x\"\n"} {
		dir := t.TempDir()
		write(t, dir, body)
		if _, err := Load(dir); !errors.Is(err, ErrInvalid) {
			t.Errorf("%q: err = %v, want ErrInvalid", body, err)
		}
	}
}

// Values past what a setting can mean are refused, naming the key and
// its range: a retention_days past 106,751 overflowed into a negative
// age and pruned every ended run at the next kernel start; a kill grace
// of 0 meant "at once" for exec and 5 s for runs.
func TestValuesOutOfRange(t *testing.T) {
	t.Setenv("PI_ACTORS_MAX_PARALLEL_BRANCHES", "")
	for body, says := range map[string]string{
		"[runs]\nretention_days = 200000\n":                            "runs.retention_days must be from 1 to 36500 (got 200000)",
		"[exec]\nkill_grace_ms = 0\n":                                  "exec.kill_grace_ms must be from 1 to 86400000 (got 0)",
		"[exec]\nkill_grace_ms = 9223372036855\n":                      "exec.kill_grace_ms must be from 1",
		"[runs]\nlog_keep = 200000\n":                                  "runs.log_keep must be from 1 to 1000",
		"[runs]\nstalled_after_s = 18446744074\n":                      "runs.stalled_after_s must be from 1",
		"[knowledge.embedder]\nurl = \"http://\"\nmodel = \"m\"\n":     "knowledge.embedder.url must be an http(s) URL with a host",
		"[knowledge.embedder]\nurl = \"https://:80\"\nmodel = \"m\"\n": "knowledge.embedder.url must be an http(s) URL with a host",
	} {
		dir := t.TempDir()
		write(t, dir, body)
		if _, err := Load(dir); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), says) {
			t.Errorf("%q: err = %v, want it to say %q", body, err, says)
		}
	}
}

// TOML keys are case-sensitive: a key in another case is refused (it
// took effect, and a key given twice in two cases passed), naming the
// key as it is spelt.
func TestKeysAreCaseSensitive(t *testing.T) {
	for body, says := range map[string]string{
		"[EXEC]\nmax_leaves = 2\n":                   "key EXEC: keys are case-sensitive; write exec",
		"[runs]\nRetention_Days = 3\n":               "key runs.Retention_Days: keys are case-sensitive; write runs.retention_days",
		"[exec]\nmax_leaves = 2\nMAX_LEAVES = 100\n": "key exec.MAX_LEAVES: keys are case-sensitive; write exec.max_leaves",
	} {
		dir := t.TempDir()
		write(t, dir, body)
		if _, err := Load(dir); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), says) {
			t.Errorf("%q: err = %v, want it to say %q", body, err, says)
		}
	}
}

// A pi-actors.toml that is a link to nothing is an error, not the
// defaults.
func TestDanglingConfigLink(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(dir, "nowhere.toml"), filepath.Join(dir, FileName)); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "symbolic link to a file that does not exist") {
		t.Fatalf("err = %v", err)
	}
}

func TestEnvOverride(t *testing.T) {
	t.Setenv("PI_ACTORS_MAX_PARALLEL_BRANCHES", "100")
	c, err := Load(t.TempDir())
	if err != nil || c.Exec.MaxParallelBranches != 100 {
		t.Fatalf("Load: %+v, %v", c, err)
	}
	t.Setenv("PI_ACTORS_MAX_PARALLEL_BRANCHES", "lots")
	if _, err := Load(t.TempDir()); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "PI_ACTORS_MAX_PARALLEL_BRANCHES") {
		t.Fatalf("err = %v", err)
	}
}

func TestAgentDir(t *testing.T) {
	t.Setenv("PI_CODING_AGENT_DIR", "rel/agent")
	d, err := AgentDir()
	if err != nil || !filepath.IsAbs(d) || !strings.HasSuffix(d, "rel/agent") {
		t.Fatalf("AgentDir = %q, %v", d, err)
	}
	t.Setenv("PI_CODING_AGENT_DIR", "")
	t.Setenv("HOME", "/home/someone")
	if d, _ := AgentDir(); d != "/home/someone/.pi/agent" {
		t.Fatalf("AgentDir = %q", d)
	}
}

func TestKnowledgeSection(t *testing.T) {
	t.Setenv("PI_ACTORS_MAX_PARALLEL_BRANCHES", "")
	c, err := Load(t.TempDir())
	if err != nil || !c.Knowledge.Capture || c.Knowledge.Embedder != (KnowledgeEmbedder{}) {
		t.Fatalf("defaults: %+v, %v", c.Knowledge, err)
	}
	dir := t.TempDir()
	write(t, dir, "[knowledge]\ncapture = false\n[knowledge.embedder]\nurl = \"http://localhost:11434\"\nmodel = \"nomic-embed-text\"\napi_key_env = \"EMBED_KEY\"\ndim = 768\n")
	c, err = Load(dir)
	want := KnowledgeEmbedder{URL: "http://localhost:11434", Model: "nomic-embed-text", APIKeyEnv: "EMBED_KEY", Dim: 768}
	if err != nil || c.Knowledge.Capture || c.Knowledge.Embedder != want {
		t.Fatalf("Load: %+v, %v", c.Knowledge, err)
	}
}

func TestKnowledgeSectionErrors(t *testing.T) {
	for body, want := range map[string]string{
		"[knowledge]\ncaptrue = true\n":                                                       "knowledge.captrue",
		"[knowledge.embedder]\nmodle = \"m\"\nurl = \"http://x\"\n":                           "knowledge.embedder.modle",
		"[knowledge.embedder]\nmodel = \"m\"\n":                                               "url is required",
		"[knowledge.embedder]\nurl = \"localhost:11434\"\nmodel = \"m\"\n":                    "http(s) URL",
		"[knowledge.embedder]\nurl = \"http://x\"\n":                                          "model is required",
		"[knowledge.embedder]\nurl = \"http://x\"\nmodel = \"m\"\ndim = -1\n":                 "dim must be",
		"[knowledge.embedder]\nurl = \"http://x\"\nmodel = \"m\"\napi_key_env = \"sk-123\"\n": "api_key_env",
		"[knowledge]\ncapture = \"yes\"\n":                                                    "capture",
	} {
		dir := t.TempDir()
		write(t, dir, body)
		_, err := Load(dir)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want ErrInvalid mentioning %q", body, err, want)
		}
	}
}

func TestPiSection(t *testing.T) {
	t.Setenv("PI_ACTORS_PI_TOOLS", "")
	c, err := Load(t.TempDir())
	if err != nil || c.Pi.KnowledgeBudget != 1500 || c.Pi.Recall || c.Pi.RecordSummary || c.Pi.Tools != nil {
		t.Fatalf("defaults: %+v, %v", c.Pi, err)
	}
	dir := t.TempDir()
	write(t, dir, "[pi]\ntools = [\"default\", \"smart_search\", \"!utility-*\"]\nknowledge_budget = 0\nrecall = true\nrecord_summary = true\n")
	c, err = Load(dir)
	if err != nil || strings.Join(c.Pi.Tools, " ") != "default smart_search !utility-*" || c.Pi.KnowledgeBudget != 0 || !c.Pi.Recall || !c.Pi.RecordSummary {
		t.Fatalf("Load: %+v, %v", c.Pi, err)
	}
	t.Setenv("PI_ACTORS_PI_TOOLS", " recall, query_graph ,")
	c, err = Load(dir)
	if err != nil || strings.Join(c.Pi.Tools, " ") != "recall query_graph" {
		t.Fatalf("PI_ACTORS_PI_TOOLS: %+v, %v", c.Pi, err)
	}
	t.Setenv("PI_ACTORS_PI_TOOLS", "recall,bad name")
	var envErr *EnvError
	if _, err := Load(dir); !errors.Is(err, ErrInvalid) || !errors.As(err, &envErr) || envErr.Name != "PI_ACTORS_PI_TOOLS" ||
		!strings.Contains(err.Error(), `PI_ACTORS_PI_TOOLS entry "bad name"`) || strings.Contains(err.Error(), "pi-actors.toml") {
		t.Fatalf("a bad PI_ACTORS_PI_TOOLS entry is the variable's error, not the file's: %v", err)
	}
	t.Setenv("PI_ACTORS_PI_TOOLS", "")
	for body, want := range map[string]string{
		"[pi]\ntool = [\"x\"]\n":            "pi.tool",
		"[pi]\nknowledge_budget = -1\n":     "pi.knowledge_budget",
		"[pi]\nknowledge_budget = 100000\n": "pi.knowledge_budget",
		"[pi]\ntools = [\"a/b\"]\n":         `pi.tools entry "a/b"`,
		"[pi]\ntools = [\"!\"]\n":           `pi.tools entry "!"`,
		"[pi]\nrecall = \"yes\"\n":          "recall",
	} {
		d := t.TempDir()
		write(t, d, body)
		if _, err := Load(d); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want ErrInvalid mentioning %q", body, err, want)
		}
	}
}
