package runs

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pi-actors/pi-actors/internal/fsutil"
)

// kernelPid is the agent root's kernel when it is alive, else 0. A kernel
// that a run's process started (any verb starts one on demand) is a
// descendant of the run's supervisor — the supervisor is a subreaper —
// but it is never part of the run: stopping a run must not stop it, nor
// the supervisors it started since.
func kernelPid() int {
	path, ok := kernelInfoPath()
	if !ok {
		return 0
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	var info struct {
		Pid      int    `json:"pid"`
		PidStart uint64 `json:"pid_start_time"`
	}
	if json.Unmarshal(data, &info) != nil || info.Pid <= 0 || !Alive(info.Pid, info.PidStart) {
		return 0
	}
	return info.Pid
}

// StopDescendants stops what this process started and left behind — every
// live descendant but the agent root's kernel and what it started —
// SIGTERM, up to grace, SIGKILL, and reaps the orphans it adopted as a
// child subreaper (a foreground exec's strays). It returns how many it
// signalled.
func StopDescendants(grace time.Duration) int {
	self, kernel := os.Getpid(), kernelPid()
	return stopAll(func() []int { return DescendantsBut(self, kernel) }, grace, true)
}

// CallEnv marks the processes of one foreground call in a long-lived front
// door (the MCP server, the pi bridge): its leaves get CallEnv=<id> and
// pass it on to what they start, so a process that left its leaf's group
// and session (setsid) is still found when the call ends (StopMarked).
// Runs and kernels started from a call do not carry it (withoutPIEnv).
const CallEnv = "PI_ACTORS_CALL"

// StopMarked stops the live processes, other than this one and the agent
// root's kernel and what it started, whose environment holds entry (a
// KEY=value of CallEnv): SIGTERM, up to grace, SIGKILL. A process that
// dropped the entry from its environment, or another user's, is not
// found. It reaps nothing: a front door's other calls wait for their own
// children. It returns how many it signalled.
func StopMarked(entry string, grace time.Duration) int {
	return stopAll(func() []int { return marked(entry) }, grace, false)
}

// stopAll sends SIGTERM to what left lists, waits up to grace for it to
// go, SIGKILLs what is left and waits up to a second more; reap collects
// this process's exited children meanwhile (a subreaper's adopted
// orphans). It returns how many it signalled.
func stopAll(left func() []int, grace time.Duration, reap bool) int {
	// gone waits up to d for the signalled processes to go.
	gone := func(d time.Duration) {
		for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if reap {
				reapOrphans()
			}
			if len(left()) == 0 {
				return
			}
		}
	}
	pids := left()
	if len(pids) > 0 {
		KillAll(pids, syscall.SIGTERM)
		gone(grace)
		KillAll(left(), syscall.SIGKILL)
		gone(time.Second)
	}
	if reap {
		reapOrphans()
	}
	return len(pids)
}

// marked lists the live processes whose environment (as they were
// started) holds entry, this process and the kernel's tree left out.
func marked(entry string) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var out []int
	budget := environWait
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err == nil && len(env) == 0 {
			env = settledEnviron(pid, &budget)
		}
		if err != nil || !hasEnvEntry(env, entry) {
			continue
		}
		if st, err := Stat(pid); err == nil && st.State != "Z" && st.State != "X" {
			out = append(out, pid)
		}
	}
	if len(out) == 0 {
		return nil
	}
	if k := kernelPid(); k > 0 {
		skip := map[int]bool{k: true}
		for _, p := range Descendants(k) {
			skip[p] = true
		}
		out = slices.DeleteFunc(out, func(p int) bool { return skip[p] })
	}
	return out
}

// environWait bounds the waits for processes in the middle of an execve
// in one scan (a loaded machine may leave one there for milliseconds).
const environWait = 100 * time.Millisecond

// settledEnviron re-reads the environ of a process that read as empty:
// one in the middle of an execve has neither an environment nor a command
// line for a moment (its new memory is mapped before they are copied in —
// a setsid child exec'ing as the call ended was missed so). A zombie, a
// kernel thread (a child of kthreadd, pid 2) or a process that has a
// command line and no environment (env -i) has none for good; one in an
// execve is read again, backing off from 100 µs, until it has one or the
// scan's wait (budget) is spent.
func settledEnviron(pid int, budget *time.Duration) []byte {
	if *budget <= 0 {
		return nil
	}
	if st, err := Stat(pid); err != nil || st.State == "Z" || st.State == "X" || pid == 2 || st.PPid == 2 {
		return nil
	}
	dir := "/proc/" + strconv.Itoa(pid)
	empty := 0
	for step := 100 * time.Microsecond; *budget > 0; step = min(2*step, 5*time.Millisecond) {
		d := min(step, *budget)
		time.Sleep(d)
		*budget -= d
		// The command line first: read after it, an environment still
		// empty is one the process does not have — or the start of its
		// next execve, so twice.
		cmd, err := os.ReadFile(dir + "/cmdline")
		if err != nil {
			return nil // gone
		}
		if env, _ := os.ReadFile(dir + "/environ"); len(env) > 0 {
			return env
		}
		if len(cmd) > 0 {
			if empty++; empty == 2 {
				return nil
			}
		}
	}
	return nil
}

// hasEnvEntry reports whether environ (NUL-separated KEY=value entries,
// as /proc/<pid>/environ) holds entry exactly.
func hasEnvEntry(environ []byte, entry string) bool {
	for len(environ) > 0 {
		i := bytes.IndexByte(environ, 0)
		if i < 0 {
			i = len(environ)
		}
		if string(environ[:i]) == entry {
			return true
		}
		environ = environ[min(i+1, len(environ)):]
	}
	return false
}

// reapOrphans collects this process's exited children. Only for a process
// whose own children were all waited for: it takes any exit status.
func reapOrphans() {
	for _, pid := range Children(os.Getpid()) {
		if st, err := Stat(pid); err == nil && st.State == "Z" {
			var ws syscall.WaitStatus
			syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		}
	}
}

// kernelInfoPath is <agent>/tmp/pi-actors/kernel.json (wire.Info) of the
// agent root this process runs under.
func kernelInfoPath() (string, bool) {
	dir := agentRoot()
	if dir == "" {
		return "", false
	}
	return filepath.Join(dir, "tmp", "pi-actors", "kernel.json"), true
}

// agentRoot is the agent root this process runs under — the kernel that
// started it, the session records it reads: $PI_CODING_AGENT_DIR, else
// ~/.pi/agent ("" when neither can be found). It is config.AgentDir's
// rule, written out here because package runs, linked into every
// supervisor, does not link the config package and its TOML library
// (TestKernelInfoPath keeps the two in step).
func agentRoot() string {
	dir := os.Getenv("PI_CODING_AGENT_DIR")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(home, ".pi", "agent")
	}
	abs, err := filepath.Abs(fsutil.ExpandHome(dir))
	if err != nil {
		return ""
	}
	return abs
}

// DescendantsBut lists every live descendant of pid, depth first, but
// skip and its own descendants (0 skips nothing), and never another run's
// supervisor or a kernel, nor what they started (Runtime).
func DescendantsBut(pid, skip int) []int {
	var out []int
	var walk func(int, int)
	walk = func(p, depth int) {
		if depth > 64 {
			return
		}
		for _, c := range Children(p) {
			if c == skip {
				continue
			}
			st, err := Stat(c)
			if err == nil && Runtime(c, st) {
				continue
			}
			if err == nil && st.State != "Z" && st.State != "X" {
				out = append(out, c)
			}
			walk(c, depth+1)
		}
	}
	walk(pid, 0)
	return out
}

// Runtime reports whether a process is pi-actors' own — a run's
// supervisor or a kernel — rather than a run's: each leads its own
// session, started as pi-actors-supervise, pi-actors-kernel or
// `pi-actors supervise`. A kernel that a run's process started is a
// descendant of the run's supervisor (a subreaper), and when that kernel
// dies the supervisors it started become the run's descendants too: none
// of them is the run's to stop, freeze or kill.
func Runtime(pid int, st ProcStat) bool {
	if st.Sid != pid {
		return false // a supervisor or kernel always leads its session
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return false
	}
	argv := bytes.Split(bytes.TrimRight(data, "\x00"), []byte{0})
	switch name := filepath.Base(string(argv[0])); {
	case name == "pi-actors-supervise" || name == "pi-actors-kernel":
		return true
	case strings.HasPrefix(name, "pi-actors") && len(argv) > 1 && string(argv[1]) == "supervise":
		return true
	}
	return false
}
