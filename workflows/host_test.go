package workflows_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/internal/testproc"
	"github.com/pi-actors/pi-actors/workflows"
)

func TestMain(m *testing.M) {
	testproc.NoRaceExitSleep()
	if os.Getenv(testproc.EnvVar) != "" {
		testproc.Main(os.Args[1:])
	}
	testproc.Watchdog()
	os.Exit(m.Run())
}

// procHost runs each node's template (a testproc helper and its words)
// as a real process of this test binary, in its own process group, and
// records when each started and ended: the engine's Host without a
// kernel.
type procHost struct {
	t    *testing.T
	root string

	mu    sync.Mutex
	procs map[string]*proc // run id → its newest attempt
	log   []*proc          // every attempt, in start order
}

type proc struct {
	node, run      string
	attempt        int
	dir            string
	cmd            *exec.Cmd
	started, ended time.Time
	code           int
	done           bool
	killed         bool
}

func newProcHost(t *testing.T) *procHost {
	h := &procHost{t: t, root: t.TempDir(), procs: map[string]*proc{}}
	t.Cleanup(func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, p := range h.log {
			if !p.done {
				syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			}
		}
	})
	return h
}

func (h *procHost) Start(_ context.Context, reqs []workflows.StartRequest) []workflows.StartResult {
	out := make([]workflows.StartResult, len(reqs))
	for i, r := range reqs {
		words := strings.Fields(fmt.Sprint(r.Params["template"]))
		dir := filepath.Join(h.root, fmt.Sprintf("%s.%d", r.Run, r.Attempt))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			out[i].Err = err
			continue
		}
		stdout, err := os.Create(filepath.Join(dir, "stdout.log"))
		if err != nil {
			out[i].Err = err
			continue
		}
		cmd := exec.Command(os.Args[0], words...)
		cmd.Env = append(os.Environ(), testproc.EnvVar+"=1")
		cmd.Stdout = stdout
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		p := &proc{node: r.Node, run: r.Run, attempt: r.Attempt, dir: dir, cmd: cmd, started: time.Now()}
		if err := cmd.Start(); err != nil {
			stdout.Close()
			out[i].Err = err
			continue
		}
		stdout.Close()
		h.mu.Lock()
		h.procs[r.Run] = p
		h.log = append(h.log, p)
		h.mu.Unlock()
		go func() {
			err := cmd.Wait()
			h.mu.Lock()
			defer h.mu.Unlock()
			p.done, p.ended, p.code = true, time.Now(), cmd.ProcessState.ExitCode()
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				p.code = 128 + int(ws.Signal())
			} else if err != nil && p.code < 0 {
				p.code = 1
			}
		}()
		out[i].StateDir = dir
	}
	return out
}

func (h *procHost) Observe(c workflows.Child) workflows.Observation {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := h.procs[c.Run]
	if p == nil || p.attempt != c.Attempt {
		return workflows.Observation{State: workflows.ChildMissing}
	}
	obs := workflows.Observation{State: workflows.ChildRunning, StateDir: p.dir, StartedAt: p.started}
	if !p.done {
		return obs
	}
	obs.State, obs.Code, obs.EndedAt, obs.Status = workflows.ChildEnded, p.code, p.ended, "done"
	switch {
	case p.killed:
		obs.Status, obs.Reason = "killed", "control.kill"
	case p.code != 0:
		obs.Status = "failed"
	}
	return obs
}

func (h *procHost) Stop(_ context.Context, runs []string, gently bool) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	sig := syscall.SIGKILL
	if gently {
		sig = syscall.SIGTERM
	}
	for _, r := range runs {
		if p := h.procs[r]; p != nil && !p.done {
			p.killed = true
			syscall.Kill(-p.cmd.Process.Pid, sig)
		}
	}
	return nil
}

// attempts lists the recorded attempts of a node.
func (h *procHost) attempts(node string) []*proc {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []*proc
	for _, p := range h.log {
		if p.node == node {
			out = append(out, p)
		}
	}
	return out
}

// maxOverlap is the most processes of nodes (services excluded) that ran
// at once, from their start and end times.
func (h *procHost) maxOverlap(skip ...string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	best := 0
	for _, a := range h.log {
		n := 0
		for _, b := range h.log {
			if contains(skip, b.node) {
				continue
			}
			if !b.started.After(a.started) && (!b.done || b.ended.After(a.started)) {
				n++
			}
		}
		best = max(best, n)
	}
	return best
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
