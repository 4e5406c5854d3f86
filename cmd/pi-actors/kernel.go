package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/pi-actors/pi-actors/actors/wire"
	"github.com/pi-actors/pi-actors/runs"
)

func init() {
	verbs = append(verbs, &verb{
		name:    "kernel",
		summary: "start, stop or inspect the kernel",
		usage: `pi-actors kernel start|stop|status [--json]

The kernel (one per agent root) hosts the actor system: run actors, session
follow-up queues. Any verb that needs it starts it; runs survive it being
stopped, crashing or restarting (each run has its own supervisor process).
  start   start it if needed and print its status
  stop    stop it (runs keep running; the next start re-attaches them)
  status  pid, socket, uptime, live runs (exit 69 when it is not running)`,
		run: runKernel,
	})
}

// kernelStartTimeout bounds an auto-start: the kernel is usually ready in a
// few milliseconds.
const kernelStartTimeout = 5 * time.Second

// session is the caller's coordinator session: session= or $PI_ACTORS_SESSION.
func (r *request) session() string {
	if s, ok := r.params["session"].(string); ok {
		return s
	}
	return os.Getenv("PI_ACTORS_SESSION")
}

// dialKernel connects to the kernel, starting it when autostart is set.
func (a *app) dialKernel(autostart bool) (*wire.Conn, error) {
	if _, err := a.config(); err != nil {
		return nil, err
	}
	c, err := wire.Dial(a.agentDir, time.Second)
	if err == nil || !autostart {
		return c, err
	}
	bin, err := kernelBinary()
	if err != nil {
		return nil, err
	}
	exited, err := startKernel(bin, a.agentDir)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(kernelStartTimeout)
	step := time.Millisecond
	for {
		if c, err := wire.Dial(a.agentDir, time.Second); err == nil {
			return c, nil
		}
		select {
		case code := <-exited:
			// 75: another kernel won the lock; it is the one to wait for.
			if code != 75 {
				msg, _ := os.ReadFile(filepath.Join(wire.TmpDir(a.agentDir), "kernel.err"))
				return nil, fmt.Errorf("%w: %s exited with status %d before it answered: %s", wire.ErrUnavailable, bin, code, strings.TrimSpace(string(msg)))
			}
		default:
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%w: started %s but it did not answer within %s; see %s", wire.ErrUnavailable, bin, kernelStartTimeout, filepath.Join(wire.TmpDir(a.agentDir), "kernel.log"))
		}
		time.Sleep(step)
		step = min(step*2, 20*time.Millisecond)
	}
}

// kernelBinary finds pi-actors-kernel: $PI_ACTORS_KERNEL_BIN, next to this
// binary, then PATH.
func kernelBinary() (string, error) {
	if b := os.Getenv("PI_ACTORS_KERNEL_BIN"); b != "" {
		return b, nil
	}
	if self, err := os.Executable(); err == nil {
		sib := filepath.Join(filepath.Dir(self), "pi-actors-kernel")
		if _, err := os.Stat(sib); err == nil {
			return sib, nil
		}
	}
	if p, err := exec.LookPath("pi-actors-kernel"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%w: pi-actors-kernel not found next to pi-actors or in PATH (install both: CGO_ENABLED=0 go install ./cmd/...)", wire.ErrUnavailable)
}

// startKernel starts the kernel detached (its own session); it outlives
// this process. A second kernel for the same root exits at once (75). The
// channel reports the kernel's exit status if it ends while we wait.
func startKernel(bin, agentDir string) (<-chan int, error) {
	if err := os.MkdirAll(wire.TmpDir(agentDir), 0o700); err != nil {
		return nil, fmt.Errorf("%w: %v", wire.ErrUnavailable, err)
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer devnull.Close()
	// The kernel logs to kernel.log; what it prints before that (a bad
	// config, a lost lock) lands in kernel.err.
	errf, err := os.OpenFile(filepath.Join(wire.TmpDir(agentDir), "kernel.err"), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", wire.ErrUnavailable, err)
	}
	defer errf.Close()
	env := append(os.Environ(), "PI_CODING_AGENT_DIR="+agentDir)
	if self, err := os.Executable(); err == nil && os.Getenv("PI_ACTORS_BIN") == "" {
		env = append(env, "PI_ACTORS_BIN="+self)
	}
	env = append(env, "PI_ACTORS_SESSION=", "PI_ACTORS_RUN_ID=", "PI_ACTORS_STATE_DIR=", "PI_ACTORS_ADDRESS=")
	p, err := os.StartProcess(bin, []string{bin}, &os.ProcAttr{
		Dir:   "/",
		Env:   env,
		Files: []*os.File{devnull, devnull, errf},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		return nil, fmt.Errorf("%w: start %s: %v", wire.ErrUnavailable, bin, err)
	}
	exited := make(chan int, 1)
	go func() {
		st, err := p.Wait()
		if err == nil {
			exited <- st.ExitCode()
		}
	}()
	return exited, nil
}

// call sends one request (or a batch) to the kernel, starting it if needed.
func (a *app) call(r *request, op string, items []map[string]any) (*wire.Response, error) {
	c, err := a.dialKernel(true)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	cwd, _ := os.Getwd()
	params := map[string]any{}
	for k, v := range r.params {
		if k != "session" {
			params[k] = v
		}
	}
	req := wire.Request{Op: op, Session: r.session(), Cwd: cwd, Env: os.Environ(), Params: params, Items: items}
	return c.Call(req)
}

func runKernel(ctx context.Context, a *app, r *request) int {
	action := ""
	if len(r.words) == 1 {
		action = r.words[0]
	}
	switch action {
	case "start":
		c, err := a.dialKernel(true)
		if err != nil {
			return a.fail(r, err)
		}
		defer c.Close()
		return a.kernelStatus(r, c)
	case "status":
		c, err := a.dialKernel(false)
		if err != nil {
			return a.fail(r, &cliError{exit: exitUnavailable, code: "kernel_unavailable", msg: "kernel not running for " + a.agentDir, hint: "pi-actors kernel start (any verb that needs it also starts it)"})
		}
		defer c.Close()
		return a.kernelStatus(r, c)
	case "stop":
		c, err := a.dialKernel(false)
		if err != nil {
			return a.ok(r, "kernel running=false", map[string]any{"running": false})
		}
		defer c.Close()
		resp, err := c.Call(wire.Request{Op: "stop"})
		if err != nil {
			return a.fail(r, err)
		}
		pid, _ := resp.Result.(map[string]any)["pid"].(float64)
		// Gone, or a zombie waiting for its reaper: stopped either way.
		for i := 0; i < 500 && runs.Alive(int(pid), 0); i++ {
			time.Sleep(10 * time.Millisecond)
		}
		return a.ok(r, fmt.Sprintf("kernel stopped pid=%d", int(pid)), map[string]any{"stopped": true, "pid": int(pid)})
	}
	return a.fail(r, usagef("kernel takes one action: start, stop or status"))
}

func (a *app) kernelStatus(r *request, c *wire.Conn) int {
	resp, err := c.Call(wire.Request{Op: "status"})
	if err != nil {
		return a.fail(r, err)
	}
	if resp.Error != nil {
		return a.fail(r, resp.Error)
	}
	m, _ := resp.Result.(map[string]any)
	num := func(k string) int64 { f, _ := m[k].(float64); return int64(f) }
	text := fmt.Sprintf("kernel running=true pid=%d live_runs=%d uptime_ms=%d rss_bytes=%d socket=%v", num("pid"), num("live_runs"), num("uptime_ms"), num("rss_bytes"), m["socket"])
	return a.ok(r, text, m)
}

// wireFail reports a kernel error with its exit code.
func wireFail(err *wire.Error) *cliError {
	return &cliError{exit: err.Exit, code: err.Code, msg: err.Message, hint: err.Hint, details: err.Details}
}
