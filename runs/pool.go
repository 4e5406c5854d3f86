package runs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// WaitingDir is the state directory argument of a supervisor started
// ahead of its run (Pool): it reads the run, its environment included, on
// stdin (handover) and exits when stdin closes without one.
const WaitingDir = "-"

// Pool keeps a supervisor started ahead of the next run, so a spawn hands
// its run to a process that is already up: the exec and the Go runtime's
// start-up — about a millisecond — are off the way from spawn to leaf.
// Each one taken is replaced in the background. A waiting supervisor has
// the kernel's environment without run identity until it is handed a run
// (which brings the run's environment, working directory and stderr.log);
// closing the pool closes its stdin and it exits. Safe for concurrent
// use; a nil Pool hands out nothing.
type Pool struct {
	argv []string
	size int

	mu      sync.Mutex
	idle    []*waiting
	filling int
	closed  bool
	broken  bool // a waiting supervisor died unused: stop starting them
}

// waiting is a started supervisor and its two pipes.
type waiting struct {
	proc    *os.Process
	start   uint64   // its start time
	in      *os.File // its stdin: the run (a handover when waiting)
	ready   *os.File // its readiness pipe (fd 3), read end
	waiting bool     // started ahead of its run (Pool)
}

// handover is what a waiting supervisor reads on stdin: the environment it
// takes on (its leaves inherit it) and the run's run.json.
type handover struct {
	Env []string        `json:"env"`
	Run json.RawMessage `json:"run"`
}

// NewPool starts size supervisors (argv, the state dir argument
// appended) that wait for runs.
func NewPool(supervisor []string, size int) *Pool {
	p := &Pool{argv: supervisor, size: size}
	p.fill()
	return p
}

// take returns a live waiting supervisor, or nil, and starts a replacement.
func (p *Pool) take() *waiting {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer func() {
		p.mu.Unlock()
		p.fill()
	}()
	for len(p.idle) > 0 {
		w := p.idle[0]
		p.idle = p.idle[1:]
		if Alive(w.proc.Pid, w.start) {
			return w
		}
		// It died waiting (a supervisor binary that does not know the
		// waiting mode, or a signal): start no more.
		p.broken = true
		w.discard()
	}
	return nil
}

// fill starts supervisors in the background until size are waiting.
func (p *Pool) fill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for ; !p.closed && !p.broken && len(p.idle)+p.filling < p.size; p.filling++ {
		go func() {
			w, err := startWaiting(p.argv)
			p.mu.Lock()
			defer p.mu.Unlock()
			p.filling--
			switch {
			case err != nil:
				p.broken = true
			case p.closed:
				w.discard()
			default:
				p.idle = append(p.idle, w)
			}
		}()
	}
}

// Close stops the waiting supervisors (their stdin closes; they exit) and
// reaps them.
func (p *Pool) Close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	for _, w := range idle {
		w.discard()
	}
}

// discard closes a waiting supervisor's pipes and reaps it.
func (w *waiting) discard() {
	w.in.Close()
	w.ready.Close()
	w.proc.Wait()
}

// startWaiting starts one supervisor that waits for a run: its own
// session, the kernel's environment without run identity, / as its
// working directory, stderr to /dev/null until it has a run.
func startWaiting(argv []string) (*waiting, error) {
	if len(argv) == 0 {
		return nil, errors.New("no supervisor command configured")
	}
	rd, wr, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	in, inW, err := os.Pipe()
	if err != nil {
		rd.Close()
		wr.Close()
		return nil, err
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		rd.Close()
		wr.Close()
		in.Close()
		inW.Close()
		return nil, err
	}
	defer devnull.Close()
	args := append(append([]string{}, argv...), WaitingDir)
	proc, err := os.StartProcess(args[0], args, &os.ProcAttr{
		Dir:   "/",
		Env:   withoutPIEnv(os.Environ()),
		Files: []*os.File{in, devnull, devnull, wr},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	in.Close()
	wr.Close()
	if err != nil {
		rd.Close()
		inW.Close()
		return nil, err
	}
	return &waiting{proc: proc, start: StartTime(proc.Pid), in: inW, ready: rd, waiting: true}, nil
}

// warm does, while a supervisor waits for its run, the one-time work its
// first run would otherwise pay on the way to its leaf: the runtime's
// pidfd probe (a clone, on the first process start), the JSON decoders
// of the handover and run.json, and the signal loop. Nothing of it
// depends on the run.
func warm() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		p.Release()
	}
	var h handover
	json.Unmarshal([]byte(`{"env":[],"run":{}}`), &h)
	var m Meta
	json.Unmarshal([]byte(`{"limits":{},"health":{}}`), &m)
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM)
	signal.Stop(c)
}

// awaitHandover is the waiting mode of a supervisor (Main with
// WaitingDir): it reads its run on stdin, takes on the run's environment,
// working directory and stderr.log (as its own fd 2, where a crash's
// report lands), and returns the run's state directory and run.json. With
// nothing on stdin (the pool closed) it returns io.EOF.
func awaitHandover(in io.Reader) (Dir, []byte, error) {
	data, err := io.ReadAll(in)
	if err != nil {
		return "", nil, fmt.Errorf("read the run from the kernel: %w", err)
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		return "", nil, io.EOF
	}
	var h handover
	if err := json.Unmarshal(data, &h); err != nil {
		return "", nil, fmt.Errorf("the run from the kernel: %w", err)
	}
	var m struct {
		StateDir string `json:"state_dir"`
		Cwd      string `json:"cwd"`
	}
	if err := json.Unmarshal(h.Run, &m); err != nil || m.StateDir == "" {
		return "", nil, fmt.Errorf("the run from the kernel has no state_dir: %v", err)
	}
	os.Clearenv()
	for _, kv := range h.Env {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			os.Setenv(k, v)
		}
	}
	if m.Cwd != "" {
		if err := os.Chdir(m.Cwd); err != nil {
			return "", nil, fmt.Errorf("chdir %s: %w", m.Cwd, err)
		}
	}
	dir := Dir(m.StateDir)
	f, err := os.OpenFile(dir.Path(StderrLog), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return "", nil, fmt.Errorf("supervisor log: %w", err)
	}
	err = unix.Dup3(int(f.Fd()), 2, 0)
	f.Close()
	if err != nil {
		return "", nil, fmt.Errorf("supervisor log: %w", err)
	}
	return dir, h.Run, nil
}
