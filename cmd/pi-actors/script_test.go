package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/pi-actors/pi-actors/actors"
	"github.com/pi-actors/pi-actors/internal/testproc"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs/mcpserver"
	"github.com/pi-actors/pi-actors/verbs/top"
)

func TestMain(m *testing.M) {
	testproc.NoRaceExitSleep()
	testproc.Parallel(6) // the scripts mostly wait on their processes
	var tm testscript.TestingM = m
	if strings.HasSuffix(filepath.Base(os.Args[0]), ".test") {
		testproc.Watchdog() // the test binary, not one of the commands below
		if testproc.Race {
			tm = plainCommands{m}
		}
	}
	testscript.Main(tm, scriptCommands)
}

// scriptCommands are the binaries the scripts exec, all served by this
// test binary (by the name it is run under).
var scriptCommands = map[string]func(){
	// As the binary runs (its signals cancel the context).
	"pi-actors": func() { os.Exit(mainArgs(os.Args[1:])) },
	"pa-helper": func() { testproc.Main(os.Args[1:]) },
	"pa-probe":  func() { os.Exit(probeMain(os.Args[1:])) },
	// The kernel and front-door binaries: the test binary doubles as
	// pi-actors-kernel and pi-actors-front, next to pi-actors, as
	// `go install ./cmd/...` lays them out.
	"pi-actors-kernel":    func() { os.Exit(actors.Main("test")) },
	"pi-actors-supervise": func() { os.Exit(runs.Main("pi-actors-supervise", os.Args[1:])) },
	"pi-actors-front": func() {
		if len(os.Args) > 1 && os.Args[1] == "mcp" {
			os.Exit(mcpserver.Main("test"))
		}
		if len(os.Args) > 1 && os.Args[1] == "schema" {
			os.Exit(mcpserver.SchemaMain(os.Args[2:], os.Stdout))
		}
		if len(os.Args) > 1 && os.Args[1] == "top" {
			os.Exit(top.Main(os.Args[2:], os.Stdout, os.Stderr))
		}
		os.Exit(64)
	},
}

// plainCommands runs the tests with the scripts' commands served by a
// build of this test binary without the race detector, first in PATH.
// Under -race every exec of a CLI, kernel, supervisor or helper pays the
// race runtime's start (~100 ms against ~35 ms on the 2-core CI machine)
// and runs several times slower: the scripts took 450 s of wall time
// and 570 s of CPU that way, 195 s and 261 s without. The race detector
// still covers the kernel, supervisor, rooms and mailbox code in their
// own packages' tests, which run it in-process. When the build fails
// (no go command), the race-built commands serve as before.
type plainCommands struct{ m *testing.M }

func (p plainCommands) Run() int {
	dir, err := os.MkdirTemp("", "pi-actors-plain")
	if err != nil {
		return p.m.Run()
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "commands.test")
	build := exec.Command("go", "test", "-c", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "scripts run the race-built commands: go test -c without -race: %v\n%s", err, out)
		return p.m.Run()
	}
	for name := range scriptCommands {
		if err := os.Link(bin, filepath.Join(dir, name)); err != nil {
			fmt.Fprintf(os.Stderr, "scripts run the race-built commands: %v\n", err)
			return p.m.Run()
		}
	}
	// testscript has put its own copies first in PATH by now; each
	// script's PATH is read from this process's when it starts.
	os.Setenv("PATH", dir+string(filepath.ListSeparator)+os.Getenv("PATH"))
	return p.m.Run()
}

// TestScripts runs the CLI behaviour cases in testdata/script, one case
// per file. Each script gets its own agent root ($WORK/agent) and HOME;
// every pid a helper recorded in $WORK/*.pid is killed afterwards.
//
// Extra commands: `alive PIDFILE` / `! alive PIDFILE` (is the recorded
// process running), `waitfile FILE` (wait up to 10 s for FILE to exist),
// `freeport VAR` (set $VAR to a TCP port nothing listens on); for the
// fault cases (faults_script_test.go) `mounttmpfs DIR SIZE`, `fill FILE`
// (until the disk is full), `intact AGENTDIR` (nothing half-written),
// `storeok FILE` (SQLite's integrity check of a knowledge store) and
// `kernelfiles +N|N` (the kernel's open-file limit). Condition [root].
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("PI_CODING_AGENT_DIR", filepath.Join(env.WorkDir, "agent"))
			env.Setenv("HOME", filepath.Join(env.WorkDir, "home"))
			env.Setenv("PI_ACTORS_SESSION", "")
			env.Setenv("PI_ACTORS_MAX_PARALLEL_BRANCHES", "")
			env.Setenv(testproc.OwnerVar, os.Getenv(testproc.OwnerVar))
			// Runs are supervised by pi-actors-supervise (this test binary):
			// the kernel finds it beside the CLI only when both are
			// installed, which the test binary is not.
			sup, err := exec.LookPath("pi-actors-supervise")
			if err != nil {
				return err
			}
			env.Setenv("PI_ACTORS_SUPERVISE_BIN", sup)
			env.Defer(func() {
				stopKernel(env)
				killRecorded(env.WorkDir)
			})
			return os.MkdirAll(filepath.Join(env.WorkDir, "home"), 0o755)
		},
		Condition: scriptCondition,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"alive":       cmdAlive,
			"waitfile":    cmdWaitFile,
			"freeport":    cmdFreePort,
			"mounttmpfs":  cmdMountTmpfs,
			"fill":        cmdFill,
			"intact":      cmdIntact,
			"kernelfiles": cmdKernelFiles,
			"storeok":     cmdStoreOK,
		},
	})
}

func cmdAlive(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: alive PIDFILE")
	}
	// A process that is being killed may take a moment to go, and a
	// restarted one to write its new pid: the file is read again on each
	// look.
	want := !neg
	deadline := time.Now().Add(3 * time.Second)
	for {
		pid := testproc.ReadPid(ts.MkAbs(args[0]))
		if pid == 0 && neg && time.Now().After(deadline) {
			// Killed before it wrote its pid: under load a timeout can
			// end a leaf that has not started yet. One that survived
			// would have written it by now.
			return
		}
		if pid == 0 && !time.Now().After(deadline) {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if pid == 0 {
			ts.Fatalf("no pid in %s", args[0])
		}
		if testproc.Alive(pid) == want {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("process %d (%s): alive=%v, want %v", pid, args[0], !want, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func cmdFreePort(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: freeport VAR")
	}
	port, err := testproc.FreePort()
	if err != nil {
		ts.Fatalf("freeport: %v", err)
	}
	ts.Setenv(args[0], strconv.Itoa(port))
}

func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: waitfile FILE")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := os.Stat(ts.MkAbs(args[0]))
		if (err == nil) != neg {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("waitfile %s: timed out", args[0])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// killRecorded kills the processes whose pids helpers recorded in
// $WORK/*.pid — only if the process still belongs to this script (its
// environment names $WORK): with scripts in parallel a pid may have been
// reused by another script's process.
func killRecorded(dir string) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.pid"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && pid > 0 && ownedBy(pid, dir) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// ownedBy reports whether pid's environment has a variable whose value
// is dir or a path under it (not a sibling that merely starts with its
// name: workflow_service's $WORK is a prefix of workflow_service_ready's).
func ownedBy(pid int, dir string) bool {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for _, kv := range strings.Split(string(env), "\x00") {
		if _, v, ok := strings.Cut(kv, "="); ok && (v == dir || strings.HasPrefix(v, dir+"/")) {
			return true
		}
	}
	return false
}

// stopKernel stops the script's kernel (if one was started) and every run
// supervisor it left, so no process outlives the script. Pids are trusted
// only with their recorded start times.
func stopKernel(env *testscript.Env) { stopAgent(filepath.Join(env.WorkDir, "agent")) }

// stopAgent is stopKernel for the agent root agent.
func stopAgent(agent string) {
	data, err := os.ReadFile(filepath.Join(agent, "tmp", "pi-actors", "kernel.json"))
	if err == nil {
		var info struct {
			Pid      int
			PidStart uint64 `json:"pid_start_time"`
		}
		if json.Unmarshal(data, &info) == nil && runs.Alive(info.Pid, info.PidStart) {
			syscall.Kill(info.Pid, syscall.SIGKILL)
		}
	}
	runsDir := filepath.Join(agent, "tmp", "pi-actors", "runs")
	filepath.WalkDir(runsDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "run.json" {
			return nil
		}
		var m struct {
			Pid      int
			PidStart uint64 `json:"pid_start_time"`
		}
		if b, err := os.ReadFile(p); err == nil && json.Unmarshal(b, &m) == nil && m.Pid > 0 && m.PidStart > 0 {
			// The supervisor leads its own session: every process still in
			// that session is the run's — if the leader is the one recorded,
			// or gone (a session id is not reused while members remain).
			if runs.Alive(m.Pid, m.PidStart) || !runs.Alive(m.Pid, 0) {
				for _, pid := range runs.SessionMembers(m.Pid) {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
		return nil
	})
}
