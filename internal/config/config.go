// Package config locates the agent root and loads <agent>/pi-actors.toml,
// the limits and defaults every verb uses.
//
// The agent root is $PI_CODING_AGENT_DIR, else ~/.pi/agent. The config
// file is optional; a missing file means the defaults. Unknown keys are an
// error that names the key, so a typo never silently falls back to a
// default. The package only reads; it never writes the file.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/pi-actors/pi-actors/internal/fsutil"
)

// FileName is the config file's name inside the agent root.
const FileName = "pi-actors.toml"

// Config is the content of pi-actors.toml.
type Config struct {
	Exec      Exec      `toml:"exec"`
	Output    Output    `toml:"output"`
	Runs      Runs      `toml:"runs"`
	Knowledge Knowledge `toml:"knowledge"`
	Cluster   Cluster   `toml:"cluster"`
	Pi        Pi        `toml:"pi"`
	Sessions  Sessions  `toml:"sessions"`
}

// Knowledge configures the knowledge store's vector graph.
type Knowledge struct {
	// Capture records every run's terminal transition, task.result
	// messages and outbox decisions as history nodes (default true).
	Capture bool `toml:"capture"`
	// Embedder chooses the embedder; the default (no url) is the local
	// feature-hashing one, which needs no network.
	Embedder KnowledgeEmbedder `toml:"embedder"`
}

// KnowledgeEmbedder is [knowledge.embedder]: an OpenAI-compatible
// embeddings endpoint (OpenAI, Ollama, llama.cpp, …).
type KnowledgeEmbedder struct {
	// URL is the server's base URL or its /v1/embeddings URL; empty means
	// the local embedder.
	URL string `toml:"url"`
	// Model is the model name sent with every request (required with url).
	Model string `toml:"model"`
	// APIKeyEnv names the environment variable holding the API key (the
	// key itself never goes in the file).
	APIKeyEnv string `toml:"api_key_env"`
	// Dim is the expected vector dimension; 0 learns it from the server.
	Dim int `toml:"dim"`
}

// Runs bounds detached runs.
type Runs struct {
	// MaxDepth limits nested spawns (a run spawning runs…).
	MaxDepth int `toml:"max_depth"`
	// MaxLivePerSession limits the live runs one session owns.
	MaxLivePerSession int `toml:"max_live_per_session"`
	// LogMaxBytes caps stdout.log / stderr.log before rotation; LogKeep is
	// how many rotated files are kept.
	LogMaxBytes int64 `toml:"log_max_bytes"`
	LogKeep     int   `toml:"log_keep"`
	// RetentionDays: terminal runs older than this are pruned by the kernel.
	RetentionDays int `toml:"retention_days"`
	// StalledAfterS: a running run silent this long shows stalled=true.
	StalledAfterS int `toml:"stalled_after_s"`
	// CaptureDrafts writes inline spawns to <agent>/recipes/drafts/.
	CaptureDrafts bool `toml:"capture_drafts"`
}

// Exec bounds command-template execution.
type Exec struct {
	// MaxParallelBranches limits the fan-out of one parallel node.
	MaxParallelBranches int `toml:"max_parallel_branches"`
	// MaxLeaves limits the leaves of one plan.
	MaxLeaves int `toml:"max_leaves"`
	// KillGraceMS is the time between SIGTERM and SIGKILL.
	KillGraceMS int `toml:"kill_grace_ms"`
}

// Output bounds what agents read.
type Output struct {
	// MaxLines and MaxBytes bound the tail of foreground output in --json.
	MaxLines int `toml:"max_lines"`
	MaxBytes int `toml:"max_bytes"`
}

// Defaults returns the built-in configuration.
func Defaults() Config {
	return Config{
		Exec:   Exec{MaxParallelBranches: 64, MaxLeaves: 10000, KillGraceMS: 5000},
		Output: Output{MaxLines: 2000, MaxBytes: 51200},
		Runs: Runs{MaxDepth: 8, MaxLivePerSession: 64, LogMaxBytes: 10 << 20, LogKeep: 1, RetentionDays: 7,
			StalledAfterS: 300, CaptureDrafts: true},
		Knowledge: Knowledge{Capture: true},
		Pi:        piDefaults(),
	}
}

// ErrInvalid marks a config file that cannot be used.
var ErrInvalid = errors.New("invalid config")

// EnvError is a bad value of an environment variable that overrides the
// config (Name), not of pi-actors.toml: the fix is in the environment.
// It is an ErrInvalid.
type EnvError struct {
	Name string // the variable
	Msg  string // what is wrong, naming it
}

func (e *EnvError) Error() string { return ErrInvalid.Error() + ": " + e.Msg }

func (e *EnvError) Unwrap() error { return ErrInvalid }

// AgentDir returns the agent root: $PI_CODING_AGENT_DIR (a leading ~/ is
// the home directory, as pi reads it) or ~/.pi/agent.
func AgentDir() (string, error) {
	if d := os.Getenv("PI_CODING_AGENT_DIR"); d != "" {
		return filepath.Abs(fsutil.ExpandHome(d))
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("agent root: set PI_CODING_AGENT_DIR or HOME: %w", err)
	}
	return filepath.Join(home, ".pi", "agent"), nil
}

// Load reads <agentDir>/pi-actors.toml over the defaults, then applies
// environment overrides (PI_ACTORS_MAX_PARALLEL_BRANCHES).
func Load(agentDir string) (Config, error) {
	c := Defaults()
	path := filepath.Join(agentDir, FileName)
	md, err := toml.DecodeFile(path, &c)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if _, lerr := os.Lstat(path); lerr == nil {
			// A link to nothing: meant to be a config, not its absence.
			return c, fmt.Errorf("%w: %s is a symbolic link to a file that does not exist: %v", ErrInvalid, path, err)
		}
	case err != nil:
		return c, fmt.Errorf("%w: %s: %v", ErrInvalid, path, err)
	default:
		if err := exactCase(md, path); err != nil {
			return c, err
		}
		if und := md.Undecoded(); len(und) > 0 {
			keys := make([]string, len(und))
			for i, k := range und {
				keys[i] = k.String()
			}
			return c, fmt.Errorf("%w: %s: unknown key %s (known: %s)", ErrInvalid, path, strings.Join(keys, ", "), strings.Join(KnownKeys(), ", "))
		}
		// A [cluster] without its name would quietly be a kernel of one
		// machine.
		if md.IsDefined("cluster") && c.Cluster.Name == "" {
			return c, fmt.Errorf("%w: %s: cluster.name is required in [cluster]: the cluster's name (letters, digits, '.', '_' or '-'), the same on every member; remove [cluster] for a kernel of this machine alone", ErrInvalid, path)
		}
	}
	if v := os.Getenv("PI_ACTORS_MAX_PARALLEL_BRANCHES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return c, &EnvError{Name: "PI_ACTORS_MAX_PARALLEL_BRANCHES", Msg: fmt.Sprintf("PI_ACTORS_MAX_PARALLEL_BRANCHES must be a positive integer (got %q)", v)}
		}
		c.Exec.MaxParallelBranches = n
	}
	if err := c.Pi.applyEnv(); err != nil {
		return c, err
	}
	if err := c.check(path); err != nil {
		return c, err
	}
	return c, nil
}

// exactCase refuses a key written in another case than its field's
// (toml matches struct fields without regard to case, but TOML keys are
// case-sensitive: [EXEC] MAX_LEAVES took effect, and a key given twice
// in two cases passed as no duplicate).
func exactCase(md toml.MetaData, path string) error {
	names := map[string]bool{} // every known key and table, as spelt
	for _, k := range KnownKeys() {
		for i := range k {
			if k[i] == '.' {
				names[k[:i]] = true
			}
		}
		names[k] = true
	}
	for _, k := range md.Keys() {
		name := k.String()
		if names[name] {
			continue
		}
		for want := range names {
			if strings.EqualFold(want, name) {
				return fmt.Errorf("%w: %s: key %s: keys are case-sensitive; write %s", ErrInvalid, path, name, want)
			}
		}
	}
	return nil
}

func (c Config) check(path string) error {
	// The upper bounds keep every value a duration or a count the code
	// can hold (a retention_days past 106,751 overflowed into a negative
	// age and pruned every ended run) and within reason (log_keep files
	// are renamed at each rotation).
	for _, f := range []struct {
		key      string
		v        int
		min, max int
	}{
		{"exec.max_parallel_branches", c.Exec.MaxParallelBranches, 1, math.MaxInt32},
		{"exec.max_leaves", c.Exec.MaxLeaves, 1, math.MaxInt32},
		{"exec.kill_grace_ms", c.Exec.KillGraceMS, 1, 24 * 3600 * 1000},
		{"output.max_lines", c.Output.MaxLines, 1, math.MaxInt32},
		{"output.max_bytes", c.Output.MaxBytes, 1, math.MaxInt32},
		{"runs.max_depth", c.Runs.MaxDepth, 1, 1000},
		{"runs.max_live_per_session", c.Runs.MaxLivePerSession, 1, math.MaxInt32},
		{"runs.log_max_bytes", int(min(c.Runs.LogMaxBytes, 1<<50)), 1024, 1 << 40},
		{"runs.log_keep", c.Runs.LogKeep, 1, 1000},
		{"runs.retention_days", c.Runs.RetentionDays, 1, 36500},
		{"runs.stalled_after_s", c.Runs.StalledAfterS, 1, 365 * 24 * 3600},
	} {
		if f.v < f.min || f.v > f.max {
			return fmt.Errorf("%w: %s: %s must be from %d to %d (got %d)", ErrInvalid, path, f.key, f.min, f.max, f.v)
		}
	}
	if err := c.Pi.check(path); err != nil {
		return err
	}
	if err := c.Sessions.check(path); err != nil {
		return err
	}
	return c.Knowledge.Embedder.check(path)
}

func (e KnowledgeEmbedder) check(path string) error {
	switch {
	case e.URL == "" && (e.Model != "" || e.APIKeyEnv != "" || e.Dim != 0):
		return fmt.Errorf("%w: %s: knowledge.embedder.url is required when model, api_key_env or dim is set (or remove them to use the local embedder)", ErrInvalid, path)
	case e.URL != "" && !httpURL(e.URL):
		return fmt.Errorf("%w: %s: knowledge.embedder.url must be an http(s) URL with a host, e.g. http://localhost:11434 (got %q)", ErrInvalid, path, e.URL)
	case e.URL != "" && strings.TrimSpace(e.Model) == "":
		return fmt.Errorf("%w: %s: knowledge.embedder.model is required with url (e.g. nomic-embed-text)", ErrInvalid, path)
	case e.Dim < 0:
		return fmt.Errorf("%w: %s: knowledge.embedder.dim must be 0 (learn it) or positive (got %d)", ErrInvalid, path, e.Dim)
	case e.APIKeyEnv != "" && !envName(e.APIKeyEnv):
		return fmt.Errorf("%w: %s: knowledge.embedder.api_key_env must name an environment variable (letters, digits, _), not the key itself", ErrInvalid, path)
	}
	return nil
}

// httpURL reports whether s is an http or https URL with a host.
func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Hostname() != ""
}

// envName reports whether s is a portable environment variable name.
func envName(s string) bool {
	for i, r := range s {
		ok := r == '_' || 'A' <= r && r <= 'Z' || 'a' <= r && r <= 'z' || i > 0 && '0' <= r && r <= '9'
		if !ok {
			return false
		}
	}
	return s != ""
}

// KillGrace is Exec.KillGraceMS as a duration.
func (c Config) KillGrace() time.Duration {
	return time.Duration(c.Exec.KillGraceMS) * time.Millisecond
}

// TmpDir is <agent>/tmp/pi-actors, where runs, outputs and spills live.
func TmpDir(agentDir string) string {
	return filepath.Join(agentDir, "tmp", "pi-actors")
}

// KnownKeys lists every key pi-actors.toml may hold (section.key), from
// the Config struct's toml tags.
func KnownKeys() []string {
	var out []string
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
			if name == "" || name == "-" {
				continue
			}
			if f.Type.Kind() == reflect.Struct {
				walk(f.Type, prefix+name+".")
				continue
			}
			out = append(out, prefix+name)
		}
	}
	walk(reflect.TypeOf(Config{}), "")
	return out
}
