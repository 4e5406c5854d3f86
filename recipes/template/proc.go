package template

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pi-actors/pi-actors/internal/lazyre"
)

// readerGrace bounds how long output pipes may stay open, with nothing
// moving through them, after a leaf's process group is gone (only a
// process that escaped the group with setsid can hold them); then they are
// closed so the composition never hangs. A reader still copying (a slow
// log on a stalled disk) is waited for: what the leaf wrote is never cut.
const readerGrace = time.Second

func (x *run) leaf(ctx context.Context, s *Step, in *Buffer) outcome {
	// The command as the template wrote it is what reports name: a hook's
	// addition (the actor_context bundle, kilobytes of recipe JSON) is
	// context for the program, not part of the command.
	command := QuoteCommand(s.Argv)
	argv := s.Argv
	if x.Hook != nil {
		argv = x.Hook(s, argv)
	}
	x.mu.Lock()
	x.commands = append(x.commands, command)
	x.mu.Unlock()
	if ctx.Err() != nil {
		o := interrupted(ctx, s)
		o.command = command
		return o
	}
	o := outcome{command: command, path: s.Path, out: x.newBuffer(), stderr: x.newBuffer()}
	var errSink, outSink io.Writer = o.stderr, o.out
	if x.Stderr != nil {
		errSink = &teeWriter{buf: o.stderr, live: x.Stderr, mu: &x.stderrMu}
	}
	if x.Stdout != nil {
		outSink = &teeWriter{buf: o.out, live: x.Stdout, mu: &x.stdoutMu}
	}
	if s.Exe == "" {
		fmt.Fprintf(errSink, "pi-actors: %s: command not found\n", argv[0])
		o.code = 127
		return o
	}
	p, err := x.start(s.Exe, argv, in, outSink, errSink)
	if err != nil {
		fmt.Fprintf(errSink, "pi-actors: %s: %v\n", argv[0], err)
		o.code = 126
		if errors.Is(err, os.ErrNotExist) {
			o.code = 127
		}
		return o
	}
	x.event(Event{Type: "command.start", Path: s.Path, Command: command, Pid: p.pgid}, +1)
	o.code, o.killed = p.wait(ctx, x.killGrace())
	o.signaled = !o.killed && signaled(p.cmd.ProcessState)
	x.event(Event{Type: "command.done", Path: s.Path, Command: command, Pid: p.pgid, Code: o.code, Killed: o.killed}, -1)
	return o
}

func (x *run) event(e Event, delta int) {
	x.mu.Lock()
	x.active += delta
	e.Active = x.active
	x.mu.Unlock()
	if x.OnEvent != nil {
		x.OnEvent(e)
	}
}

// proc is one started leaf: the leader of its own process group.
type proc struct {
	cmd     *exec.Cmd
	pgid    int
	exited  chan struct{}
	readers sync.WaitGroup
	pipes   []*os.File // our read ends, force-closed if a holder escaped
	copies  [2]pipeCopy
	stdinW  *os.File
}

// pipeCopy copies one output pipe to its writer and shows drain whether
// its destination is what holds it up: bytes copied, time spent inside
// writes, and whether it is inside one now.
type pipeCopy struct {
	moved   atomic.Int64
	writeNS atomic.Int64
	writing atomic.Bool
}

// run copies r to w until r ends. A write error does not stop it: the
// leaf must never block on a full pipe (what w refused is lost to w only).
func (c *pipeCopy) run(w io.Writer, r io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			c.writing.Store(true)
			t0 := time.Now()
			w.Write(buf[:n])
			c.writeNS.Add(int64(time.Since(t0)))
			c.writing.Store(false)
			c.moved.Add(int64(n))
		}
		if err != nil {
			return
		}
	}
}

func (x *run) start(exe string, argv []string, in *Buffer, stdout, stderr io.Writer) (*proc, error) {
	cmd := &exec.Cmd{Path: exe, Args: argv, Dir: x.Dir, Env: x.Env,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true}}
	if x.DieWithParent {
		// Tied to the OS thread that forks: Go parks idle threads rather
		// than ending them, so the thread outlives the leaf in practice.
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	p := &proc{cmd: cmd, exited: make(chan struct{})}
	var closeAfterStart []*os.File
	fail := func(err error) (*proc, error) {
		for _, f := range append(closeAfterStart, p.pipes...) {
			f.Close()
		}
		if p.stdinW != nil {
			p.stdinW.Close()
		}
		return nil, err
	}
	switch {
	case in.Len() == 0:
		// nil Stdin reads /dev/null
	case in.file() != "":
		f, err := os.Open(in.file())
		if err != nil {
			return fail(fmt.Errorf("open stdin: %w", err))
		}
		cmd.Stdin = f
		closeAfterStart = append(closeAfterStart, f)
	default:
		pr, pw, err := os.Pipe()
		if err != nil {
			return fail(fmt.Errorf("stdin pipe: %w", err))
		}
		cmd.Stdin, p.stdinW = pr, pw
		closeAfterStart = append(closeAfterStart, pr)
	}
	for _, dst := range []struct {
		w   io.Writer
		set *io.Writer
	}{{stdout, &cmd.Stdout}, {stderr, &cmd.Stderr}} {
		pr, pw, err := os.Pipe()
		if err != nil {
			return fail(fmt.Errorf("output pipe: %w", err))
		}
		*dst.set = pw
		closeAfterStart = append(closeAfterStart, pw)
		p.pipes = append(p.pipes, pr)
	}
	if err := cmd.Start(); err != nil {
		return fail(err)
	}
	for _, f := range closeAfterStart {
		f.Close()
	}
	p.pgid = cmd.Process.Pid
	for i, w := range []io.Writer{stdout, stderr} {
		p.readers.Go(func() { p.copies[i].run(w, p.pipes[i]) })
	}
	if p.stdinW != nil {
		go func() {
			io.Copy(p.stdinW, in.Reader())
			p.stdinW.Close()
		}()
	}
	go func() {
		awaitExit(p.pgid)
		cmd.Wait() // the status is read from cmd.ProcessState
		close(p.exited)
	}()
	return p, nil
}

// awaitExit blocks until the child pid has exited, through a pidfd in
// Go's poller: no thread sits in a blocking wait per live leaf (cmd.Wait
// alone would hold one). Where pidfds are not available it returns at
// once and cmd.Wait blocks as usual.
func awaitExit(pid int) {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	rc.Read(func(fd uintptr) bool {
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(pfd, 0)
		return err != nil || n > 0
	})
}

// wait returns the leaf's status once its process has exited and nothing
// is left in its group. Cancelling ctx stops the group: SIGTERM, grace,
// SIGKILL. A timeout is 124, a signal death 128+n.
func (p *proc) wait(ctx context.Context, grace time.Duration) (int, bool) {
	killed := false
	select {
	case <-p.exited:
	case <-ctx.Done():
		killed = true
	}
	// Whatever the leader did, nothing it started outlives the leaf.
	if killed || groupAlive(p.pgid) {
		stopGroup(p.pgid, grace, p.exited)
	}
	<-p.exited
	p.drain()
	if killed && errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		return 124, true
	}
	if code := CauseExit(ctx); killed && code > 0 {
		return code, true // stopped for the CLI's signal: 128+n of that signal
	}
	return exitStatus(p.cmd.ProcessState), killed
}

// drainSlack is what may still come out of a leaf's pipes once its
// group is gone: their buffers (64 KiB each) and a read in flight on
// each. A process that escaped the group can write on for ever; past this
// much, what moves is its output, not the leaf's.
const drainSlack = 4 * 64 << 10

// drain waits for the output readers, closing the pipes if a process that
// escaped the group still holds them. It waits past readerGrace only for
// a slow destination — a reader inside a write, or that spent most of
// the last grace in writes (a log on a stalled disk) — and only while no
// more than drainSlack moved since the group was gone; output that keeps
// arriving while the destination keeps up is an escaped process's.
func (p *proc) drain() {
	done := make(chan struct{})
	go func() { p.readers.Wait(); close(done) }()
	t := time.NewTimer(readerGrace)
	defer t.Stop()
	start := p.moved()
	lastNS := p.writeNS()
	for waiting := true; waiting; {
		select {
		case <-done:
			waiting = false
		case <-t.C:
			ns := p.writeNS()
			slow := p.copies[0].writing.Load() || p.copies[1].writing.Load() || ns-lastNS > int64(readerGrace/2)
			if slow && p.moved()-start <= drainSlack {
				lastNS = ns
				t.Reset(readerGrace)
				continue
			}
			for _, f := range p.pipes {
				f.Close()
			}
			<-done
			waiting = false
		}
	}
	for _, f := range p.pipes {
		f.Close()
	}
	if p.stdinW != nil {
		p.stdinW.Close()
	}
}

// moved is how many bytes the output readers copied.
func (p *proc) moved() int64 { return p.copies[0].moved.Load() + p.copies[1].moved.Load() }

// writeNS is how long the output readers spent inside writes.
func (p *proc) writeNS() int64 { return p.copies[0].writeNS.Load() + p.copies[1].writeNS.Load() }

// stopGroup sends SIGTERM to the group, waits up to grace for the leader
// and every member to go, then sends SIGKILL to whatever is left.
func stopGroup(pgid int, grace time.Duration, exited <-chan struct{}) {
	syscall.Kill(-pgid, syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	if waitGroupGone(pgid, deadline, exited) {
		return
	}
	syscall.Kill(-pgid, syscall.SIGKILL)
	waitGroupGone(pgid, time.Now().Add(time.Second), exited)
}

// waitGroupGone polls until the leader has exited and the group is empty,
// or the deadline passes.
func waitGroupGone(pgid int, deadline time.Time, exited <-chan struct{}) bool {
	step := time.Millisecond
	for {
		leaderDone := false
		select {
		case <-exited:
			leaderDone = true
		default:
		}
		if leaderDone && !groupAlive(pgid) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(step)
		step = min(step*2, 20*time.Millisecond)
	}
}

// groupAlive reports whether a live (non-zombie) process is in the group.
func groupAlive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	return groupHasLiveMember(pgid)
}

// groupHasLiveMember scans /proc: a group whose remaining members are all
// zombies waiting for a reaper counts as gone.
func groupHasLiveMember(pgid int) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true // cannot tell; kill(2) said something is there
	}
	for _, e := range entries {
		name := e.Name()
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		data, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue
		}
		state, pgrp, ok := parseStat(string(data))
		if ok && pgrp == pgid && state != "Z" && state != "X" {
			return true
		}
	}
	return false
}

// parseStat reads the state and process group from /proc/<pid>/stat; the
// command name may contain spaces and parentheses, so fields are counted
// after the last ')'.
func parseStat(s string) (state string, pgrp int, ok bool) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 3 {
		return "", 0, false
	}
	if _, err := fmt.Sscan(f[2], &pgrp); err != nil {
		return "", 0, false
	}
	return f[0], pgrp, true
}

// signaled reports whether the process died of a signal.
func signaled(ps *os.ProcessState) bool {
	if ps == nil {
		return false
	}
	ws, ok := ps.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled()
}

func exitStatus(ps *os.ProcessState) int {
	if ps == nil {
		return 1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

type teeWriter struct {
	buf  io.Writer
	live io.Writer
	mu   *sync.Mutex
}

func (t *teeWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	t.live.Write(p)
	t.mu.Unlock()
	return t.buf.Write(p)
}

var plainWordRe = lazyre.New(`^[A-Za-z0-9_/:=.,@%+\-]+$`)

// QuoteCommand renders argv for humans and logs, quoting like a POSIX
// shell where needed. It is never executed.
func QuoteCommand(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		switch {
		case a == "":
			parts[i] = "''"
		case plainWordRe.MatchString(a):
			parts[i] = a
		default:
			parts[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(parts, " ")
}
