package template

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// DefaultKillGrace is the time between SIGTERM and SIGKILL.
const DefaultKillGrace = 5 * time.Second

// Runner executes plans. The zero value runs in the current directory with
// the current environment.
type Runner struct {
	Dir       string
	Env       []string      // nil = the current environment
	KillGrace time.Duration // SIGTERM → SIGKILL; 0 = DefaultKillGrace
	TempDir   string        // where large outputs spill (made when first needed); "" = os.TempDir()
	// Stdout and Stderr, if set, receive a live copy of every leaf's
	// stdout and stderr (a run's logs).
	Stdout io.Writer
	Stderr io.Writer
	// MaxCapture bounds what is kept of one leaf's stdout for the next
	// step (0 = everything); the live copy is never cut.
	MaxCapture int64
	// Hook may rewrite a leaf's argv just before it starts (recipes add
	// their context bundle to `pi -p` prompts).
	Hook func(s *Step, argv []string) []string
	// OnEvent, if set, is called (from many goroutines) when a command
	// starts and when it is done.
	OnEvent func(Event)
	// Clock, if set, counts steps' timeouts and delays instead of the wall
	// clock (a run's supervisor passes one that stops while its run is
	// suspended, so a timeout goes on with the time it had left).
	Clock Clock
	// KeepStderr keeps the failing command's whole stderr in
	// Result.Stderr (a foreground call shows its end), not only the head
	// in Failure.Stderr.
	KeepStderr bool
	// DieWithParent makes each leaf receive SIGKILL when the process
	// that started it dies (PR_SET_PDEATHSIG): a foreground exec or call
	// killed with SIGKILL can stop nothing itself, and its leaves (a
	// sub-agent waiting on its model) ran on for ever. A supervisor does
	// not set it: the kernel finds and stops what a lost supervisor left.
	DieWithParent bool
}

// Clock counts time for timeouts and delays.
type Clock interface {
	// Wait returns true once d of counted time has passed, false when ctx
	// ended first.
	Wait(ctx context.Context, d time.Duration) bool
}

// Event reports a command starting or finishing.
type Event struct {
	Type    string // "command.start" or "command.done"
	Path    string
	Command string
	Pid     int
	Code    int
	Killed  bool
	Active  int // commands still running after this event
}

// Result is the outcome of a composition.
type Result struct {
	Code   int  // 0, the failing command's status, 124 timeout, 128+n signal
	Killed bool // the failing command was killed (timeout or abort)
	// Signaled: the failing command died of a signal (Code is 128+n) —
	// not a program that exited 128+n (or 124) itself.
	Signaled bool
	Skipped  bool // the root node was skipped by `when`
	// Stdout is the composition's output; the caller closes it.
	Stdout *Buffer
	// Failure describes what failed the composition (Code != 0).
	Failure     *Failure
	Commands    []string  // every started invocation, shell-quoted
	NonCritical []Failure // failures that did not fail the composition
	Joins       []Join    // every parallel join, in completion order
	// Stderr is the failing command's whole stderr when Runner.KeepStderr
	// is set and the composition failed (else nil); the caller closes it.
	Stderr *Buffer
}

// Failure is one failed command (or group).
type Failure struct {
	Path    string `json:"path"`
	Command string `json:"command"`
	Code    int    `json:"code"`
	Killed  bool   `json:"killed"`
	Stderr  string `json:"stderr,omitempty"` // at most 1000 bytes
}

// Join is the report of one parallel node.
type Join struct {
	Path       string     `json:"path"`
	Branches   []Branch   `json:"branches"`
	SoftQuorum SoftQuorum `json:"soft_quorum"`
}

// Branch is one branch of a parallel join.
type Branch struct {
	Label       string `json:"label"`
	Status      string `json:"status"` // done, failed, timeout or aborted
	Code        int    `json:"code"`
	Command     string `json:"command"`
	Killed      bool   `json:"killed"`
	Stderr      string `json:"stderr,omitempty"`
	StdoutBytes int64  `json:"stdout_bytes"`
}

// SoftQuorum summarises a join: a join with failures still succeeds
// unless a failure scope escalates.
type SoftQuorum struct {
	Coverage float64 `json:"coverage"`
	Degraded bool    `json:"degraded"`
	Done     int     `json:"done"`
	Expected int     `json:"expected"`
	Failed   int     `json:"failed"`
	Usable   bool    `json:"usable"`
}

const branchStderrMax = 1000

// outcome is a step's result inside a run.
type outcome struct {
	code     int
	killed   bool
	signaled bool // the command died of a signal (code 128+n)
	skipped  bool
	out      *Buffer
	stderr   *Buffer
	command  string
	path     string
	escalate Scope
}

type run struct {
	*Runner
	root     *Step
	mu       sync.Mutex
	commands []string
	noncrit  []Failure
	joins    []Join
	active   int
	buffers  []*Buffer
	stderrMu sync.Mutex
	stdoutMu sync.Mutex
}

// Run executes plan. stdin is the first step's input (nil = empty). The
// returned Result owns its Stdout buffer; every other buffer is released.
// Cancelling ctx stops every running command (SIGTERM, grace, SIGKILL).
func (r *Runner) Run(ctx context.Context, plan *Plan, stdin *Buffer) *Result {
	x := &run{Runner: r, root: plan.Root}
	o := x.step(ctx, plan.Root, stdin)
	res := &Result{
		Code:        o.code,
		Killed:      o.killed,
		Signaled:    o.signaled,
		Skipped:     o.skipped && o.path == plan.Root.Path,
		Stdout:      o.out,
		Commands:    x.commands,
		NonCritical: x.noncrit,
		Joins:       x.joins,
	}
	if o.code != 0 {
		res.Failure = &Failure{Path: o.path, Command: o.command, Code: o.code, Killed: o.killed, Stderr: headString(o.stderr, branchStderrMax)}
		if r.KeepStderr {
			res.Stderr = o.stderr
		}
	}
	if res.Stdout == nil {
		res.Stdout = BufferOf(nil)
	}
	for _, b := range x.buffers {
		if b != res.Stdout && b != stdin && b != res.Stderr {
			b.Close()
		}
	}
	return res
}

func (x *run) newBuffer() *Buffer {
	b := NewBuffer(x.TempDir, 0)
	b.limit = x.MaxCapture
	x.mu.Lock()
	x.buffers = append(x.buffers, b)
	x.mu.Unlock()
	return b
}

func (x *run) killGrace() time.Duration {
	if x.KillGrace > 0 {
		return x.KillGrace
	}
	return DefaultKillGrace
}

// interrupted is the outcome of a step stopped by its context: 124 when a
// timeout expired; when the composition was aborted, the exit code its
// cause carries (a signal's 128+n) or 130.
// stepName names a step in a failure: its command (a leaf), its label,
// or its path.
func stepName(s *Step) string {
	switch {
	case len(s.Argv) > 0:
		return strings.Join(s.Argv, " ")
	case s.Label != "":
		return s.Label
	}
	return s.Path
}

func interrupted(ctx context.Context, s *Step) outcome {
	o := outcome{code: 130, killed: true, path: s.Path}
	switch {
	case errors.Is(context.Cause(ctx), context.DeadlineExceeded):
		o.code = 124
	case CauseExit(ctx) > 0:
		o.code = CauseExit(ctx)
	}
	return o
}

// CauseExit is the exit status ctx's cancel cause carries (an error with
// an ExitCode method: the CLI cancels with the signal it received, 128+n),
// or 0.
func CauseExit(ctx context.Context) int {
	var coded interface{ ExitCode() int }
	if errors.As(context.Cause(ctx), &coded) {
		return max(coded.ExitCode(), 0)
	}
	return 0
}

// wait waits d of the Runner's clock (the wall clock without one); false
// when ctx ended first.
func (x *run) wait(ctx context.Context, d time.Duration) bool {
	if x.Clock != nil {
		return x.Clock.Wait(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// withTimeout is context.WithTimeout on the Runner's clock: the context
// ends with cause context.DeadlineExceeded once d of counted time passed.
func (x *run) withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if x.Clock == nil {
		return context.WithTimeout(ctx, d)
	}
	tctx, cancel := context.WithCancelCause(ctx)
	go func() {
		if x.Clock.Wait(tctx, d) {
			cancel(context.DeadlineExceeded)
		}
	}()
	return tctx, func() { cancel(context.Canceled) }
}

func (x *run) step(ctx context.Context, s *Step, in *Buffer) outcome {
	if s.Kind == StepSkipped {
		return outcome{out: in, skipped: true, path: s.Path}
	}
	if s.Delay > 0 && !x.wait(ctx, s.Delay) {
		o := interrupted(ctx, s)
		o.command = "the delay of " + stepName(s) // its failure names what was waiting
		return o
	}
	var o outcome
	for attempt := 1; ; attempt++ {
		o = x.attempt(ctx, s, in)
		if o.code == 0 || attempt >= s.Retry || ctx.Err() != nil {
			break
		}
		if s.Recover != nil {
			ro := x.step(ctx, s.Recover, o.out)
			if ro.code != 0 {
				ro.escalate = max(ro.escalate, s.Recover.Failure, s.Failure)
				return ro
			}
		}
	}
	if o.code == 0 && s.Output != nil {
		b := x.newBuffer()
		b.Write([]byte(*s.Output))
		o.out = b
	}
	return o
}

// attempt runs s once, bounded by its timeout.
func (x *run) attempt(ctx context.Context, s *Step, in *Buffer) outcome {
	actx := ctx
	if s.Timeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = x.withTimeout(ctx, s.Timeout)
		defer cancel()
	}
	var o outcome
	switch s.Kind {
	case StepLeaf:
		o = x.leaf(actx, s, in)
	case StepParallel:
		o = x.parallel(actx, s, in)
	default:
		o = x.sequence(actx, s, in)
	}
	// A group whose own timeout cut it short failed with 124, whatever its
	// children reported (a degraded join of killed branches included).
	if s.Kind != StepLeaf && (o.code != 0 || o.killed) && actx.Err() != nil && ctx.Err() == nil {
		t := interrupted(actx, s)
		t.out, t.stderr, t.command = o.out, o.stderr, o.command
		return t
	}
	return o
}

func (x *run) sequence(ctx context.Context, s *Step, in *Buffer) outcome {
	cur := in
	for _, c := range s.Children {
		if ctx.Err() != nil {
			return interrupted(ctx, s)
		}
		o := x.step(ctx, c, cur)
		if ctx.Err() != nil {
			// The group itself was stopped (its timeout, or an abort): that
			// ends the sequence whatever the step's own scope says.
			t := interrupted(ctx, s)
			t.command, t.stderr, t.path = o.command, o.stderr, o.path
			return t
		}
		if o.code == 0 {
			cur = o.out
			continue
		}
		scope := max(c.Failure, s.Failure, o.escalate)
		// A root sequence of exactly one step fails with it.
		if s == x.root && len(s.Children) == 1 {
			scope = ScopeRoot
		}
		if scope == ScopeContinue {
			x.nonCritical(o)
			cur = nil
			continue
		}
		o.escalate = scope
		return o
	}
	return outcome{out: cur, path: s.Path}
}

func (x *run) parallel(ctx context.Context, s *Step, in *Buffer) outcome {
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	outs := make([]outcome, len(s.Children))
	var wg sync.WaitGroup
	for i, c := range s.Children {
		wg.Go(func() {
			o := x.step(pctx, c, in)
			if o.code != 0 {
				o.escalate = max(c.Failure, s.Failure, o.escalate)
				if o.escalate == ScopeRoot {
					cancel() // abort the siblings
				}
			}
			outs[i] = o
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		// The group itself was stopped (its timeout, or an abort): it
		// fails with 124 or 130 whatever its branches' scopes say, and
		// names the first branch that was stopped.
		j := x.join(ctx, s, in, outs)
		t := interrupted(ctx, s)
		t.out = j.out
		for _, o := range outs {
			if o.killed {
				t.command, t.stderr, t.path = o.command, o.stderr, o.path
				break
			}
		}
		return t
	}
	for _, o := range outs {
		if o.code != 0 && o.escalate == ScopeRoot {
			return o
		}
	}
	return x.join(ctx, s, in, outs)
}

// join writes the branch reports in order:
//
//	--- branch: <label> status: <done|failed|timeout|aborted> ---
//	<stdout>                   (done)
//	exit: <code>               (the others)
//	stderr: <first 1000 bytes> (the others; when not blank)
//
// A killed branch is "aborted" when the composition was aborted (ctx
// cancelled, not timed out), "timeout" otherwise.
func (x *run) join(ctx context.Context, s *Step, in *Buffer, outs []outcome) outcome {
	aborted := ctx.Err() != nil && !errors.Is(context.Cause(ctx), context.DeadlineExceeded)
	out := x.newBuffer()
	j := Join{Path: s.Path, Branches: make([]Branch, len(outs))}
	var first *outcome
	for i, o := range outs {
		c := s.Children[i]
		label := c.Label
		if label == "" {
			label = fmt.Sprintf("branch %d", i+1)
		}
		br := Branch{Label: label, Code: o.code, Command: o.command, Killed: o.killed, StdoutBytes: o.out.Len()}
		switch {
		case o.code == 0:
			br.Status = "done"
		case o.killed && aborted:
			br.Status = "aborted"
		case o.killed:
			br.Status = "timeout"
		default:
			br.Status = "failed"
		}
		if i > 0 {
			out.Write([]byte("\n"))
		}
		fmt.Fprintf(out, "--- branch: %s status: %s ---\n", joinLabel(label), br.Status)
		if o.code == 0 {
			j.SoftQuorum.Done++
			body, _ := o.out.Bytes()
			out.Write(quoteHeaders(trimNewlines(body)))
		} else {
			j.SoftQuorum.Failed++
			br.Stderr = strings.TrimSpace(headString(o.stderr, branchStderrMax))
			fmt.Fprintf(out, "exit: %d", o.code)
			if br.Stderr != "" {
				fmt.Fprintf(out, "\nstderr: %s", quoteHeaders([]byte(br.Stderr)))
			}
			if first == nil {
				first = &outs[i]
			}
		}
		j.Branches[i] = br
	}
	out.Write([]byte("\n"))
	q := &j.SoftQuorum
	q.Expected = len(outs)
	q.Coverage = float64(q.Done) / float64(q.Expected)
	q.Degraded = q.Failed > 0
	q.Usable = q.Done > 0
	x.mu.Lock()
	x.joins = append(x.joins, j)
	x.mu.Unlock()
	var killed *outcome
	for i := range outs {
		if outs[i].killed && killed == nil {
			killed = &outs[i]
		}
	}
	if first == nil {
		return outcome{out: out, path: s.Path}
	}
	if s.Failure >= ScopeBranch {
		return outcome{code: first.code, killed: first.killed, signaled: first.signaled, out: out, stderr: first.stderr, command: first.command, path: first.path, escalate: s.Failure}
	}
	// The group itself stopped (its timeout, or its caller's): the branches
	// that stopped with it are its failure (attempt reports it), not
	// failures of their own as well.
	stopped := ctx.Err() != nil
	for _, o := range outs {
		if o.code != 0 && !(o.killed && (aborted || stopped)) {
			x.nonCritical(o)
		}
	}
	if killed != nil && stopped {
		// Report the stopped branch: the group's own timeout stopped it.
		return outcome{out: out, path: killed.path, killed: true, command: killed.command, stderr: killed.stderr}
	}
	// A branch its own timeout stopped is a non-critical failure: the
	// group succeeded (it said killed=true with code 0).
	return outcome{out: out, path: s.Path}
}

func (x *run) nonCritical(o outcome) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.noncrit = append(x.noncrit, Failure{Path: o.path, Command: o.command, Code: o.code, Killed: o.killed, Stderr: strings.TrimSpace(headString(o.stderr, branchStderrMax))})
}

func trimNewlines(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// headString returns up to n bytes from the start of b.
func headString(b *Buffer, n int) string {
	if b == nil {
		return ""
	}
	p := make([]byte, min(int64(n), b.Len()))
	k, _ := b.ReadAt(p, 0)
	return strings.ToValidUTF8(string(p[:k]), "")
}
