package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/pi-actors/pi-actors/extensions/pi/pitest"
	"github.com/pi-actors/pi-actors/runs"
)

// TestRecipes runs the packaged sub-agent and pipeline recipes end to end
// (testdata/recipes, one case per file) with the real pi CLI as the
// sub-agent — the pinned npm package, installed once — and a scripted
// OpenAI-compatible model (package pitest) in place of an LLM. Scripts
// assert on what pi sent the model, on the runs' files and messages, and
// on the processes left behind.
//
// Commands besides TestScripts' (alive, waitfile, freeport):
//
//	pimodel SCRIPT [ID…]   serve SCRIPT (a pitest JSON script) as the models
//	                       scripted/ID (default scripted/scripted-1)
//	pisent [-count=N] RE FILE
//	                       write the requests whose first user message
//	                       matches RE ((?ms) on) to FILE, one block each;
//	                       ! pisent RE: no request matches
//	piused                 every step of the script answered a request
//	piwait RE              wait until a request whose first user message
//	                       matches RE ((?ms) on) has arrived
//	waitrun ID STATUS      wait for run ID to end, and check its status
//	waitfor FILE RE        wait until FILE (under the agent's runs dir when
//	                       relative: <id>/outbox.jsonl) has a line matching RE
//	norunprocs ID          wait until no process of run ID is left
//	followup RE            wait until the session's follow-ups (drained by
//	                       inspect target=coordinator view=followups, kept
//	                       across calls in $WORK/followups.txt) match RE
func TestRecipes(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs the real pi CLI")
	}
	modules := pitest.NodeModules(t)
	// Several pi processes per script: at most three scripts at once on a
	// small machine.
	slots := make(chan struct{}, 3)
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/recipes",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			slots <- struct{}{}
			w := env.WorkDir
			agent := filepath.Join(w, "agent")
			for k, v := range map[string]string{"PI_CODING_AGENT_DIR": agent, "HOME": filepath.Join(w, "home"),
				"PI_ACTORS_SESSION": "", "PI_ACTORS_MAX_PARALLEL_BRANCHES": "", "PI_OFFLINE": "1",
				"PI_SKIP_VERSION_CHECK": "1", "TERM": "dumb", "RUNS": filepath.Join(agent, "tmp", "pi-actors", "runs")} {
				env.Setenv(k, v)
			}
			bin := filepath.Join(w, "pibin")
			if err := os.MkdirAll(bin, 0o755); err != nil {
				return err
			}
			if err := os.Symlink(pitest.CLI(modules), filepath.Join(bin, "pi")); err != nil {
				return err
			}
			env.Setenv("PATH", bin+string(os.PathListSeparator)+env.Getenv("PATH"))
			h := &modelHolder{}
			env.Values[modelKey{}] = h
			env.Defer(func() {
				stopKernel(env)
				killRecorded(w)
				h.close()
				<-slots
			})
			return os.MkdirAll(filepath.Join(w, "home"), 0o755)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"alive":      cmdAlive,
			"waitfile":   cmdWaitFile,
			"pimodel":    cmdPiModel,
			"pisent":     cmdPiSent,
			"piused":     cmdPiUsed,
			"piwait":     cmdPiWait,
			"waitrun":    cmdWaitRun,
			"waitfor":    cmdWaitFor,
			"norunprocs": cmdNoRunProcs,
			"followup":   cmdFollowup,
		},
	})
}

type modelKey struct{}

// modelHolder is a script's scripted model.
type modelHolder struct {
	mu sync.Mutex
	m  *pitest.Model
}

func (h *modelHolder) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m != nil {
		h.m.Close()
	}
}

func scriptModel(ts *testscript.TestScript) *pitest.Model {
	h := ts.Value(modelKey{}).(*modelHolder)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		ts.Fatalf("no scripted model: run pimodel first")
	}
	return h.m
}

func cmdPiModel(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: pimodel SCRIPT [ID…]")
	}
	steps, err := pitest.LoadScript(ts.MkAbs(args[0]))
	if err != nil {
		ts.Fatalf("%v", err)
	}
	m, err := pitest.StartModel(steps...)
	if err != nil {
		ts.Fatalf("%v", err)
	}
	h := ts.Value(modelKey{}).(*modelHolder)
	h.mu.Lock()
	if h.m != nil {
		h.m.Close()
	}
	h.m = m
	h.mu.Unlock()
	if err := pitest.WriteModels(ts.Getenv("PI_CODING_AGENT_DIR"), m.URL, args[1:]...); err != nil {
		ts.Fatalf("%v", err)
	}
}

// requestText is a request's messages as text, one "[role]" line and
// the text each (the system prompt left out).
func requestText(r pitest.Request) string {
	var b strings.Builder
	fmt.Fprintf(&b, "=== request %d model=%s step=%d tools=%s\n", r.N, r.Model, r.Step, strings.Join(r.Tools, ","))
	for _, m := range r.Messages {
		if m.Role != "system" {
			b.WriteString("[" + m.Role + "]\n" + m.Text + "\n")
		}
	}
	return b.String()
}

func cmdPiSent(ts *testscript.TestScript, neg bool, args []string) {
	count := -1
	if len(args) > 0 && strings.HasPrefix(args[0], "-count=") {
		n, err := strconv.Atoi(strings.TrimPrefix(args[0], "-count="))
		if err != nil {
			ts.Fatalf("bad -count: %v", err)
		}
		count, args = n, args[1:]
	}
	if (!neg && len(args) != 2) || (neg && len(args) != 1) {
		ts.Fatalf("usage: pisent [-count=N] RE FILE | ! pisent RE")
	}
	re, err := regexp.Compile("(?ms)" + args[0])
	if err != nil {
		ts.Fatalf("pisent: %v", err)
	}
	var b strings.Builder
	n := 0
	all := scriptModel(ts).Requests()
	for _, r := range all {
		if re.MatchString(r.Prompt()) {
			n++
			b.WriteString(requestText(r))
		}
	}
	if neg {
		if n > 0 {
			ts.Fatalf("pisent: %d requests match %q:\n%s", n, args[0], b.String())
		}
		return
	}
	if n == 0 || (count >= 0 && n != count) {
		var dump strings.Builder
		for _, r := range all {
			p := r.Prompt()
			fmt.Fprintf(&dump, "request %d step %d: %.300q\n", r.N, r.Step, p)
		}
		ts.Fatalf("pisent: %d requests match %q (want %d; -1 any)\n%s", n, args[0], count, dump.String())
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(b.String()), 0o644))
}

func cmdPiUsed(ts *testscript.TestScript, neg bool, args []string) {
	m := scriptModel(ts)
	if u := m.Unused(); len(u) > 0 {
		var dump strings.Builder
		for _, r := range m.Requests() {
			fmt.Fprintf(&dump, "request %d step %d: %.200q\n", r.N, r.Step, r.Prompt())
		}
		ts.Fatalf("script steps %v answered no request\n%s", u, dump.String())
	}
}

func cmdPiWait(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: piwait RE")
	}
	re, err := regexp.Compile("(?ms)" + args[0])
	if err != nil {
		ts.Fatalf("piwait: %v", err)
	}
	m := scriptModel(ts)
	deadline := time.Now().Add(3 * time.Minute)
	for {
		for _, r := range m.Requests() {
			if re.MatchString(r.Prompt()) {
				return
			}
		}
		if time.Now().After(deadline) {
			ts.Fatalf("piwait: no request matching %q within 3 minutes", args[0])
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// runDir is a run's state directory in the script's agent root.
func runDir(ts *testscript.TestScript, id string) string {
	return filepath.Join(ts.Getenv("RUNS"), id)
}

func cmdWaitRun(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: waitrun ID STATUS")
	}
	dir := runDir(ts, args[0])
	deadline := time.Now().Add(4 * time.Minute)
	for {
		b, err := os.ReadFile(filepath.Join(dir, "result.json"))
		var res struct {
			Status string `json:"status"`
			Code   int    `json:"code"`
		}
		if err == nil && json.Unmarshal(b, &res) == nil && res.Status != "" {
			if res.Status != args[1] {
				ts.Fatalf("run %s ended %s (code %d), want %s\n%s", args[0], res.Status, res.Code, args[1], runLogs(dir))
			}
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("run %s did not end within 4 minutes\n%s", args[0], runLogs(dir))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// runLogs are the tails of a run's logs, for failures.
func runLogs(dir string) string {
	var b strings.Builder
	for _, f := range []string{"stderr.log", "stdout.log", "result.json"} {
		data, _ := os.ReadFile(filepath.Join(dir, f))
		if len(data) > 3000 {
			data = data[len(data)-3000:]
		}
		fmt.Fprintf(&b, "--- %s\n%s\n", f, data)
	}
	return b.String()
}

func cmdWaitFor(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: waitfor FILE RE")
	}
	path := args[0]
	if !filepath.IsAbs(path) {
		path = filepath.Join(ts.Getenv("RUNS"), path)
	}
	re, err := regexp.Compile(args[1])
	if err != nil {
		ts.Fatalf("waitfor: %v", err)
	}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		data, _ := os.ReadFile(path)
		for _, line := range strings.Split(string(data), "\n") {
			if re.MatchString(line) {
				return
			}
		}
		if time.Now().After(deadline) {
			ts.Fatalf("waitfor: no line of %s matches %q within 3 minutes\n%s", path, args[1], runLogs(filepath.Dir(path)))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// cmdNoRunProcs waits until the run's supervisor is gone and no process
// carries the run's id in its environment (every leaf, pi and its
// children, gets PI_ACTORS_RUN_ID).
func cmdNoRunProcs(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: norunprocs ID")
	}
	var meta struct {
		Pid      int
		PidStart uint64 `json:"pid_start_time"`
	}
	b, err := os.ReadFile(filepath.Join(runDir(ts, args[0]), "run.json"))
	ts.Check(err)
	ts.Check(json.Unmarshal(b, &meta))
	marker := []byte("PI_ACTORS_RUN_ID=" + args[0] + "\x00")
	deadline := time.Now().Add(30 * time.Second)
	for {
		var left []string
		if meta.Pid > 0 && runs.Alive(meta.Pid, meta.PidStart) {
			left = append(left, fmt.Sprintf("supervisor %d", meta.Pid))
		}
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
			if err == nil && strings.Contains(string(append(env, 0)), string(marker)) {
				cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
				left = append(left, fmt.Sprintf("%d %q", pid, strings.ReplaceAll(string(cmd), "\x00", " ")))
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("run %s left processes: %s", args[0], strings.Join(left, "; "))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func cmdFollowup(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: followup RE")
	}
	re, err := regexp.Compile("(?m)" + args[0])
	if err != nil {
		ts.Fatalf("followup: %v", err)
	}
	seen := ts.MkAbs("followups.txt")
	deadline := time.Now().Add(time.Minute)
	for {
		if err := ts.Exec("pi-actors", "inspect", "target=coordinator", "view=followups"); err != nil {
			ts.Fatalf("followup: %v", err)
		}
		old, _ := os.ReadFile(seen)
		all := string(old) + ts.ReadFile("stdout")
		ts.Check(os.WriteFile(seen, []byte(all), 0o644))
		if re.MatchString(all) {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("followup: no follow-up matches %q within a minute:\n%s", args[0], all)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
