package pitest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Provider is the provider name WriteModels gives the scripted endpoint.
const Provider = "scripted"

// ModelID is the model pi asks for when a test names none.
const ModelID = "scripted-1"

// WriteModels writes <agentDir>/models.json: provider "scripted", an
// openai-completions endpoint at url (Model.URL) with the model ids given
// (default ModelID). It replaces the file.
func WriteModels(agentDir, url string, ids ...string) error {
	if len(ids) == 0 {
		ids = []string{ModelID}
	}
	var models []map[string]any
	for _, id := range ids {
		models = append(models, map[string]any{"id": id, "name": id, "reasoning": false, "input": []string{"text"},
			"contextWindow": 128000, "maxTokens": 4096, "cost": map[string]int{"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}})
	}
	doc := map[string]any{"providers": map[string]any{Provider: map[string]any{
		"baseUrl": url,
		"api":     "openai-completions",
		"apiKey":  "pitest-no-key",
		"compat":  map[string]any{"supportsDeveloperRole": false, "supportsReasoningEffort": false, "supportsStore": false},
		"models":  models,
	}}}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("models.json: %w", err)
	}
	if err := os.MkdirAll(agentDir, 0o755); err != nil {
		return fmt.Errorf("models.json: %w", err)
	}
	if err := os.WriteFile(filepath.Join(agentDir, "models.json"), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("models.json: %w", err)
	}
	return nil
}

// Env returns base with pi pointed at agentDir: PI_CODING_AGENT_DIR, HOME
// (pi expands ~ and looks for global packages there) under agentDir, no
// start-up network (PI_OFFLINE, PI_SKIP_VERSION_CHECK), no telemetry-ish
// terminal probing (TERM=dumb), and no inherited PI_ACTORS_* variable that
// would point the extension at another pi-actors. extra entries come last
// and win.
func Env(base []string, agentDir string, extra ...string) []string {
	var env []string
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "PI_ACTORS_"), strings.HasPrefix(name, "PI_CODING_AGENT"),
			name == "HOME", name == "PI_OFFLINE", name == "PI_SKIP_VERSION_CHECK", name == "TERM":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "PI_CODING_AGENT_DIR="+agentDir, "HOME="+filepath.Join(agentDir, "home"),
		"PI_OFFLINE=1", "PI_SKIP_VERSION_CHECK=1", "TERM=dumb")
	return append(env, extra...)
}

// Args are pi's arguments for one non-interactive prompt answered by the
// scripted model ModelID: the JSON event stream on stdout (--mode json),
// the scripted provider, then extra (before the prompt).
func Args(modules, prompt string, extra ...string) []string {
	args := []string{CLI(modules), "--offline", "--mode", "json", "--provider", Provider, "--model", ModelID}
	args = append(args, extra...)
	return append(args, prompt)
}

// Event is one line of pi's JSON event stream, as far as tests read it.
type Event struct {
	Type       string          `json:"type"`
	ToolName   string          `json:"toolName,omitempty"`
	ToolCallID string          `json:"toolCallId,omitempty"`
	IsError    bool            `json:"isError,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
	Message    json.RawMessage `json:"message,omitempty"`
}

// Events parses pi's --mode json output, skipping lines that are not
// JSON objects.
func Events(out []byte) []Event {
	var evs []Event
	for _, line := range strings.Split(string(out), "\n") {
		var e Event
		if json.Unmarshal([]byte(line), &e) == nil && e.Type != "" {
			evs = append(evs, e)
		}
	}
	return evs
}
