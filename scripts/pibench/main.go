// Command pibench is the Go half of scripts/bench-pi.sh: it drives the real
// pi CLI (the pinned npm package) with the scripted model of package pitest
// and the pi-actors on PATH, and prints every figure as one "key value"
// line for the script to lay out beside its target:
//
//	startup_plain_ms, startup_ext_ms   pi answering one prompt without and
//	                                   with the extension (medians, interleaved)
//	tool_e2e_ms, tool_verb_ms          one `recall` tool call through pi and
//	                                   the extension, and the verb's own time
//	tool_read_ms                       pi's own read of a small file
//	lookup_bridge_ms, lookup_bridge_p90_ms, lookup_cli_ms
//	                                   query_graph context for one path
//	                                   through the extension's bridge, and
//	                                   with a CLI process per lookup
//
//	pibench -agent DIR -repo DIR [-n 11] [-tools 20] [-lookups 300] [-atoms 10000]
//
// The agent root must hold the installed extension; the repository its
// knowledge store with the atoms (src/m<i>/**).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pi-actors/pi-actors/extensions/pi/pitest"
)

func main() {
	agent := flag.String("agent", "", "agent root (PI_CODING_AGENT_DIR) with the extension installed")
	repo := flag.String("repo", "", "project directory with the knowledge store")
	n := flag.Int("n", 11, "pi start-ups timed per side")
	tools := flag.Int("tools", 20, "tool calls timed in one pi session")
	lookups := flag.Int("lookups", 300, "path lookups timed through the bridge")
	atoms := flag.Int("atoms", 10000, "atoms in the store (src/m<i>/**)")
	flag.Parse()
	if *agent == "" || *repo == "" {
		fmt.Fprintln(os.Stderr, "usage: pibench -agent DIR -repo DIR [-n N] [-tools T] [-lookups L] [-atoms A]")
		os.Exit(2)
	}
	b := &bench{agent: *agent, repo: *repo}
	if err := b.run(*n, *tools, *lookups, *atoms); err != nil {
		fmt.Fprintln(os.Stderr, "pibench:", err)
		os.Exit(1)
	}
}

type bench struct {
	agent, repo   string
	node, modules string
	model         *pitest.Model
	env           []string
}

func out(key string, v any) { fmt.Printf("%s %v\n", key, v) }

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d.Microseconds())/1000) }

func median(ds []time.Duration) time.Duration { return quantile(ds, 0.5) }

func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

func (b *bench) run(n, tools, lookups, atoms int) error {
	modules, _, err := pitest.InstallModules()
	if err != nil {
		return err
	}
	if b.node, err = exec.LookPath("node"); err != nil {
		return err
	}
	b.modules = modules
	// hello → text; tools → `tools` recall calls one after another, then text.
	b.model, err = pitest.StartModel(
		pitest.Step{Prompt: "^hello$", Text: "hi", Times: -1},
		pitest.Call("recall", map[string]string{"query": "webhook retry"}).On("^tools$"),
		pitest.Step{Prompt: "^tools$", Match: "status=", Tools: []pitest.ToolCall{{Name: "recall", Args: json.RawMessage(`{"query":"webhook retry"}`)}}, Times: tools - 1},
		pitest.Step{Prompt: "^tools$", Match: "status=", Text: "done", Times: -1},
		pitest.Call("read", map[string]string{"path": "README.md"}).On("^reads$"),
		pitest.Step{Prompt: "^reads$", Match: "bench readme", Tools: []pitest.ToolCall{{Name: "read", Args: json.RawMessage(`{"path":"README.md"}`)}}, Times: tools - 1},
		pitest.Step{Prompt: "^reads$", Match: "bench readme", Text: "done", Times: -1},
	)
	if err != nil {
		return err
	}
	defer b.model.Close()
	if err := pitest.WriteModels(b.agent, b.model.URL); err != nil {
		return err
	}
	b.env = pitest.Env(os.Environ(), b.agent)
	if err := b.startup(n); err != nil {
		return err
	}
	if err := b.toolCalls(tools); err != nil {
		return err
	}
	return b.lookups(lookups, atoms)
}

// pi runs pi once and returns its wall time and stdout lines with the time
// each arrived.
func (b *bench) pi(prompt string, extra ...string) (time.Duration, []line, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.node, pitest.Args(b.modules, prompt, extra...)...)
	cmd.Dir, cmd.Env = b.repo, b.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, nil, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, nil, err
	}
	var lines []line
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		lines = append(lines, line{at: time.Since(start), text: sc.Text()})
	}
	err = cmd.Wait()
	took := time.Since(start)
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if err != nil {
		return 0, nil, fmt.Errorf("pi %q: %v\n%s", prompt, err, stderr.String())
	}
	return took, lines, nil
}

type line struct {
	at   time.Duration
	text string
}

// startup: one trivial prompt, without and with the extension, interleaved.
func (b *bench) startup(n int) error {
	for range 2 { // warm-up: node's compile cache, the kernel, page cache
		if _, _, err := b.pi("hello", "--no-extensions"); err != nil {
			return err
		}
		if _, _, err := b.pi("hello"); err != nil {
			return err
		}
	}
	var plain, ext []time.Duration
	for range n {
		t, _, err := b.pi("hello", "--no-extensions")
		if err != nil {
			return err
		}
		plain = append(plain, t)
		t, _, err = b.pi("hello")
		if err != nil {
			return err
		}
		ext = append(ext, t)
	}
	out("startup_plain_ms", ms(median(plain)))
	out("startup_ext_ms", ms(median(ext)))
	return nil
}

// toolCalls: `tools` recall calls in one session; each call's time from
// pi's tool_execution_start to tool_execution_end (as the events reach
// stdout), beside pi's own read of a small file (what any tool costs in
// pi), and the verb's own time in a bridge.
func (b *bench) toolCalls(tools int) error {
	e2e, err := b.toolTimes("tools", tools)
	if err != nil {
		return err
	}
	if err := os.WriteFile(b.repo+"/README.md", []byte("bench readme\n"), 0o644); err != nil {
		return err
	}
	reads, err := b.toolTimes("reads", tools)
	if err != nil {
		return err
	}
	br, err := startBridge(b.repo, b.env)
	if err != nil {
		return err
	}
	defer br.close()
	var verb []time.Duration
	for range tools + 1 {
		r, _, err := br.call(map[string]any{"verb": "recall", "params": map[string]string{"query": "webhook retry"}, "cwd": b.repo})
		if err != nil {
			return err
		}
		verb = append(verb, time.Duration(r.MS*float64(time.Millisecond)))
	}
	out("tool_e2e_ms", ms(median(e2e)))
	out("tool_read_ms", ms(median(reads)))
	out("tool_verb_ms", ms(median(verb[1:])))
	return nil
}

// toolTimes runs pi with prompt and returns each tool call's time.
func (b *bench) toolTimes(prompt string, tools int) ([]time.Duration, error) {
	_, lines, err := b.pi(prompt)
	if err != nil {
		return nil, err
	}
	started := map[string]time.Duration{}
	var e2e []time.Duration
	for _, l := range lines {
		var ev pitest.Event
		if json.Unmarshal([]byte(l.text), &ev) != nil {
			continue
		}
		switch ev.Type {
		case "tool_execution_start":
			started[ev.ToolCallID] = l.at
		case "tool_execution_end":
			if ev.IsError {
				return nil, fmt.Errorf("%s failed through pi: %s", ev.ToolName, ev.Result)
			}
			if s, ok := started[ev.ToolCallID]; ok {
				e2e = append(e2e, l.at-s)
			}
		}
	}
	if len(e2e) != tools {
		return nil, fmt.Errorf("pi made %d tool calls for %q, want %d", len(e2e), prompt, tools)
	}
	return e2e, nil
}

// lookups: query_graph context for one path at a time, as the extension
// asks it, through one bridge; and with a CLI process per lookup.
func (b *bench) lookups(n, atoms int) error {
	br, err := startBridge(b.repo, b.env)
	if err != nil {
		return err
	}
	defer br.close()
	path := func() string { return fmt.Sprintf("%s/src/m%d/handler.ts", b.repo, rand.IntN(atoms)) }
	var rt []time.Duration
	for i := range n + 10 {
		r, took, err := br.call(map[string]any{"verb": "query_graph", "params": map[string]any{"operation": "context", "paths": []string{path()}}, "cwd": b.repo, "timeout_ms": 2000})
		if err != nil {
			return err
		}
		if !r.OK || !strings.Contains(string(r.Result), `"orphanAtoms":[{`) {
			return fmt.Errorf("lookup: %s", r.Result)
		}
		if i >= 10 {
			rt = append(rt, took)
		}
	}
	var cli []time.Duration
	for i := range 31 {
		start := time.Now()
		cmd := exec.Command("pi-actors", "query_graph", "-", "--json")
		cmd.Dir, cmd.Env = b.repo, b.env
		cmd.Stdin = strings.NewReader(fmt.Sprintf(`{"operation":"context","paths":[%q]}`, path()))
		if o, err := cmd.Output(); err != nil || !strings.Contains(string(o), `"orphanAtoms":[{`) {
			return fmt.Errorf("pi-actors query_graph: %v %s", err, o)
		}
		if i > 0 {
			cli = append(cli, time.Since(start))
		}
	}
	out("lookup_bridge_ms", ms(median(rt)))
	out("lookup_bridge_p90_ms", ms(quantile(rt, 0.9)))
	out("lookup_cli_ms", ms(median(cli)))
	return nil
}

// bridge is one `pi-actors bridge`, called one request at a time.
type bridge struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Scanner
	mu   sync.Mutex
	next int
}

type reply struct {
	ID     int             `json:"id"`
	OK     bool            `json:"ok"`
	Result json.RawMessage `json:"result"`
	MS     float64         `json:"ms"`
}

func startBridge(dir string, env []string) (*bridge, error) {
	cmd := exec.Command("pi-actors", "bridge")
	cmd.Dir, cmd.Env = dir, env
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	o, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	b := &bridge{cmd: cmd, in: in, out: bufio.NewScanner(o)}
	b.out.Buffer(make([]byte, 1<<20), 64<<20)
	if !b.out.Scan() {
		b.close()
		return nil, errors.New("pi-actors bridge: no hello")
	}
	return b, nil
}

// call sends one request and waits for its reply; took is the round trip.
func (b *bridge) call(req map[string]any) (reply, time.Duration, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.next++
	req["id"] = b.next
	line, _ := json.Marshal(req)
	start := time.Now()
	if _, err := b.in.Write(append(line, '\n')); err != nil {
		return reply{}, 0, err
	}
	for b.out.Scan() {
		var r reply
		if json.Unmarshal(b.out.Bytes(), &r) == nil && r.ID == b.next {
			return r, time.Since(start), nil
		}
	}
	return reply{}, 0, fmt.Errorf("pi-actors bridge ended: %v", b.out.Err())
}

func (b *bridge) close() {
	b.in.Close()
	done := make(chan struct{})
	go func() {
		b.cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		b.cmd.Process.Kill()
		<-done
	}
}
