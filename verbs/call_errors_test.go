package verbs_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-actors/pi-actors/internal/config"
	"github.com/pi-actors/pi-actors/verbs"
)

// callEnv is a JSON caller's environment (the pi extension's, MCP's): no
// live output, the result carries the failure.
func callEnv(t *testing.T) *verbs.Env {
	t.Helper()
	agent := filepath.Join(t.TempDir(), "agent")
	if err := os.MkdirAll(filepath.Join(agent, "recipes"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PI_CODING_AGENT_DIR", agent)
	return &verbs.Env{AgentDir: agent, Config: config.Defaults(), Cwd: t.TempDir(), Environ: os.Environ(), JSON: true}
}

func writeRecipe(t *testing.T, env *verbs.Env, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(env.AgentDir, "recipes", name+".json"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func runVerb(t *testing.T, env *verbs.Env, verb string, params map[string]any) *verbs.Outcome {
	t.Helper()
	spec := verbs.Find(verb)
	raw, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	req, err := spec.DecodeJSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	out, err := spec.Run(context.Background(), env, req)
	if err != nil {
		t.Fatalf("%s %v: %v", verb, params, err)
	}
	return out
}

// A failed call's error message — all an agent reads of it (the pi
// extension and MCP show code, message and hint) — ends with the end of
// the failing command's stderr; the command line before it is cut short,
// and a stderr cut short says where the whole is.
func TestCallFailureMessageCarriesStderr(t *testing.T) {
	env := callEnv(t)
	long := strings.Repeat("p", 5000)
	writeRecipe(t, env, "why", `{"template": "sh -c 'echo WHY-IT-FAILED >&2; exit 3'"}`)
	writeRecipe(t, env, "noisy", `{"args": ["prompt"], "template": "sh -c 'i=1; while [ $i -le 300 ]; do echo noise line $i >&2; i=$((i+1)); done; echo 400 bad request from scripted model >&2; exit 1' {prompt}"}`)
	writeRecipe(t, env, "oneline", `{"template": "sh -c 'printf \"%04000d the cause at the end\" 7 >&2; exit 5'"}`)
	writeRecipe(t, env, "silent", `{"template": "sh -c 'echo only stdout; exit 4'"}`)

	fail := func(verb string, params map[string]any, exit int) *verbs.Error {
		t.Helper()
		out := runVerb(t, env, verb, params)
		if out.Fail == nil || out.Exit != exit || out.Fail.Code != "command_failed" {
			t.Fatalf("%s %v: exit %d fail %+v, want command_failed with exit %d", verb, params, out.Exit, out.Fail, exit)
		}
		return out.Fail
	}

	e := fail("call", map[string]any{"recipe": "why"}, 3)
	if want := "exit 3 from sh -c 'echo WHY-IT-FAILED >&2; exit 3' (at template); stderr: WHY-IT-FAILED"; e.Message != want {
		t.Errorf("message %q, want %q", e.Message, want)
	}
	e = fail("exec", map[string]any{"template": "sh -c 'echo exec-cause >&2; exit 2'"}, 2)
	if !strings.HasSuffix(e.Message, "; stderr: exec-cause") {
		t.Errorf("exec message %q does not end with its stderr", e.Message)
	}

	// A long stderr: its last 20 lines, whole lines, and the file that
	// has all of it; the command line is cut well before.
	e = fail("call", map[string]any{"recipe": "noisy", "args": map[string]any{"prompt": long}}, 1)
	if len(e.Message) > 2600 {
		t.Errorf("message is %d bytes, want at most ~2,600:\n%s", len(e.Message), e.Message)
	}
	head, tail, ok := strings.Cut(e.Message, "):\n")
	if !ok || !strings.Contains(head, "; stderr (last 20 of 301 lines") || !strings.Contains(head, "chars] (at template)") {
		t.Fatalf("message %q: want a cut command, then `; stderr (last 20 of 301 lines, …; the whole: …):`", e.Message)
	}
	lines := strings.Split(tail, "\n")
	if len(lines) != 20 || lines[0] != "noise line 282" || lines[19] != "400 bad request from scripted model" {
		t.Errorf("stderr tail %q: want lines 282…300 and the cause", lines)
	}
	path, _ := e.Details.(map[string]any)["full_stderr_path"].(string)
	if !strings.Contains(head, "the whole: "+path) || path == "" {
		t.Errorf("message %q does not name the whole stderr's file %q", head, path)
	}
	whole, err := os.ReadFile(path)
	if err != nil || !strings.HasPrefix(string(whole), "noise line 1\n") || !strings.HasSuffix(string(whole), "scripted model\n") {
		t.Errorf("%s: %v, want the whole stderr (%d bytes)", path, err, len(whole))
	}

	// One line longer than the bound keeps its end.
	e = fail("call", map[string]any{"recipe": "oneline"}, 5)
	if _, tail, _ := strings.Cut(e.Message, "):\n"); !strings.HasPrefix(tail, "…") || !strings.HasSuffix(tail, "the cause at the end") || len(tail) > 2010 {
		t.Errorf("message %q: want …<the line's last ~2,000 bytes>", e.Message)
	}

	// Nothing on stderr: the exit and the command, nothing more.
	e = fail("call", map[string]any{"recipe": "silent"}, 4)
	if want := "exit 4 from sh -c 'echo only stdout; exit 4' (at template)"; e.Message != want {
		t.Errorf("message %q, want %q", e.Message, want)
	}
}

// A synchronous call gives its template {pi_actors} — the CLI a run gets
// ($PI_ACTORS_BIN here) — so a packaged utility recipe
// (`{pi_actors=pi-actors} stage …`) works with pi-actors off PATH; a
// value the caller gives wins.
func TestSyncCallInjectsCLI(t *testing.T) {
	env := callEnv(t)
	bin := filepath.Join(t.TempDir(), "my-pi-actors")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho \"cli $*\"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PI_ACTORS_BIN", bin)
	t.Setenv("PATH", t.TempDir()) // no pi-actors on it
	env.Environ = os.Environ()

	out := runVerb(t, env, "call", map[string]any{"recipe": "utility-artifact-manifest", "args": map[string]any{"artifact_path": "x.txt"}})
	if out.Fail != nil || !strings.HasPrefix(out.Text, "cli stage artifact-manifest path=x.txt ") {
		t.Fatalf("call utility-artifact-manifest: exit %d fail %+v text %q, want %s to run", out.Exit, out.Fail, out.Text, bin)
	}
	out = runVerb(t, env, "exec", map[string]any{"template": "{pi_actors} stage x"})
	if out.Fail != nil || out.Text != "cli stage x\n" {
		t.Fatalf("exec {pi_actors}: fail %+v text %q, want %s to run", out.Fail, out.Text, bin)
	}
	out = runVerb(t, env, "exec", map[string]any{"template": "{pi_actors} stage x", "values": map[string]any{"pi_actors": "/bin/echo"}})
	if out.Fail != nil || out.Text != "stage x\n" {
		t.Fatalf("exec with pi_actors=/bin/echo: fail %+v text %q, want the caller's value to win", out.Fail, out.Text)
	}
}
