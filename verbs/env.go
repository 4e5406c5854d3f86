package verbs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/pi-actors/pi-actors/internal/config"
	"github.com/pi-actors/pi-actors/recipes/template"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// Env is what a verb runs with: who calls (session, working directory,
// environment), the agent root and its config, and where foreground output
// goes. Front doors build one per call (the CLI) or per connection (MCP).
type Env struct {
	AgentDir string
	Config   config.Config
	// ConfigErr is why pi-actors.toml could not be read when the verb
	// went on with the defaults (it only reads state).
	ConfigErr error
	// Session is the caller's coordinator session ($PI_ACTORS_SESSION or
	// session=); "" when there is none.
	Session string
	// Cause is what made the caller call (cause=<message id>, pi's tool
	// call, the MCP request): every spawn and message records it.
	Cause   wire.Cause
	Cwd     string
	Environ []string
	// Version is the front door's version (tool:pi-actors status).
	Version string
	// CallerPid is the process the verb acts for (a branch claim belongs
	// to it): the CLI's parent; 0 means this process.
	CallerPid int
	// Stdin is the caller's stdin, given to exec/call's first step with
	// --stdin.
	Stdin io.Reader
	// Stream, when set, receives exec/call output byte for byte (the CLI's
	// text mode); when nil, results carry a bounded tail instead.
	Stream io.Writer
	// Stderr receives commands' stderr and non-critical failure notes in
	// stream mode; nil discards them.
	Stderr io.Writer
	// JSON means the caller reads the result, not only the text (the CLI's
	// --json, MCP): views that cost more for their details (file hashes)
	// compute them only then.
	JSON bool
	// Width is the terminal width text tables fit (ps); 0 means not a
	// terminal: tables keep their natural width, long cells cut short.
	Width int
	// Progress, when set, receives progress bars (the CLI's stderr when it
	// is a terminal); nil shows none.
	Progress io.Writer
	// Routed means the verb runs on the node a cluster routed it to: it
	// acts on this node's files and is never routed again.
	Routed bool
	// Interrupt, when set, ends a request waiting for the kernel's answer
	// when it ends (the CLI's Ctrl-C): the caller stops waiting; the
	// kernel still finishes what it was sent.
	Interrupt context.Context
	// Reaper means the verb is this process's only work (the CLI): a
	// foreground exec/call makes the process the child subreaper of what
	// it starts, and stops what is left when the composition ends (a
	// setsid child outlived exec). Long-lived front doors, running calls
	// side by side, leave it false.
	Reaper bool
}

// NewEnv reads the agent root and its config and the calling process's
// session, directory and environment.
func NewEnv() (*Env, error) {
	dir, err := config.AgentDir()
	if err != nil {
		return nil, err
	}
	cwd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("working directory: %w", err)
	}
	env := &Env{AgentDir: dir, Session: os.Getenv("PI_ACTORS_SESSION"), Cwd: cwd, Environ: os.Environ()}
	return env, nil
}

// LoadConfig reads <agent>/pi-actors.toml into env.Config.
func (env *Env) LoadConfig() error {
	cfg, err := config.Load(env.AgentDir)
	if err != nil {
		return err
	}
	env.Config = cfg
	return nil
}

// kernelStartTimeout bounds an auto-start: the kernel is usually ready in a
// few milliseconds.
const kernelStartTimeout = 5 * time.Second

// lockRetry is the first pause before starting a kernel again when the
// last one found the kernel lock held.
const lockRetry = 50 * time.Millisecond

// Dial connects to the kernel, starting it when autostart is set.
func (env *Env) Dial(autostart bool) (*wire.Conn, error) {
	if err := CheckCaller(env.Session, &env.Cause); err != nil {
		return nil, err
	}
	c, err := wire.Dial(env.AgentDir, time.Second)
	if err == nil || !autostart || errors.Is(err, wire.ErrDenied) {
		return c, err
	}
	bin, err := KernelBinary()
	if env.Config.Cluster.Enabled() {
		bin, err = ClusterBinary()
	}
	if err != nil {
		return nil, err
	}
	exited, err := startKernel(bin, env.AgentDir)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(kernelStartTimeout)
	step, pause := time.Millisecond, lockRetry
	for {
		if c, err := wire.Dial(env.AgentDir, time.Second); err == nil {
			return c, nil
		}
		select {
		case code := <-exited:
			if code != 75 {
				msg, _ := os.ReadFile(filepath.Join(wire.TmpDir(env.AgentDir), "kernel.err"))
				return nil, fmt.Errorf("%w: %s exited with status %d before it answered: %s", wire.ErrUnavailable, bin, code, strings.TrimSpace(string(msg)))
			}
			// 75: the kernel lock was held — by another kernel starting
			// (the one to wait for), or by one that was dying (killed a
			// moment ago: nothing will answer). Start again after a pause
			// that doubles (a kernel that is there, still starting, makes
			// each new one exit 75 as well).
			time.Sleep(pause)
			pause = min(2*pause, 500*time.Millisecond)
			if c, err := wire.Dial(env.AgentDir, time.Second); err == nil {
				return c, nil
			}
			if exited, err = startKernel(bin, env.AgentDir); err != nil {
				return nil, err
			}
		default:
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%w: started %s but it did not answer within %s; see %s", wire.ErrUnavailable, bin, kernelStartTimeout, filepath.Join(wire.TmpDir(env.AgentDir), "kernel.log"))
		}
		time.Sleep(step)
		step = min(step*2, 20*time.Millisecond)
	}
}

// Call sends one request to the kernel (starting it if needed) and decodes
// its result into out. params is the typed request.
func (env *Env) Call(op string, params any, out any) error {
	resp, err := env.call(op, params, nil)
	if err != nil {
		return err
	}
	return resp.Decode(out)
}

// callChecked is Call, with check run before a kernel is started for the
// request: when no kernel runs and check fails, nothing is started.
func (env *Env) callChecked(op string, params any, out any, check func() error) error {
	resp, err := env.send(op, params, nil, check)
	if err != nil {
		return err
	}
	return resp.Decode(out)
}

// call sends a request (a batch when items is not empty).
func (env *Env) call(op string, params any, items []json.RawMessage) (*wire.Response, error) {
	return env.send(op, params, items, nil)
}

// send dials (starting a kernel when none runs, once check, if any,
// passes) and sends a request.
func (env *Env) send(op string, params any, items []json.RawMessage, check func() error) (*wire.Response, error) {
	var c *wire.Conn
	var err error
	if check != nil {
		if c, err = wire.Dial(env.AgentDir, time.Second); err != nil && !errors.Is(err, wire.ErrDenied) {
			if err := check(); err != nil {
				return nil, err
			}
			c, err = env.Dial(true)
		}
	} else {
		c, err = env.Dial(true)
	}
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return env.exchange(c, wire.Request{Op: op, Items: items}, params)
}

// exchange sends req on c — with the caller's session, directory,
// environment and cause, and params — and reads its answer. An interrupt
// (env.Interrupt) closes c and is the error.
func (env *Env) exchange(c *wire.Conn, req wire.Request, params any) (*wire.Response, error) {
	if ctx := env.Interrupt; ctx != nil {
		stop := context.AfterFunc(ctx, func() { c.Close() })
		defer stop()
	}
	req.Session, req.Cwd, req.Env = env.Session, env.Cwd, env.Environ
	if !env.Cause.Empty() {
		c := env.Cause
		req.Cause = &c
	}
	if params != nil {
		if err := req.Encode(params); err != nil {
			return nil, err
		}
	}
	resp, err := c.Call(req)
	if ctx := env.Interrupt; err != nil && ctx != nil && ctx.Err() != nil {
		return nil, &Error{Exit: max(template.CauseExit(ctx), 130), Code: "interrupted",
			Message: fmt.Sprintf("interrupted while waiting for the kernel's answer to %s", req.Op),
			Hint:    "the kernel still finishes a request it was sent; look before you send it again (inspect, ps)"}
	}
	return resp, err
}

// KernelBinary finds pi-actors-kernel: $PI_ACTORS_KERNEL_BIN, this binary
// when it is the kernel binary, next to this binary, then PATH.
func KernelBinary() (string, error) { return findBinary("pi-actors-kernel", "PI_ACTORS_KERNEL_BIN") }

// ClusterBinary finds pi-actors-cluster, the kernel with its cluster side
// (started instead of pi-actors-kernel when pi-actors.toml has [cluster]):
// $PI_ACTORS_CLUSTER_BIN, next to this binary, then PATH.
func ClusterBinary() (string, error) { return findBinary("pi-actors-cluster", "PI_ACTORS_CLUSTER_BIN") }

// FrontBinary finds pi-actors-front, the binary of the front doors that
// need heavy libraries (mcp, schema, top): $PI_ACTORS_FRONT_BIN, this
// binary when it is that one, next to this binary, then PATH.
func FrontBinary() (string, error) { return findBinary("pi-actors-front", "PI_ACTORS_FRONT_BIN") }

// findBinary finds one of the pi-actors binaries: $envVar, this binary
// when it is name, name next to this binary, then PATH.
func findBinary(name, envVar string) (string, error) {
	if b := os.Getenv(envVar); b != "" {
		return b, nil
	}
	if self, err := os.Executable(); err == nil {
		if filepath.Base(self) == name {
			return self, nil
		}
		sib := filepath.Join(filepath.Dir(self), name)
		if _, err := os.Stat(sib); err == nil {
			return sib, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%w: %s not found next to pi-actors or in PATH (install them all: CGO_ENABLED=0 go install ./cmd/...)", wire.ErrUnavailable, name)
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
	// The agent root as resolved (absolute: the kernel runs in /) and no
	// run identity of the caller, nor the mark of a front door's call (a
	// kernel outlives the call that started it). Dropped, not overridden: a Go process
	// reads the first of two entries of one name, os.StartProcess keeps
	// both (a relative PI_CODING_AGENT_DIR made the kernel serve /<it>).
	env := append(withoutEnv(kernelEnv(os.Environ()), "PI_CODING_AGENT_DIR", "PI_ACTORS_SESSION", "PI_ACTORS_RUN_ID", "PI_ACTORS_STATE_DIR", "PI_ACTORS_ADDRESS", runs.CallEnv),
		"PI_CODING_AGENT_DIR="+agentDir)
	if self, err := os.Executable(); err == nil && os.Getenv("PI_ACTORS_BIN") == "" && filepath.Base(self) == "pi-actors" {
		env = append(env, "PI_ACTORS_BIN="+self)
	}
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

// withoutEnv is env without the entries of the names given.
func withoutEnv(env []string, names ...string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(names, name) {
			out = append(out, kv)
		}
	}
	return out
}
