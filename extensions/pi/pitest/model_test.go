package pitest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func startModel(t *testing.T, steps ...Step) *Model {
	t.Helper()
	m, err := StartModel(steps...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// post sends one chat completion request and returns the response body.
func post(t *testing.T, m *Model, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(m.URL+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestModelAnswersByScript(t *testing.T) {
	m := startModel(t,
		Call("read", map[string]string{"path": "a.go"}).On("^go$"),
		Step{Match: `id=(\w+) "q`, Tools: []ToolCall{{Name: "get", Args: json.RawMessage(`{"id":"{{1}}"}`)}}, Text: "getting {{1}}"},
		Step{Prompt: "review", Text: "saw {{last}}", Times: -1},
	)
	code, body := post(t, m, `{"model":"x","messages":[{"role":"user","content":"made id=a1 \"q"}]}`)
	if code != 200 || !strings.Contains(body, `"arguments":"{\"id\":\"a1\"}"`) || !strings.Contains(body, `"content":"getting a1"`) {
		t.Fatalf("capture groups: %d %s", code, body)
	}
	code, body = post(t, m, `{"model":"x","stream":false,"messages":[{"role":"user","content":"review"},{"role":"tool","tool_call_id":"c1","content":[{"type":"text","text":"done"}]}]}`)
	if code != 200 || !strings.Contains(body, `"content":"saw done"`) || !strings.Contains(body, `"finish_reason":"stop"`) {
		t.Fatalf("text answer: %d %s", code, body)
	}
	code, body = post(t, m, `{"model":"x","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"go"}],"tools":[{"type":"function","function":{"name":"read"}}]}`)
	if code != 200 || !strings.Contains(body, `"arguments":"{\"path\":\"a.go\"}","name":"read"`) ||
		!strings.Contains(body, `"finish_reason":"tool_calls"`) || !strings.Contains(body, `"usage":`) || !strings.HasSuffix(body, "data: [DONE]\n\n") {
		t.Fatalf("streamed tool call: %d %s", code, body)
	}
	// The tool-call step was used up: "go" now fits nothing.
	code, body = post(t, m, `{"model":"x","messages":[{"role":"user","content":"go"}]}`)
	if code != 400 || !strings.Contains(body, "no step fits request 4") {
		t.Fatalf("unscripted request: %d %s", code, body)
	}
	reqs := m.Requests()[1:]
	if len(reqs) != 3 || reqs[0].Step != 2 || reqs[1].Step != 0 || reqs[2].Step != -1 || !reqs[1].HasTool("read") || reqs[0].Last() != "done" {
		t.Fatalf("requests: %+v", reqs)
	}
	if u := m.Unused(); len(u) != 0 {
		t.Fatalf("unused steps %v", u)
	}
	resp, err := http.Get(strings.TrimSuffix(m.URL, "/v1") + "/requests")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var served []Request
	if err := json.NewDecoder(resp.Body).Decode(&served); err != nil || len(served) != 4 {
		t.Fatalf("GET /requests: %v %d", err, len(served))
	}
}

func TestScriptFromJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "script.json")
	os.WriteFile(path, []byte(`[{"match":"x","tools":[{"name":"recall","args":{"query":"q"}}]},{"text":"t","times":-1},{"error":{"status":500,"message":"boom"}}]`), 0o644)
	steps, err := LoadScript(path)
	if err != nil || len(steps) != 3 || steps[0].Tools[0].Name != "recall" || steps[1].Times != -1 || steps[2].Error.Status != 500 {
		t.Fatalf("LoadScript: %v %+v", err, steps)
	}
	if _, err := StartModel(Step{}); err == nil || !strings.Contains(err.Error(), "answers nothing") {
		t.Fatalf("empty step: %v", err)
	}
	if _, err := StartModel(Step{Match: "(", Text: "x"}); err == nil {
		t.Fatal("a bad pattern is accepted")
	}
}

// TestRealPi drives the real pi CLI (no extension) with the scripted model:
// a read tool call, then a text answer that quotes the tool result.
func TestRealPi(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts the real pi")
	}
	node, _ := Node(t)
	modules := NodeModules(t)
	agent, work := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(work, "hello.txt"), []byte("hello from the file\n"), 0o644)
	m := startModel(t,
		Call("read", map[string]string{"path": "hello.txt"}),
		Step{Match: "hello from the file", Text: "the file says {{last}}"},
	)
	if err := WriteModels(agent, m.URL); err != nil {
		t.Fatal(err)
	}
	out := runPi(t, node, work, Env(os.Environ(), agent), Args(modules, "read hello.txt", "--no-extensions")...)
	reqs := m.Requests()
	if len(reqs) != 2 || !reqs[0].Stream || !reqs[0].HasTool("read") || reqs[0].Prompt() != "read hello.txt" {
		t.Fatalf("pi sent %d requests: %+v\n%s", len(reqs), reqs, out)
	}
	if !strings.Contains(reqs[1].Last(), "hello from the file") || reqs[1].Messages[len(reqs[1].Messages)-1].Role != "tool" {
		t.Fatalf("the tool result did not reach the model: %+v", reqs[1].Messages)
	}
	var ends []Event
	for _, e := range Events(out) {
		if e.Type == "tool_execution_end" {
			ends = append(ends, e)
		}
	}
	if len(ends) != 1 || ends[0].ToolName != "read" || ends[0].IsError || !bytes.Contains(out, []byte("the file says hello from the file")) {
		t.Fatalf("pi's events: %s", out)
	}
}

// runPi runs pi in its own process group, kills the group afterwards and
// returns its stdout; a failure shows stderr.
func runPi(t *testing.T, node, dir string, env []string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if err != nil {
		t.Fatalf("pi: %v\nstderr:\n%s\nstdout:\n%s", err, stderr.Bytes(), tail(stdout.Bytes()))
	}
	return stdout.Bytes()
}
