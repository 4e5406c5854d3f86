package stage

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/recipes/template"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs"
)

// testEnv is an Env for stages outside a run: cwd and agent root in
// temp dirs.
func testEnv(t *testing.T) *verbs.Env {
	t.Helper()
	agent := t.TempDir()
	t.Setenv("PI_CODING_AGENT_DIR", agent)
	return &verbs.Env{AgentDir: agent, Cwd: t.TempDir(), Environ: []string{"PATH=" + os.Getenv("PATH")}}
}

// run runs a stage with stdin and returns stdout, stderr and the error.
func run(t *testing.T, env *verbs.Env, stdin string, name string, args ...string) (string, string, error) {
	t.Helper()
	var out, errw bytes.Buffer
	err := Run(context.Background(), env, name, args, IO{In: strings.NewReader(stdin), Out: &out, Err: &errw})
	return out.String(), errw.String(), err
}

// exitOf is the exit code an error maps to.
func exitOf(err error) int {
	if err == nil {
		return 0
	}
	return verbs.Classify(err).Exit
}

func TestParseChecksEveryParameter(t *testing.T) {
	env := testEnv(t)
	for _, tc := range []struct {
		name string
		args []string
		want string
		code int
	}{
		{"nope", nil, `unknown stage "nope"`, 64},
		{"quorum", []string{"min=1", "max=2"}, "unknown parameter max (parameters: min)", 64},
		{"quorum", []string{"minimum"}, `"minimum" is not key=value`, 64},
		{"quorum", []string{"--", "x"}, "takes no command after --", 64},
		{"validate", []string{"dir=."}, "needs the command after --", 64},
		{"validate", []string{"dir=.", "--"}, "needs the command after --", 64},
		{"quorum", []string{"min=-1"}, "min must be a non-negative integer", 65},
		{"validate", []string{"strict=maybe", "--", "true"}, "strict must be true or false", 65},
		{"artifact-write", []string{"path=x", "mode=replace"}, "mode must be one of create, overwrite, append", 65},
		{"artifact-write", nil, "needs path=<file>", 64},
		{"await", []string{"types=control.reply,", "given=x"}, "types must be message types", 65},
		{"await", []string{"wait=soon", "given=x"}, "wait must be a duration", 65},
		{"await", nil, "inside a run", 64},
		{"actor-message", nil, "needs type=", 64},
		{"actor-message", []string{"type=a.b", "metadata=[1]"}, "metadata must be a JSON object", 65},
		{"actor-message", []string{"type=a.b"}, "no sender", 64},
	} {
		_, _, err := run(t, env, "", tc.name, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || exitOf(err) != tc.code {
			t.Errorf("%s %q: err %v (exit %d), want %q exit %d", tc.name, tc.args, err, exitOf(err), tc.want, tc.code)
		}
	}
}

func TestActorMessageWithoutSend(t *testing.T) {
	env := testEnv(t)
	out, _, err := run(t, env, `{"verdict":"ok"}`, "actor-message", "type=review.completed", "from=run:r1", "send=false", "metadata={\"k\":1}", "correlation_id=c1")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"body":{"verdict":"ok"},"correlation_id":"c1","from":"run:r1","metadata":{"k":1},"sent":false,"summary":"review.completed","to":"coordinator","type":"review.completed"}` + "\n"
	if out != want {
		t.Errorf("envelope\n%s want\n%s", out, want)
	}
	// Text that is not JSON is a string body; echo=body passes stdin through.
	out, _, err = run(t, env, "# Report\nfine\n", "actor-message", "type=a.b", "send=false", "echo=body")
	if err != nil || out != "# Report\nfine\n" {
		t.Errorf("echo=body: %q %v", out, err)
	}
	out, _, _ = run(t, env, "# Report\n", "actor-message", "type=a.b", "send=false")
	if !strings.Contains(out, `"body":"# Report"`) {
		t.Errorf("text body: %s", out)
	}
	// A bad address is refused before anything is sent.
	_, _, err = run(t, env, "x", "actor-message", "type=a.b", "to=nowhere:x", "send=false")
	if exitOf(err) != 65 {
		t.Errorf("bad address: %v (exit %d)", err, exitOf(err))
	}
}

func TestAwaitGiven(t *testing.T) {
	env := testEnv(t)
	out, _, err := run(t, env, "CHECKPOINT\n", "await", "given=use plan B")
	if err != nil {
		t.Fatal(err)
	}
	if want := "CHECKPOINT\n\n## Coordinator reply\nuse plan B\n"; out != want {
		t.Errorf("got %q want %q", out, want)
	}
	out, _, _ = run(t, env, "", "await", "given=only")
	if out != "## Coordinator reply\nonly\n" {
		t.Errorf("no input: %q", out)
	}
}

func TestQuorum(t *testing.T) {
	env := testEnv(t)
	join := "--- branch: a status: done ---\nA\n--- branch: b status: failed ---\nexit: 1\n--- branch: c status: timeout ---\nexit: 124\n"
	out, errw, err := run(t, env, join, "quorum", "min=1")
	if err != nil || out != join || !strings.Contains(errw, "1 of 3 branches done (need 1)") {
		t.Errorf("min=1: %q %q %v", out, errw, err)
	}
	out, _, err = run(t, env, join, "quorum", "min=2")
	if exitOf(err) != 65 || out != "" || !strings.Contains(err.Error(), "1 of 3 branches done, need 2; not done: b (failed), c (timeout)") {
		t.Errorf("min=2: %q %v", out, err)
	}
	_, _, err = run(t, env, "no join here", "quorum")
	if exitOf(err) != 65 || !strings.Contains(err.Error(), "holds no parallel join") {
		t.Errorf("no join: %v", err)
	}
	if bs := template.JoinBranches(join); len(bs) != 3 || bs[1].Label != "b" || bs[1].Status != "failed" {
		t.Errorf("Branches: %+v", bs)
	}
	// An aborted branch (the composition was cancelled) is a branch, not done.
	aborted := join + "--- branch: d status: aborted ---\nexit: 143\n"
	if _, _, err := run(t, env, aborted, "quorum", "min=2"); exitOf(err) != 65 || !strings.Contains(err.Error(), "1 of 4 branches done, need 2; not done: b (failed), c (timeout), d (aborted)") {
		t.Errorf("aborted: %v", err)
	}
}

func TestArtifactWrite(t *testing.T) {
	env := testEnv(t)
	path := filepath.Join(env.Cwd, "out", "report.md")
	out, _, err := run(t, env, "one\n", "artifact-write", "path=out/report.md")
	if err != nil || !strings.Contains(out, `"bytes":4`) || !strings.Contains(out, `"mode":"create"`) || !strings.Contains(out, `"path":"`+path+`"`) {
		t.Fatalf("create: %s %v", out, err)
	}
	_, _, err = run(t, env, "two\n", "artifact-write", "path="+path)
	if exitOf(err) != 73 || !strings.Contains(err.Error(), "artifact already exists") {
		t.Errorf("create over existing: %v", err)
	}
	if _, _, err := run(t, env, "two\n", "artifact-write", "path="+path, "mode=append"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "one\ntwo\n" {
		t.Errorf("append: %q", b)
	}
	out, _, err = run(t, env, "three\n", "artifact-write", "path="+path, "mode=overwrite", "echo=content")
	if b, _ := os.ReadFile(path); err != nil || string(b) != "three\n" || out != "three\n" {
		t.Errorf("overwrite: file %q out %q %v", b, out, err)
	}
	_, _, err = run(t, env, "x", "artifact-write", "path="+env.Cwd)
	if exitOf(err) != 65 {
		t.Errorf("directory: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("temp files left beside the artifact: %v", entries)
	}
}

func TestArtifactManifest(t *testing.T) {
	env := testEnv(t)
	path := filepath.Join(env.Cwd, "a.md")
	out, _, err := run(t, env, "", "artifact-manifest", "path=a.md", "title=Report")
	if err != nil || !strings.Contains(out, `"exists":false`) || !strings.Contains(out, `"sha256":null`) {
		t.Fatalf("missing: %s %v", out, err)
	}
	os.WriteFile(path, []byte("abc"), 0o644)
	out, _, err = run(t, env, "", "artifact-manifest", "path="+path, "title=Report", "status=final", "summary=done")
	for _, want := range []string{`"exists":true`, `"bytes":3`, `"sha256":"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"`,
		`"title":"Report"`, `"status":"final"`, `"summary":"done"`, `"modified":"`} {
		if err != nil || !strings.Contains(out, want) {
			t.Errorf("manifest lacks %s: %s %v", want, out, err)
		}
	}
}

func TestChangelogSection(t *testing.T) {
	env := testEnv(t)
	os.WriteFile(filepath.Join(env.Cwd, "CHANGELOG.md"), []byte("# Changelog\n\n## Unreleased\n\n- new\n\n## 1.2.0 - 2026-01-01\n\n- old\n\n## 1.1.0\n- older\n"), 0o644)
	out, _, err := run(t, env, "", "changelog-section")
	if err != nil || out != "## Unreleased\n\n- new\n" {
		t.Errorf("unreleased: %q %v", out, err)
	}
	out, _, err = run(t, env, "", "changelog-section", "version=1.2.0")
	if err != nil || out != "## 1.2.0 - 2026-01-01\n\n- old\n" {
		t.Errorf("1.2.0: %q %v", out, err)
	}
	_, _, err = run(t, env, "", "changelog-section", "version=9.9")
	if exitOf(err) != 65 || !strings.Contains(err.Error(), "headings: Unreleased; 1.2.0 - 2026-01-01; 1.1.0") {
		t.Errorf("missing version: %v", err)
	}
	_, _, err = run(t, env, "", "changelog-section", "file=nope.md")
	if exitOf(err) != 66 {
		t.Errorf("missing file: %v", err)
	}
}

func TestNames(t *testing.T) {
	if got := strings.Join(Names(), ","); got != "actor-message,artifact-manifest,artifact-write,await,changelog-section,quorum,validate" {
		t.Errorf("Names = %s", got)
	}
	var e *verbs.Error
	if err := Run(context.Background(), testEnv(t), "x", nil, IO{}); !errors.As(err, &e) || e.Exit != 64 {
		t.Errorf("unknown stage: %v", err)
	}
}

// TestAwaitStopped: a stop (the leaf's SIGTERM cancels the context) while
// await waits on the run's inbox is exit 143, not an internal error.
func TestAwaitStopped(t *testing.T) {
	env := testEnv(t)
	dir := t.TempDir()
	if err := runs.Dir(dir).WriteJSON(runs.RunFile, &runs.Meta{Run: "aw", StateDir: dir}); err != nil {
		t.Fatal(err)
	}
	env.Environ = append(env.Environ, "PI_ACTORS_STATE_DIR="+dir, "PI_ACTORS_ADDRESS=run:aw")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := Run(ctx, env, "await", []string{"wait=30s"}, IO{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}})
	if exitOf(err) != 143 {
		t.Errorf("stopped await: %v (exit %d)", err, exitOf(err))
	}
}
