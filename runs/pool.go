package runs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
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

// encodeHandover is what a waiting supervisor reads on stdin: the
// environment it takes on (its leaves inherit it), each KEY=value ending
// in a NUL (no environment entry holds one), an empty entry, then the
// run's run.json. Plain framing rather than JSON: decoding it is on the
// way from spawn to leaf.
func encodeHandover(env []string, run []byte) []byte {
	n := len(run) + 1
	for _, kv := range env {
		n += len(kv) + 1
	}
	b := make([]byte, 0, n)
	for _, kv := range env {
		if kv == "" || strings.IndexByte(kv, 0) >= 0 {
			continue
		}
		b = append(append(b, kv...), 0)
	}
	return append(append(b, 0), run...)
}

// decodeHandover splits what encodeHandover wrote.
func decodeHandover(data []byte) (env []string, run []byte, err error) {
	for {
		i := bytes.IndexByte(data, 0)
		if i < 0 {
			return nil, nil, errors.New("the run from the kernel: no end of its environment")
		}
		if i == 0 {
			return env, data[1:], nil
		}
		env = append(env, string(data[:i]))
		data = data[i+1:]
	}
}

// NewPool starts size supervisors (argv, the state dir argument
// appended) that wait for runs.
func NewPool(supervisor []string, size int) *Pool {
	p := &Pool{argv: supervisor, size: size}
	p.fill()
	return p
}

// take returns a live waiting supervisor, or nil. The caller refills the
// pool (fill) once its run is under way: starting the replacement is
// work the new run's leaf should not compete with for a CPU.
func (p *Pool) take() *waiting {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.idle) > 0 {
		w := p.idle[0]
		p.idle = p.idle[1:]
		if w.alive() {
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
	if p == nil {
		return
	}
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

// alive reports whether a waiting supervisor still waits: while it
// lives, its end of the readiness pipe is open and has nothing to read
// (one poll; it is our child, not reaped, so its pid is its own).
func (w *waiting) alive() bool {
	rc, err := w.ready.SyscallConn()
	if err != nil {
		return false
	}
	n := -1
	rc.Control(func(fd uintptr) {
		n, err = unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 0)
	})
	return err == nil && n == 0
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
// pidfd probe (a clone, on the first process start), the JSON decoder of
// run.json, the buffer the handover is read into, and the signals a
// supervisor handles (enabling each costs a round trip to the runtime's
// signal thread). Nothing of it depends on the run. Until the run
// arrives, TERM, INT and HUP end the waiting supervisor as their default
// action would, and one that comes while the run is being set up stops
// it once it is (Supervise); USR1 and CHLD mean nothing yet.
func warm() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		p.Release()
	}
	var m Meta
	json.Unmarshal([]byte(`{"limits":{},"health":{}}`), &m)
	handoverBuf = make([]byte, 64<<10)
	clear(handoverBuf) // its pages are touched now, not while reading the run
	c := make(chan os.Signal, 8)
	signal.Notify(c, supervisorSignals...)
	go func() {
		for sig := range c {
			n, ok := sig.(syscall.Signal)
			if !ok || n == syscall.SIGUSR1 || n == syscall.SIGCHLD {
				continue
			}
			if !handed.Load() {
				os.Exit(128 + int(n))
			}
			// Between the handover and Supervise's own handler: kept
			// for it (stopAsked).
			stopAsked.Store(true)
		}
	}()
}

// supervisorSignals are the signals a supervisor with a run handles:
// TERM, INT and HUP stop the run (Supervise), USR1 rings for the inbox
// (watchInbox), CHLD reaps orphans (reap).
var supervisorSignals = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGCHLD}

var (
	handoverBuf []byte      // warm: what awaitHandover reads into
	handed      atomic.Bool // a waiting supervisor has its run
	stopAsked   atomic.Bool // TERM, INT or HUP came once it had

	// afterHandover, if set (tests only), runs between the handover and
	// Supervise's own signal handler: the window stopAsked covers.
	afterHandover func()
)

// awaitHandover is the waiting mode of a supervisor (Main with
// WaitingDir): it reads its run on stdin, takes on the run's environment,
// working directory and stderr.log (as its own fd 2, where a crash's
// report lands), and returns the run's state directory and the run
// decoded. With nothing on stdin (the pool closed) it returns io.EOF.
func awaitHandover(in io.Reader) (Dir, *Meta, error) {
	data, err := readAll(in, handoverBuf)
	if err != nil {
		return "", nil, fmt.Errorf("read the run from the kernel: %w", err)
	}
	handed.Store(true)
	if len(data) == 0 {
		return "", nil, io.EOF
	}
	env, run, err := decodeHandover(data)
	if err != nil {
		return "", nil, err
	}
	m := &Meta{}
	if err := json.Unmarshal(run, m); err != nil || m.StateDir == "" {
		return "", nil, fmt.Errorf("the run from the kernel has no state_dir: %v", err)
	}
	os.Clearenv()
	for _, kv := range env {
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
	return dir, m, nil
}

// readAll reads r to its end into buf, growing it past its length.
func readAll(r io.Reader, buf []byte) ([]byte, error) {
	n := 0
	for {
		if n == len(buf) {
			buf = append(buf, make([]byte, len(buf)+512)...)
		}
		k, err := r.Read(buf[n:])
		n += k
		if errors.Is(err, io.EOF) {
			return buf[:n], nil
		}
		if err != nil {
			return nil, err
		}
	}
}
