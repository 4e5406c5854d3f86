package runs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pi-actors/pi-actors/recipes/template"
)

// progressEvery bounds how often progress.json is rewritten while a run
// goes (its end, and a backoff, are written at once). The first write
// waits progressFirst: a run that ends sooner writes progress.json once,
// at its end, and a burst of starts does not pay for a durable write per
// run while it is starting (events.jsonl records every change at once).
const (
	progressEvery = 250 * time.Millisecond
	progressFirst = time.Second
)

// supervisor is the state of one `pi-actors supervise` process.
type supervisor struct {
	dir    Dir
	meta   *Meta
	node   *template.Node
	stdout *Log
	stderr *Log
	sid    int

	mu       sync.Mutex
	pmu      sync.Mutex    // serialises progress.json writes
	dirty    chan struct{} // progress changed: the writer coalesces bursts
	progress Progress
	leaves   map[int]Leaf
	cancel   context.CancelFunc // stops the current attempt
	stop     string             // why the run is being stopped: kill, cancel, restart, term (or a health reason)
	stopAt   time.Time          // when a stop for good (cancel, term) sent its SIGTERM
	wake     chan struct{}      // a control request arrived

	// Health checks (health_monitor.go, watch.go): the last unhealthy
	// verdict, the files a watch restart saw change, whether a readiness
	// follow-up went out.
	healthErr     string
	watchFiles    []string
	readyReported bool

	// ready tells the kernel the supervisor is set up (once; Supervise).
	ready func()
	// emu orders the run's event appends; heldEvent waits for the next
	// (holdEvent).
	emu       sync.Mutex
	heldEvent map[string]any

	// Suspension (suspend.go): the run's counted time, the restart held
	// while suspended, the agent root and the session record last seen.
	clock       *Clock
	smu         sync.Mutex // serialises suspend and resume (clock and signals together)
	deferred    string
	agentDir    string
	sessionSeen fileStamp
}

// Main is the body of the supervisor's entry points, `pi-actors-supervise
// <state_dir>` and the hidden `pi-actors supervise <state_dir>` (name is
// how errors name it; args are the words after it): fd 3 is the readiness
// pipe the kernel reads. It returns the exit code: 64 for bad arguments, 70
// when the run could not be set up.
func Main(name string, args []string) int {
	if len(args) != 1 {
		fmt.Fprintf(os.Stderr, "usage: %s <state_dir> (started by the kernel)\n", name)
		return 64
	}
	// One P: a supervisor waits on its leaves, pipes and timers and never
	// needs two CPUs, and one P starts fewer threads (GC workers, spare
	// Ms). 200 runs started by one batch, tmpfs, A/B in one session:
	// supervisor CPU per run 2.2-2.5 -> 2.0-2.1 ms, all running in
	// 403-452 -> 368-406 ms.
	runtime.GOMAXPROCS(1)
	ready := os.NewFile(3, "ready")
	dir, metaIn := Dir(args[0]), io.Reader(os.Stdin)
	var decoded *Meta
	if args[0] == WaitingDir {
		// Started ahead of its run (Pool): wait for it.
		warm()
		d, m, err := awaitHandover(os.Stdin)
		if errors.Is(err, io.EOF) {
			return 0 // the pool closed: no run
		}
		if err != nil {
			fmt.Fprintf(ready, "error %v\n", err)
			fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
			return 70
		}
		dir, metaIn, decoded = d, nil, m
		if afterHandover != nil {
			afterHandover()
		}
	}
	if err := supervise(context.Background(), dir, metaIn, decoded, ready); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		if errors.Is(err, ErrNotFound) {
			return 66 // no run in that state dir: the argument is wrong
		}
		return 70
	}
	return 0
}

// Supervise runs the run whose state directory is dir until it is over.
// It is the body of the supervisor (Main): started detached (its own
// session) by the kernel, it owns the run's process tree (it becomes a
// child subreaper), writes every state file but run.json (the kernel's),
// applies the restart policy and control messages, and exits when the
// run is terminal.
// ready, if not nil, receives one line once the supervisor is set up
// ("ok" once its first leaf started, or readyWait after, or an error).
func Supervise(ctx context.Context, dir Dir, metaIn io.Reader, ready *os.File) error {
	return supervise(ctx, dir, metaIn, nil, ready)
}

// supervise is Supervise; decoded, if not nil, is metaIn already decoded
// (a waiting supervisor's handover).
func supervise(ctx context.Context, dir Dir, metaIn io.Reader, decoded *Meta, ready *os.File) error {
	RestoreLeafEnv()
	s := &supervisor{dir: dir, leaves: map[int]Leaf{}, wake: make(chan struct{}, 1), dirty: make(chan struct{}, 1), sid: os.Getpid(), clock: NewClock(), agentDir: agentRoot()}
	if err := s.setup(metaIn, decoded); err != nil {
		if ready != nil {
			fmt.Fprintln(ready, readyError(err))
			ready.Close()
		}
		return err
	}
	defer s.stdout.Close()
	defer s.stderr.Close()
	stopWatch, _ := s.watchInbox()
	defer stopWatch()
	defer s.startWatch()() // watch=: nothing without it
	go s.reap()
	go func() {
		// Coalesce: at most one progress.json write per progressEvery; the
		// events file records every change at once.
		wait := progressFirst
		for range s.dirty {
			time.Sleep(wait)
			wait = progressEvery
			// Changes marked while we slept are in this write too.
			select {
			case <-s.dirty:
			default:
			}
			s.flushProgress()
		}
	}()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() {
		for range sigs {
			s.request("term")
		}
	}()
	if stopAsked.Load() {
		s.request("term") // it came before the handler above (warm)
	}
	// Control can reach us now. A supervisor that was waiting for its run
	// (a single spawn's) says ready once the first leaf has started
	// (onCommand), the run waits or ends without one, or readyWait
	// passed: the kernel then answers the spawn and starts the next
	// waiting supervisor, and neither competes with the leaf's start for
	// a CPU. One started for its run (a batch's, mostly) says so now: the
	// kernel's next start in the batch need not wait for this leaf.
	if ready != nil {
		var once sync.Once
		s.ready = func() {
			once.Do(func() {
				fmt.Fprintln(ready, "ok")
				ready.Close()
			})
		}
		t := time.AfterFunc(readyWait, s.sayReady)
		defer t.Stop()
	}
	s.holdEvent(map[string]any{"event": "run.start", "run": s.meta.Run, "pid": os.Getpid()})
	if decoded == nil {
		s.sayReady()
	}
	s.checkSession(true) // a run of a suspended session starts suspended
	s.control()          // controls queued before we started
	res := s.loop(ctx)
	s.sayReady()
	s.finish(res)
	return nil
}

// sayReady tells the kernel the supervisor is ready, if it has not yet,
// run.start written first.
func (s *supervisor) sayReady() {
	s.flushEvent()
	if s.ready != nil {
		s.ready()
	}
}

// readyWait bounds how long a supervisor that is set up waits for its
// first leaf to start before it tells the kernel it is ready.
const readyWait = 50 * time.Millisecond

// setup takes the run from decoded or metaIn — the run.json the kernel
// wrote, with our pid, before it handed it over — or, when both are nil
// or metaIn is empty,
// from run.json on disk. A run.json that names another pid is written
// with ours (a caller that did not write it). With an empty metaIn the
// run.json on disk must name us: the kernel died between starting us
// and handing the run over, and whatever is on disk then (a previous
// run of the same id) is not ours to run.
func (s *supervisor) setup(metaIn io.Reader, decoded *Meta) error {
	m, handed := decoded, decoded != nil
	if m == nil && metaIn != nil {
		data, err := io.ReadAll(metaIn)
		if err != nil {
			return fmt.Errorf("read run.json from the kernel: %w", err)
		}
		if len(bytes.TrimSpace(data)) > 0 {
			m = &Meta{}
			if err := json.Unmarshal(data, m); err != nil {
				return fmt.Errorf("run.json from the kernel: %w", err)
			}
			handed = true
		}
	}
	if m == nil {
		var err error
		if m, err = s.dir.Meta(); err != nil {
			return err
		}
		if metaIn != nil && m.Pid != os.Getpid() {
			return fmt.Errorf("run.json in %s names pid %d, not this supervisor: its run was never handed over", s.dir, m.Pid)
		}
	}
	if pid := os.Getpid(); handed && m.Pid != pid {
		m.Pid, m.PidStart = pid, StartTime(pid)
		if err := s.dir.WriteJSON(RunFile, m); err != nil {
			return err
		}
	}
	s.meta = m
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("become child subreaper: %w", err)
	}
	node, err := template.Parse(m.Template)
	if err != nil {
		return fmt.Errorf("run.json template: %w", err)
	}
	s.node = node
	if s.stdout, err = OpenLog(s.dir.Path(StdoutLog), m.Limits.LogMaxBytes, m.Limits.LogKeep); err != nil {
		return err
	}
	if s.stderr, err = OpenLog(s.dir.Path(StderrLog), m.Limits.LogMaxBytes, m.Limits.LogKeep); err != nil {
		return err
	}
	s.progress = Progress{Phase: "starting", Failures: []any{}}
	if m.Resumes > 0 {
		// A supervisor that died suspended (its paused_ms is written at
		// the resume) lost the suspension under way: it is this one's
		// first paused time, so the clocks of the run's nodes get it back.
		if old := s.dir.Progress(); old != nil && !old.SuspendedAt.IsZero() {
			s.progress.PausedMS = max(0, time.Since(old.SuspendedAt).Milliseconds())
		}
	}
	return nil
}

func (s *supervisor) logf(format string, args ...any) {
	fmt.Fprintf(s.stderr, "pi-actors supervise: "+format+"\n", args...)
}

// request asks the running attempt to stop for a reason (kill, cancel,
// restart, term, or a health reason: watch, liveness, max_rss). The first
// terminal reason wins over the restart-like ones.
func (s *supervisor) request(reason string) {
	if s.held(reason) {
		return // a restart of a suspended run waits for its resume
	}
	s.mu.Lock()
	if s.stop == "" || restartLike(s.stop) && !restartLike(reason) {
		s.stop = reason
	}
	cancel := s.cancel
	s.mu.Unlock()
	switch {
	case reason == "kill":
		// control.kill is immediate: SIGKILL every group, no grace.
		s.killTree(syscall.SIGKILL)
	case !restartLike(reason):
		// A suspended run stopped for good is continued first, so it can
		// handle SIGTERM. Its stop is recorded already: suspend leaves it
		// alone from now on (the session record still says suspended),
		// and a suspend under way finishes before the resume.
		s.resume("stop:"+reason, false)
		s.termStrays()
	}
	if cancel != nil {
		cancel()
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *supervisor) stopReason() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stop
}

// loop runs attempts until the run is over, applying the restart policy.
func (s *supervisor) loop(ctx context.Context) *Result {
	bo := &backoff{r: s.meta.Restart}
	if bo.r == nil {
		d := DefaultRestart()
		bo.r = &d
	}
	restarts := 0
	counted := true // the restart limit counts the first start and the policy's restarts
	for attempt := 1; ; attempt++ {
		s.awaitRunning(ctx)
		start := time.Now()
		if counted {
			bo.started(start)
		}
		counted = true
		code, command, killed, abnormal, errText := s.attempt(ctx, attempt, restarts)
		end := time.Now()
		reason := s.stopReason()
		switch reason {
		case "kill":
			return &Result{Status: StatusKilled, Code: 137, Command: command, Killed: true, Reason: "control.kill", Restarts: restarts}
		case "cancel":
			return &Result{Status: StatusCancelled, Code: code, Command: command, Killed: killed, Reason: "control.cancel", Restarts: restarts}
		case "term":
			// Stopped from outside, not by its owner: the owner must hear of it.
			return &Result{Status: StatusExited, Code: code, Command: command, Killed: killed, Reason: "supervisor_terminated", Restarts: restarts}
		case "restart", reasonWatch:
			// Asked for (control.restart, a watched file): not a crash, so
			// not counted against the restart limit — five saves of a
			// watched file left a dev server no restart for its first crash.
			s.endAttempt()
			restarts++
			s.appendEvent(s.restartEvent(attempt+1, reason))
			counted = false
			continue
		}
		status := StatusDone
		if code != 0 {
			status = StatusFailed
		}
		why, wants, failReason := "policy", s.meta.Restart.Wants(code, abnormal), ""
		if healthKill(reason) {
			// Stopped by its health checks: failed, whatever its exit
			// status; on-failure and always restart it.
			s.mu.Lock()
			if s.stop == reason {
				s.stop = ""
			}
			errText = s.healthErr
			s.mu.Unlock()
			status, why, failReason, wants = StatusFailed, reason, reason, s.meta.Restart.Wants(1, true) // abnormal, as a watchdog kill is to systemd
		}
		if !wants {
			return &Result{Status: status, Code: code, Command: command, Killed: killed, Error: errText, Reason: failReason, Restarts: restarts}
		}
		delay, limit := bo.next(start, end)
		if limit {
			return &Result{Status: StatusFailed, Code: code, Command: command, Killed: killed, Reason: "start_limit", Restarts: restarts,
				Error: fmt.Sprintf("restart limit reached: %d starts within %d ms", bo.r.Burst, bo.r.WindowMS)}
		}
		s.endAttempt()
		// restarts counts the restarts made: a run stopped while it waits
		// was not restarted, and its code is the last attempt's (a kill
		// in the backoff kills nothing).
		s.appendEvent(map[string]any{"event": "run.backoff", "attempt": attempt + 1, "code": code, "delay_ms": delay.Milliseconds()})
		s.setPhase("backoff", func(p *Progress) {
			p.Restarts = restarts
			p.NextStart = time.Now().Add(delay).UTC().Format(time.RFC3339Nano)
		})
		if !s.sleep(ctx, delay) {
			reason := s.stopReason()
			switch reason {
			case "kill":
				return &Result{Status: StatusKilled, Code: code, Command: command, Reason: "control.kill", Restarts: restarts}
			case "restart", reasonWatch, reasonLiveness, reasonMaxRSS:
				s.mu.Lock()
				s.stop = ""
				s.mu.Unlock()
				if reason == reasonWatch {
					why = reasonWatch
				}
			case "term":
				return &Result{Status: StatusExited, Code: code, Command: command, Reason: "supervisor_terminated", Restarts: restarts}
			default:
				return &Result{Status: StatusCancelled, Code: code, Command: command, Reason: "control.cancel", Restarts: restarts}
			}
		}
		restarts++
		s.appendEvent(s.restartEvent(attempt+1, why))
	}
}

// contextHook appends the recipe's actor_context bundle to each `pi -p`
// leaf's prompt, as a foreground call does (nil when the recipe turned it
// off or the run has no records). Records that do not decode are logged
// and left out: the run goes on without them.
func (s *supervisor) contextHook() func(*template.Step, []string) []string {
	if !s.meta.ActorContext || len(s.meta.ContextRecords) == 0 {
		return nil
	}
	var recs []template.ContextRecord
	if err := json.Unmarshal(s.meta.ContextRecords, &recs); err != nil {
		s.logf("recipe_context_records: %v (pi prompts go without the bundle)", err)
		return nil
	}
	return template.ContextHook(recs)
}

// restartEvent describes a restart — its reason: control.restart for a
// control message, watch (with the files that changed), policy, liveness
// or max_rss — and clears the stop request that asked for it (a request
// that came since stays).
func (s *supervisor) restartEvent(attempt int, reason string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stop == reason {
		s.stop = ""
	}
	ev := map[string]any{"event": "run.restart", "attempt": attempt, "reason": reason}
	switch reason {
	case "restart":
		ev["reason"] = "control.restart"
	case reasonWatch:
		ev["files"] = s.watchFiles
		s.watchFiles = nil
		if s.progress.Health == nil {
			s.progress.Health = &HealthState{}
		}
		s.progress.Health.LastRestart, s.progress.Health.LastRestartAt = reasonWatch, time.Now().UTC()
	}
	return ev
}

// sleep waits d of the run's counted time (it stops while the run is
// suspended) unless a control request arrives (false).
func (s *supervisor) sleep(ctx context.Context, d time.Duration) bool {
	end := s.clock.Now() + d
	for {
		reached, rang := s.clock.Until(ctx, end, s.wake)
		switch {
		case reached:
			return true
		case !rang:
			return false // ctx ended
		case s.stopReason() != "":
			return false
		}
	}
}

// attempt runs the template once.
func (s *supervisor) attempt(ctx context.Context, attempt, restarts int) (code int, command string, killed, abnormal bool, errText string) {
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.mu.Lock()
	s.cancel = cancel
	pending := s.stop
	s.mu.Unlock()
	if pending != "" {
		return 1, "", false, false, "stopped before start"
	}
	values := template.Values{}
	for k, v := range s.meta.Values {
		values[k] = v
	}
	plan, err := template.NewPlan(s.node, values, template.Options{Dir: s.meta.Cwd, MaxParallel: s.meta.Limits.MaxParallel, MaxLeaves: s.meta.Limits.MaxLeaves})
	if err != nil {
		s.logf("plan: %v", err)
		s.appendEvent(map[string]any{"event": "run.failed", "error": err.Error()})
		return 1, "", false, false, err.Error()
	}
	if n, err := requeueClaims(s.dir.Path(InboxFile)); err != nil {
		s.logf("inbox: requeue claims: %v", err)
	} else if n > 0 {
		s.appendEvent(map[string]any{"event": "run.requeue", "count": n, "attempt": attempt})
	}
	s.setPhase("running", func(p *Progress) { p.Attempt, p.Restarts = attempt, restarts })
	stdout, stderr, stopHealth := s.startHealth(actx, attempt)
	defer stopHealth()
	runner := &template.Runner{
		Dir:        s.meta.Cwd,
		KillGrace:  time.Duration(s.meta.Limits.KillGraceMS) * time.Millisecond,
		TempDir:    s.dir.Path("tmp"), // a leaf's captured stdout spills here past 4 MiB (made then)
		Stdout:     stdout,
		Stderr:     stderr,
		OnEvent:    s.onCommand,
		MaxCapture: 64 << 20,
		Clock:      s.clock,
		KeepStderr: true, // the end of a failing command's stderr is its error's
		Hook:       s.contextHook(),
	}
	res := runner.Run(actx, plan, nil)
	defer res.Stdout.Close()
	command = joinCommands(res.Commands)
	if res.Failure != nil {
		errText = failureText(res)
	}
	s.mu.Lock()
	s.progress.Completed++
	for _, f := range res.NonCritical {
		s.progress.Failures = append(s.progress.Failures, map[string]any{"code": f.Code, "command": f.Command, "killed": f.Killed})
	}
	s.mu.Unlock()
	// Abnormal: the failing command died of a signal, or a timeout stopped
	// it (killed, 124) — not a program that exited 128+n or 124 itself.
	abnormal = res.Signaled || res.Killed && res.Code == 124
	return res.Code, command, res.Killed, abnormal, errText
}

func joinCommands(cmds []string) string {
	out := ""
	for i, c := range cmds {
		if i > 0 {
			out += " && "
		}
		out += c
	}
	return out
}

// onCommand records a leaf starting or finishing: events, progress (with
// the live leaf groups, for cleanup after a crash) and, when one is done,
// a command.done outbox record.
func (s *supervisor) onCommand(e template.Event) {
	at := time.Now() // when the runner saw it: the leaf's start time is read below
	var start uint64
	s.mu.Lock()
	switch e.Type {
	case "command.start":
		start = StartTime(e.Pid)
		s.leaves[e.Pid] = Leaf{Pid: e.Pid, Start: start, Command: e.Command, Path: e.Path}
		if s.clock.Paused() {
			syscall.Kill(-e.Pid, syscall.SIGSTOP) // started as the run was being suspended
		}
	case "command.done":
		delete(s.leaves, e.Pid)
	}
	// Events from parallel leaves can arrive out of order: count our own
	// live leaves rather than trusting the event's number.
	s.progress.Active = len(s.leaves)
	s.mu.Unlock()
	rec := map[string]any{"event": e.Type, "activeSubagents": e.Active, "command": e.Command, "pid": e.Pid, "ts": at.UTC().Format(time.RFC3339Nano)}
	if e.Type == "command.done" {
		rec["code"], rec["killed"] = e.Code, e.Killed
	} else {
		rec["start"] = start // with the pid, what identifies the leaf later
	}
	s.appendEvent(rec)
	if e.Type == "command.start" {
		s.sayReady() // the leaf is running: the kernel may answer now
	}
	select {
	case s.dirty <- struct{}{}:
	default: // a write is already pending; it will include this change
	}
	if e.Type == "command.done" {
		s.outboxDone(e)
	}
}

func (s *supervisor) outboxDone(e template.Event) {
	delivery, level := "log", "info"
	if e.Code != 0 {
		delivery, level = "followup", "error"
	} else if e.Active > 0 {
		delivery = "followup"
	}
	if s.stopReason() != "" {
		// Stopped on purpose (kill, cancel, restart): nothing to report.
		delivery = "log"
	}
	data := map[string]any{
		"activeSubagents": e.Active, "code": e.Code, "command": e.Command, "killed": e.Killed,
		"run_files": []string{s.dir.Path(StdoutLog), s.dir.Path(StderrLog), s.dir.Path(ResultFile), s.dir.Path(EventsFile), s.dir.Path(OutboxFile)},
	}
	if len(s.meta.Artifacts) > 0 {
		data["artifacts"] = s.meta.Artifacts
	}
	s.appendOutbox(map[string]any{
		"body": data, "data": data, "delivery": delivery, "event": "command.done", "from": s.meta.Address,
		"level": level, "summary": fmt.Sprintf("Command %s completed with code %d", shortCommand(e.Command), e.Code),
		"to": "coordinator", "type": "command.done",
	})
}

// setPhase records a phase change. The end of the run is written at once;
// other phases join the next coalesced write (the first leaf's start
// follows within microseconds).
func (s *supervisor) setPhase(phase string, edit func(*Progress)) {
	s.mu.Lock()
	s.progress.Phase = phase
	if edit != nil {
		edit(&s.progress)
	}
	s.mu.Unlock()
	if Terminal(phase) || phase == StatusBackoff {
		s.flushProgress()
		return
	}
	select {
	case s.dirty <- struct{}{}:
	default:
	}
}

// flushProgress writes the current progress. Writes are serialised and
// each takes its snapshot under the write lock, so an older snapshot can
// never land after a newer one.
func (s *supervisor) flushProgress() {
	s.pmu.Lock()
	defer s.pmu.Unlock()
	s.mu.Lock()
	p := s.progress
	p.UpdatedAt = time.Now().UTC()
	p.Leaves = make([]Leaf, 0, len(s.leaves))
	for _, l := range s.leaves {
		p.Leaves = append(p.Leaves, l)
	}
	p.Failures = append([]any{}, s.progress.Failures...)
	s.mu.Unlock()
	// A snapshot, rewritten as the run goes: after a crash of the machine
	// nothing it describes is left, so it is not fsynced.
	if err := s.dir.WriteSnapshot(ProgressFile, p); err != nil {
		s.logf("write progress: %v", err)
	}
}

// finish records the end of the run and makes sure nothing it started is
// left: TERM, a short grace, then KILL for every remaining descendant.
func (s *supervisor) finish(r *Result) {
	s.killTreeGraceful(time.Duration(s.meta.Limits.KillGraceMS) * time.Millisecond)
	r.CompletedAt = time.Now().UTC()
	switch r.Status {
	case StatusKilled, StatusCancelled:
		ev := "run.kill"
		sig := "SIGKILL"
		if r.Status == StatusCancelled {
			ev, sig = "run.cancel", "SIGTERM"
		}
		// Stopped on purpose: result.json's reason records it (and keeps
		// follow-ups away); no separate terminal-handled file to write.
		s.appendEvent(map[string]any{"event": ev, "pid": os.Getpid(), "signal": sig, "signalTarget": "processGroup"})
	case StatusExited:
		s.appendEvent(map[string]any{"event": "run.exited", "reason": r.Reason, "code": r.Code})
	case StatusDone:
		s.appendEvent(map[string]any{"event": "run.done", "code": r.Code})
	default:
		s.appendEvent(map[string]any{"event": "run.failed", "code": r.Code, "error": r.Error, "reason": r.Reason})
	}
	// progress first: once result.json exists the run reads as over, and
	// its progress must already say so.
	s.setPhase(r.Status, func(p *Progress) { p.Active = 0; p.NextStart = "" })
	s.writeResult(r.Identify(s.meta))
}

// resultRetry bounds how long a supervisor keeps trying to write
// result.json (a full disk): the run's end is known only from it — a
// supervisor that gave up reads as lost (status exited, supervisor_lost),
// for good.
var resultRetry = 10 * time.Minute

// writeResult writes result.json, trying again (backing off to 5 s) while
// it fails, up to resultRetry.
func (s *supervisor) writeResult(r any) {
	deadline, wait := time.Now().Add(resultRetry), 100*time.Millisecond
	for {
		err := s.dir.WriteJSON(ResultFile, r)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			s.logf("write result: %v (gave up after %s)", err, resultRetry)
			return
		}
		if wait == 100*time.Millisecond {
			s.logf("write result: %v (trying again until %s)", err, deadline.Format(time.RFC3339))
		}
		time.Sleep(wait)
		wait = min(2*wait, 5*time.Second)
	}
}

// killTree signals every process the run started: each live leaf's
// process group, then every descendant — we are a child subreaper, so an
// orphan of the run is still our descendant. (No /proc-wide scan: with
// hundreds of runs each scanning every process, a batch kill would cost
// the square of the run count.)
func (s *supervisor) killTree(sig syscall.Signal) []int {
	s.mu.Lock()
	groups := make([]int, 0, len(s.leaves))
	for pid := range s.leaves {
		groups = append(groups, pid)
	}
	s.mu.Unlock()
	for _, g := range groups {
		syscall.Kill(-g, sig)
	}
	pids := s.others()
	KillAll(pids, sig)
	return append(groups, pids...)
}

// termStrays sends SIGTERM, once, to the run's processes outside its
// leaves' process groups (a setsid child, a daemon it started) when the
// run is stopped for good: the runner signals the leaf groups itself, and
// the strays' grace then runs alongside the leaves' instead of after it
// (finish: killTreeGraceful).
func (s *supervisor) termStrays() {
	s.mu.Lock()
	if !s.stopAt.IsZero() {
		s.mu.Unlock()
		return
	}
	s.stopAt = time.Now()
	groups := make(map[int]bool, len(s.leaves))
	for pid := range s.leaves {
		groups[pid] = true
	}
	s.mu.Unlock()
	var strays []int
	for _, pid := range s.others() {
		if st, err := Stat(pid); err == nil && !groups[st.Pgrp] {
			strays = append(strays, pid)
		}
	}
	KillAll(strays, syscall.SIGTERM)
}

// killTreeGraceful ends what the run left: SIGTERM, the grace, SIGKILL.
// After a stop for good the grace counts from its SIGTERM (termStrays).
func (s *supervisor) killTreeGraceful(grace time.Duration) {
	if len(s.killTree(syscall.SIGTERM)) == 0 {
		return
	}
	deadline := time.Now().Add(grace)
	s.mu.Lock()
	if at := s.stopAt; !at.IsZero() && at.Add(grace).Before(deadline) {
		deadline = at.Add(grace)
	}
	s.mu.Unlock()
	for time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		s.reapOnce()
		if len(s.others()) == 0 {
			return
		}
	}
	s.killTree(syscall.SIGKILL)
	for i := 0; i < 100 && len(s.others()) > 0; i++ {
		time.Sleep(10 * time.Millisecond)
		s.reapOnce()
	}
}

// endAttempt stops what an attempt that is to be restarted left outside
// its leaf groups (a setsid child, a daemon it started), as finish does at
// the end of the run: SIGTERM, the grace, SIGKILL — so attempts do not
// pile up. The kernel, if a process of the run started it, is not the
// run's (others).
func (s *supervisor) endAttempt() {
	s.killTreeGraceful(time.Duration(s.meta.Limits.KillGraceMS) * time.Millisecond)
}

// others lists the live descendants of the supervisor: the run's tree
// (a kernel one of its processes started is not the run's).
func (s *supervisor) others() []int {
	return DescendantsBut(os.Getpid(), kernelPid())
}

// watchInbox applies control messages when the kernel rings (SIGUSR1,
// sent after it appended a message to inbox.jsonl) and, as a fallback, when
// a one-second check sees the inbox grow. No inotify: a supervisor per run
// would exhaust the per-user inotify instances long before 200 runs.
func (s *supervisor) watchInbox() (func(), error) {
	done := make(chan struct{})
	bell := make(chan os.Signal, 1)
	signal.Notify(bell, syscall.SIGUSR1)
	tick := time.NewTicker(time.Second)
	var lastSize int64 = -1
	var lastMod time.Time
	go func() {
		for {
			select {
			case <-done:
				return
			case <-bell:
				s.control()
				s.checkSession(false)
			case <-tick.C:
				s.checkSession(false)
				st, err := os.Stat(s.dir.Path(InboxFile))
				if err != nil || (st.Size() == lastSize && st.ModTime().Equal(lastMod)) {
					continue
				}
				lastSize, lastMod = st.Size(), st.ModTime()
				s.control()
			}
		}
	}()
	return func() {
		close(done)
		tick.Stop()
		signal.Stop(bell)
	}, nil
}

// reap collects orphaned children (we are a subreaper) that are not leaf
// group leaders, whose status belongs to the template runner.
func (s *supervisor) reap() {
	ch := make(chan os.Signal, 8)
	signal.Notify(ch, syscall.SIGCHLD)
	for range ch {
		s.reapOnce()
	}
}

func (s *supervisor) reapOnce() {
	for _, pid := range Children(os.Getpid()) {
		st, err := Stat(pid)
		if err != nil || st.State != "Z" {
			continue
		}
		if st.Pgrp == pid && st.Sid == s.sid {
			continue // a leaf: the runner waits for it
		}
		var ws syscall.WaitStatus
		syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
	}
}

// Bounds of a failed attempt's error (result.json's error, the owner's
// follow-up): the failing command cut to errCommandChars (a sub-agent's
// is its whole prompt), then the end of its stderr — where the cause
// usually is — at most errStderrLines lines, errStderrBytes.
const (
	errCommandChars = 300
	errStderrLines  = 20
	errStderrBytes  = 2000
)

// failureText is a failed attempt's error: the exit status, the failing
// command (cut), where in the template, and the end of its stderr.
func failureText(res *template.Result) string {
	f := res.Failure
	cmd := f.Command
	if r := []rune(cmd); len(r) > errCommandChars {
		cmd = string(r[:errCommandChars-1]) + "…"
	}
	text := fmt.Sprintf("exit %d from %s (at %s)", f.Code, cmd, f.Path)
	tail := f.Stderr
	if res.Stderr != nil {
		tail = strings.Trim(template.TailOf(res.Stderr, errStderrLines, errStderrBytes).Text, "\r\n")
		res.Stderr.Close()
	}
	if tail = strings.ToValidUTF8(tail, "\uFFFD"); strings.TrimSpace(tail) != "" {
		text += ": " + tail
	}
	return text
}
