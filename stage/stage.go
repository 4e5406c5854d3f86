package stage

import (
	"context"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pi-actors/pi-actors/verbs"
)

// IO is what a stage reads and writes.
type IO struct {
	In       io.Reader
	Out, Err io.Writer
}

// Args are a stage's parameters: key=value words, and the words after a
// `--` (validate's command).
type Args struct {
	params map[string]string
	Argv   []string
}

// stageFunc runs one stage.
type stageFunc func(ctx context.Context, env *verbs.Env, a *Args, io IO) error

type spec struct {
	keys    []string
	argv    bool // takes a command after --
	summary string
	run     stageFunc
}

var stages = map[string]spec{
	"actor-message": {[]string{"type", "to", "from", "summary", "metadata", "correlation_id", "reply_to", "send", "echo", "body"}, false,
		"type=<channel.action> [to=coordinator] [from=run:<id>] [summary=] [metadata={…}] [correlation_id=] [reply_to=] [send=true] [echo=envelope|body] [body=<text>]  (body: body=, else stdin)", actorMessage},
	"await": {[]string{"types", "wait", "given"}, false,
		"[types=control.reply,control.revise] [wait=10m] [given=<reply>]  (stdin passes through first)", await},
	"quorum": {[]string{"min"}, false, "[min=1]  (stdin: a parallel join, passed through)", quorum},
	"artifact-write": {[]string{"path", "mode", "echo", "content"}, false,
		"path=<file> [mode=create|overwrite|append] [echo=result|content] [content=<text>]  (content: content=, else stdin)", artifactWrite},
	"artifact-manifest": {[]string{"path", "title", "status", "summary"}, false,
		"path=<file> [title=Artifact] [status=draft] [summary=]", artifactManifest},
	"changelog-section": {[]string{"file", "version"}, false, "[file=CHANGELOG.md] [version=Unreleased]", changelogSection},
	"validate": {[]string{"dir", "timeout_ms", "strict", "lines", "label", "skip"}, true,
		"[dir=.] [timeout_ms=300000] [strict=false] [lines=80] [label=validation] [skip=false] -- <command argv…>", validate},
}

// Names lists the stages.
func Names() []string {
	out := make([]string, 0, len(stages))
	for n := range stages {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Usage is the verb's usage text.
func Usage() string {
	var b strings.Builder
	b.WriteString("pi-actors stage <name> key=value… [-- argv…]   (the packaged pipeline recipes' steps; see docs/recipes.md)\n\n")
	for _, n := range Names() {
		b.WriteString("  " + n + " " + stages[n].summary + "\n")
	}
	return b.String()
}

// Run runs stage name with its raw arguments.
func Run(ctx context.Context, env *verbs.Env, name string, raw []string, io IO) error {
	s, ok := stages[name]
	if !ok {
		return verbs.Usagef("stage: unknown stage %q; stages: %s", name, strings.Join(Names(), ", "))
	}
	a, err := parse(name, s, raw)
	if err != nil {
		return err
	}
	return s.run(ctx, env, a, io)
}

// parse reads key=value words up to `--`, checking every key.
func parse(name string, s spec, raw []string) (*Args, error) {
	a := &Args{params: map[string]string{}}
	for i, w := range raw {
		if w == "--" {
			if !s.argv {
				return nil, verbs.Usagef("stage %s takes no command after --", name)
			}
			a.Argv = raw[i+1:]
			break
		}
		k, v, ok := strings.Cut(w, "=")
		if !ok || k == "" {
			return nil, verbs.Usagef("stage %s: %q is not key=value; usage: %s %s", name, w, name, s.summary)
		}
		if !slices.Contains(s.keys, k) {
			return nil, verbs.Usagef("stage %s: unknown parameter %s (parameters: %s)", name, k, strings.Join(s.keys, ", "))
		}
		a.params[k] = v
	}
	if s.argv && len(a.Argv) == 0 {
		return nil, verbs.Usagef("stage %s needs the command after --: %s %s", name, name, s.summary)
	}
	return a, nil
}

// Get is a parameter, or def when it is absent or empty.
func (a *Args) Get(key, def string) string {
	if v := strings.TrimSpace(a.params[key]); v != "" {
		return v
	}
	return def
}

// Raw is a parameter exactly as given ("" when absent).
func (a *Args) Raw(key string) string { return a.params[key] }

// Int is a non-negative integer parameter.
func (a *Args) Int(stageName, key string, def int) (int, error) {
	v := a.Get(key, "")
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, verbs.Invalidf("stage %s: %s must be a non-negative integer (got %q)", stageName, key, v)
	}
	return n, nil
}

// Bool is a boolean parameter (true/false, yes/no, 1/0).
func (a *Args) Bool(stageName, key string, def bool) (bool, error) {
	switch strings.ToLower(a.Get(key, "")) {
	case "":
		return def, nil
	case "true", "yes", "1":
		return true, nil
	case "false", "no", "0":
		return false, nil
	}
	return false, verbs.Invalidf("stage %s: %s must be true or false (got %q)", stageName, key, a.Get(key, ""))
}

// Enum is a parameter that must be one of values (the first is the
// default).
func (a *Args) Enum(stageName, key string, values ...string) (string, error) {
	v := a.Get(key, values[0])
	if !slices.Contains(values, v) {
		return "", verbs.Invalidf("stage %s: %s must be one of %s (got %q)", stageName, key, strings.Join(values, ", "), v)
	}
	return v, nil
}

// Duration is a duration parameter (10s, 5m; a bare number is seconds).
func (a *Args) Duration(stageName, key string, def time.Duration) (time.Duration, error) {
	v := a.Get(key, "")
	if v == "" {
		return def, nil
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, verbs.Invalidf("stage %s: %s must be a duration like 30s or 10m (got %q)", stageName, key, v)
	}
	return d, nil
}

// envValue is one variable of env's environment.
func envValue(env *verbs.Env, key string) string {
	for i := len(env.Environ) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env.Environ[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}
