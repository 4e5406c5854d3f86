package piext

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/pi-actors/pi-actors/internal/testproc"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/extensions/pi/pitest"
)

// The real-pi tests run the real pi CLI (the pinned npm package) with the
// extension installed by the real `pi-actors install pi`, the real
// pi-actors binaries and kernel, and the scripted model (pitest) in place
// of an LLM; they assert on what pi sent the model.

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
	buildOut  []byte
)

// binaries builds pi-actors, pi-actors-kernel, pi-actors-front and pi-actors-supervise once per test process.
func binaries(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "piext-bin-")
		if err != nil {
			buildErr = err
			return
		}
		cmd := exec.Command("go", "build", "-o", dir+"/", "github.com/pi-actors/pi-actors/cmd/pi-actors", "github.com/pi-actors/pi-actors/cmd/pi-actors-kernel", "github.com/pi-actors/pi-actors/cmd/pi-actors-front", "github.com/pi-actors/pi-actors/cmd/pi-actors-supervise")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		buildOut, buildErr = cmd.CombinedOutput()
		builtBin = dir
	})
	if buildErr != nil {
		t.Fatalf("build the binaries: %v\n%s", buildErr, buildOut)
	}
	return builtBin
}

func TestMain(m *testing.M) {
	testproc.Watchdog()
	code := m.Run()
	if builtBin != "" {
		os.RemoveAll(builtBin)
	}
	os.Exit(code)
}

// realPi is one test's world: an agent root with the extension installed
// and models.json pointing at the scripted model, a project directory,
// and the binaries on PATH.
type realPi struct {
	t       *testing.T
	node    string
	modules string
	bin     string
	agent   string
	work    string
	model   *pitest.Model
	env     []string
}

func newRealPi(t *testing.T, steps ...pitest.Step) *realPi {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: starts the real pi")
	}
	node, _ := pitest.Node(t)
	r := &realPi{t: t, node: node, modules: pitest.NodeModules(t), bin: binaries(t), agent: t.TempDir(), work: t.TempDir()}
	m, err := pitest.StartModel(steps...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	r.model = m
	if err := pitest.WriteModels(r.agent, m.URL); err != nil {
		t.Fatal(err)
	}
	r.env = pitest.Env(os.Environ(), r.agent, "PATH="+r.bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Cleanup(func() { r.cli("kernel", "stop") })
	r.cli("install", "pi")
	return r
}

// script adds steps for the next run.
func (r *realPi) script(steps ...pitest.Step) {
	r.t.Helper()
	if err := r.model.Add(steps...); err != nil {
		r.t.Fatal(err)
	}
}

// cli runs the real pi-actors in the project directory and returns stdout.
func (r *realPi) cli(args ...string) string {
	r.t.Helper()
	return r.cliIn(r.work, "", args...)
}

func (r *realPi) cliIn(dir, stdin string, args ...string) string {
	r.t.Helper()
	cmd := exec.Command(filepath.Join(r.bin, "pi-actors"), args...)
	cmd.Dir, cmd.Env = dir, r.env
	cmd.Stdin = strings.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil && !(len(args) == 2 && args[0] == "kernel" && args[1] == "stop") {
		r.t.Fatalf("pi-actors %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return string(out)
}

// file writes a file under the project directory.
func (r *realPi) file(rel, content string) {
	r.t.Helper()
	p := filepath.Join(r.work, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// toml writes <agent>/pi-actors.toml.
func (r *realPi) toml(body string) {
	r.t.Helper()
	if err := os.WriteFile(filepath.Join(r.agent, "pi-actors.toml"), []byte(body), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// atom creates an atom in the project store (knowledge init first).
func (r *realPi) atom(name, paths, knowledge string) {
	r.t.Helper()
	r.cli("knowledge", "manage_graph", "operation=create", "entityType=atom", "name="+name, "paths:="+paths, "knowledge="+knowledge, "createdByTaskId=test")
}

// run runs pi once with prompt and returns its JSON event stream.
func (r *realPi) run(prompt string, extraEnv ...string) []byte {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.node, pitest.Args(r.modules, prompt)...)
	cmd.Dir, cmd.Env = r.work, append(append([]string(nil), r.env...), extraEnv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if err != nil {
		r.t.Fatalf("pi: %v\nstderr:\n%s\nstdout:\n%s\nlog:\n%s", err, stderr.Bytes(), stdout.Bytes(), r.extLog())
	}
	if u := r.model.Unused(); len(u) > 0 {
		r.t.Fatalf("pi never reached script steps %v\nrequests: %s\nstderr:\n%s\nlog:\n%s", u, r.dump(), stderr.Bytes(), r.extLog())
	}
	return stdout.Bytes()
}

// extLog is the extension's log.
func (r *realPi) extLog() string {
	b, _ := os.ReadFile(filepath.Join(r.agent, "tmp", "pi-actors", "pi-extension.log"))
	return string(b)
}

// dump shows the recorded requests' messages, for failures.
func (r *realPi) dump() string {
	var b strings.Builder
	for _, req := range r.model.Requests() {
		b.WriteString("--- request " + itoa(req.N) + " tools=" + strings.Join(req.Tools, ",") + "\n")
		for _, m := range req.Messages {
			if m.Role != "system" {
				b.WriteString(m.Role + ": " + m.Text + "\n")
			}
		}
	}
	return b.String()
}

// last is the last request pi sent.
func (r *realPi) last() pitest.Request {
	r.t.Helper()
	reqs := r.model.Requests()
	if len(reqs) == 0 {
		r.t.Fatal("pi sent no request")
	}
	return reqs[len(reqs)-1]
}

// toolResults are the tool results of pi's event stream, by tool name, in order.
func toolResults(out []byte) (names []string, texts []string) {
	for _, e := range pitest.Events(out) {
		if e.Type != "tool_execution_end" {
			continue
		}
		var res struct {
			Content []struct{ Text string } `json:"content"`
		}
		json.Unmarshal(e.Result, &res)
		var parts []string
		for _, c := range res.Content {
			parts = append(parts, c.Text)
		}
		names = append(names, e.ToolName)
		texts = append(texts, strings.Join(parts, "\n"))
	}
	return names, texts
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// kernelPid is the running kernel's pid.
func (r *realPi) kernelPid() int {
	r.t.Helper()
	var st struct {
		Result struct {
			Pid int `json:"pid"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(r.cli("kernel", "status", "--json")), &st); err != nil || st.Result.Pid == 0 {
		r.t.Fatalf("kernel status: %v %+v", err, st)
	}
	return st.Result.Pid
}

// toolWait is the time between the last assistant message that called
// tool and that call's result, from the newest session file.
func (r *realPi) toolWait(t *testing.T, tool string) time.Duration {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(r.agent, "sessions", "*", "*.jsonl"))
	if len(files) == 0 {
		t.Fatal("no session file")
	}
	slices.SortFunc(files, func(a, b string) int {
		fa, _ := os.Stat(a)
		fb, _ := os.Stat(b)
		return fa.ModTime().Compare(fb.ModTime())
	})
	b, err := os.ReadFile(files[len(files)-1])
	if err != nil {
		t.Fatal(err)
	}
	var called, answered int64
	for _, line := range strings.Split(string(b), "\n") {
		var e struct {
			Type    string `json:"type"`
			Message struct {
				Role      string `json:"role"`
				ToolName  string `json:"toolName"`
				Timestamp int64  `json:"timestamp"`
				Content   []struct {
					Type string `json:"type"`
					Name string `json:"name"`
				} `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal([]byte(line), &e) != nil || e.Type != "message" {
			continue
		}
		m := e.Message
		if m.Role == "assistant" && slices.ContainsFunc(m.Content, func(c struct {
			Type string `json:"type"`
			Name string `json:"name"`
		}) bool {
			return c.Type == "toolCall" && c.Name == tool
		}) {
			called = m.Timestamp
		}
		if m.Role == "toolResult" && m.ToolName == tool && called != 0 {
			answered = m.Timestamp
		}
	}
	if called == 0 || answered == 0 {
		t.Fatalf("no %s call and result in %s:\n%s", tool, files[len(files)-1], b)
	}
	return time.Duration(answered-called) * time.Millisecond
}
