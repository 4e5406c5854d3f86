package runs

import (
	"encoding/json"
	"os"
	"path/filepath"
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
	left := func() []int { return DescendantsBut(self, kernel) }
	// gone waits up to d for the signalled processes to go, reaping them.
	gone := func(d time.Duration) {
		for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			reapOrphans()
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
	reapOrphans()
	return len(pids)
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
// skip and its own descendants (0 skips nothing).
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
			if st, err := Stat(c); err == nil && st.State != "Z" && st.State != "X" {
				out = append(out, c)
			}
			walk(c, depth+1)
		}
	}
	walk(pid, 0)
	return out
}
