package config

import (
	"fmt"
	"os"
	"strings"
)

// Pi is [pi]: what the pi extension offers pi and adds to its
// conversations. The extension reads it through `pi-actors bridge`.
type Pi struct {
	// Tools chooses the verbs and recipes pi sees as tools: tool names or
	// globs (* and ?), "default" for the default set, and "!pattern" to
	// leave tools out. Empty means the default set (spawn, message,
	// inspect, the knowledge tools query_graph, manage_graph,
	// manage_changelog, search_all, recall, and every recipe).
	// $PI_ACTORS_PI_TOOLS (comma-separated) replaces it.
	Tools []string `toml:"tools" json:"tools"`
	// KnowledgeBudget bounds the knowledge added when pi's read, edit or
	// write touches a path, in tokens (about four characters each);
	// 0 turns path knowledge off.
	KnowledgeBudget int `toml:"knowledge_budget" json:"knowledge_budget"`
	// Recall adds the top recall hits for the prompt before each agent
	// start (off by default).
	Recall bool `toml:"recall" json:"recall"`
	// RecordSummary records a pi session's final assistant message as a
	// history node when the session ends (off by default).
	RecordSummary bool `toml:"record_summary" json:"record_summary"`
}

// maxKnowledgeBudget caps pi.knowledge_budget (tokens).
const maxKnowledgeBudget = 50000

func piDefaults() Pi { return Pi{KnowledgeBudget: 1500} }

// toolPatternForm says what a pi.tools entry may be.
const toolPatternForm = `a tool name or glob (letters, digits, _ - . * ?, an optional leading !; e.g. "recall", "utility-*", "!manage_*")`

// applyEnv applies $PI_ACTORS_PI_TOOLS; an entry that is no tool pattern
// is the variable's error (EnvError), not the file's.
func (p *Pi) applyEnv() error {
	v, ok := os.LookupEnv("PI_ACTORS_PI_TOOLS")
	if !ok || strings.TrimSpace(v) == "" {
		return nil
	}
	var tools []string
	for _, w := range strings.Split(v, ",") {
		if w = strings.TrimSpace(w); w == "" {
			continue
		}
		if !toolPattern(w) {
			return &EnvError{Name: "PI_ACTORS_PI_TOOLS", Msg: fmt.Sprintf("PI_ACTORS_PI_TOOLS entry %q is not %s", w, toolPatternForm)}
		}
		tools = append(tools, w)
	}
	p.Tools = tools
	return nil
}

func (p Pi) check(path string) error {
	if p.KnowledgeBudget < 0 || p.KnowledgeBudget > maxKnowledgeBudget {
		return fmt.Errorf("%w: %s: pi.knowledge_budget must be between 0 (off) and %d tokens (got %d)", ErrInvalid, path, maxKnowledgeBudget, p.KnowledgeBudget)
	}
	for _, t := range p.Tools {
		if !toolPattern(t) {
			return fmt.Errorf("%w: %s: pi.tools entry %q is not %s", ErrInvalid, path, t, toolPatternForm)
		}
	}
	return nil
}

// toolPattern reports whether s is a tool name or glob, optionally
// negated.
func toolPattern(s string) bool {
	s = strings.TrimPrefix(s, "!")
	if s == "" || len(s) > 128 {
		return false
	}
	for _, r := range s {
		ok := r == '_' || r == '-' || r == '.' || r == '*' || r == '?' ||
			'A' <= r && r <= 'Z' || 'a' <= r && r <= 'z' || '0' <= r && r <= '9'
		if !ok {
			return false
		}
	}
	return true
}
