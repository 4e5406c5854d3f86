package runs

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pi-actors/pi-actors/verbs/wire"
)

// Spec is everything needed to start a run.
type Spec struct {
	ID             string
	StateDir       string // "" = <runs>/<id>
	Cwd            string
	Owner          string // the launching session
	LaunchSource   string // spawn or tool
	Recipe         string
	RecipeFile     string
	Tool           string
	Template       any
	Values         map[string]any
	Artifacts      map[string]any
	Mailbox        any
	Restart        *Restart
	Health         *Health // probes, max_rss, watch (nil: none)
	RetireWhen     string
	Depth          int
	Limits         Limits
	ContextRecords []byte
	ActorContext   bool
	DraftRecipe    string
	Env            []string // the caller's environment; PI_ACTORS_* are added
	// Supervisor is the argv that starts `pi-actors supervise`; the state
	// directory is appended.
	Supervisor []string

	// Parent is the run whose leaf spawned this one ($PI_ACTORS_RUN_ID of
	// the caller), "" for a run started from outside any run.
	Parent string
	// Workflow and WorkflowNode go to run.json as given (see Meta).
	Workflow     any
	WorkflowNode *NodeRef
	// Cause is what made the spawn happen (the trace).
	Cause *wire.Cause
}

// starting holds the state dirs being started.
var starting sync.Map

// ReadyTimeout bounds how long Start waits for a supervisor to be set up.
const ReadyTimeout = 10 * time.Second

// Start creates the run's state directory, writes run.json and starts its
// supervisor, returning once the supervisor reports it is set up. It
// refuses (ErrBusy) a state directory whose run is live or being started.
// On any error nothing is left running.
func Start(agentDir string, spec Spec) (*Meta, *os.Process, error) {
	if err := ValidID(spec.ID); err != nil {
		return nil, nil, err
	}
	dir := StateDirFor(agentDir, spec.ID)
	if spec.StateDir != "" {
		abs, err := filepath.Abs(spec.StateDir)
		if err != nil {
			return nil, nil, fmt.Errorf("state_dir: %w", err)
		}
		dir = Dir(abs)
	}
	_, statErr := os.Stat(string(dir))
	fresh := errors.Is(statErr, os.ErrNotExist)
	if err := os.MkdirAll(string(dir), 0o700); err != nil {
		return nil, nil, fmt.Errorf("create state dir: %w", err)
	}
	// The kernel (one per agent root) is the only starter: an in-process
	// guard refuses a concurrent start of the same state dir.
	if _, busy := starting.LoadOrStore(string(dir), true); busy {
		return nil, nil, fmt.Errorf("%w: run state is already being started: %s; retry after the current start finishes", ErrBusy, dir)
	}
	defer starting.Delete(string(dir))
	if old, err := dir.Meta(); err == nil && dir.Result() == nil && Alive(old.Pid, old.PidStart) {
		return nil, nil, fmt.Errorf("%w: run:%s is already running (pid %d, %s); stop it (message type=control.kill) before reusing its id or state_dir", ErrBusy, old.Run, old.Pid, dir)
	}
	if !fresh {
		// A restart of a terminal run id: the previous run's files go
		// (rooms/, branches/ and communication.json stay).
		for _, f := range []string{RunFile, EventsFile, InboxFile, OutboxFile, ProgressFile, ResultFile, StderrLog, StdoutLog, HandledFile, NotifiedFile, WakeFile, TombstoneFile} {
			if err := os.Remove(dir.Path(f)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, nil, fmt.Errorf("clear %s: %w", dir.Path(f), err)
			}
		}
		os.RemoveAll(dir.Path("tmp"))
	}
	meta := &Meta{
		Run: spec.ID, Address: "run:" + spec.ID, StateDir: string(dir), Cwd: spec.Cwd, CreatedAt: time.Now().UTC(),
		LaunchSource: spec.LaunchSource, OwnerID: spec.Owner, Recipe: spec.Recipe, RecipeFile: spec.RecipeFile, Tool: spec.Tool,
		Template: spec.Template, Values: spec.Values, Artifacts: spec.Artifacts, Mailbox: spec.Mailbox, Restart: spec.Restart,
		RetireWhen: spec.RetireWhen, Depth: spec.Depth, ContextRecords: spec.ContextRecords, ActorContext: spec.ActorContext,
		Limits: spec.Limits, DraftRecipe: spec.DraftRecipe, Parent: spec.Parent, Health: spec.Health, Cause: spec.Cause,
		Workflow: spec.Workflow, WorkflowNode: spec.WorkflowNode,
	}
	if meta.Values == nil {
		meta.Values = map[string]any{}
	}
	proc, err := launch(dir, meta, spec)
	if err != nil {
		meta.Pid = 0
		if !recordFailedStart(dir, meta, err) && fresh {
			// No record could be written (a full disk): a state dir
			// without its run.json would be a run nobody can inspect.
			os.RemoveAll(string(dir))
		}
		return nil, nil, err
	}
	return meta, proc, nil
}

// recordFailedStart leaves the record of a start that failed for inspect
// (run.json, a run.failed event, result.json start_failed); false if it
// could not be written whole.
func recordFailedStart(dir Dir, meta *Meta, cause error) bool {
	if !dir.Exists(RunFile) {
		if dir.WriteJSON(RunFile, meta) != nil {
			return false
		}
	}
	appendEvent(dir, map[string]any{"event": "run.failed", "error": cause.Error()})
	return dir.WriteJSON(ResultFile, &Result{Status: StatusFailed, Code: 1, Error: cause.Error(), Reason: "start_failed", CompletedAt: time.Now().UTC()}) == nil
}

// launch starts the supervisor in its own session. run.json travels on
// its stdin: the supervisor adds its own pid and start time and writes the
// file itself (one atomic write per start). fd 3 is the readiness pipe:
// "ok" once the supervisor is set up.
func launch(dir Dir, meta *Meta, spec Spec) (*os.Process, error) {
	if len(spec.Supervisor) == 0 {
		return nil, errors.New("no supervisor command configured")
	}
	metaJSON, err := json.Marshal(meta)
	if err != nil {
		return nil, fmt.Errorf("encode run.json: %w", err)
	}
	rd, wr, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("readiness pipe: %w", err)
	}
	defer rd.Close()
	in, inW, err := os.Pipe()
	if err != nil {
		wr.Close()
		return nil, fmt.Errorf("run.json pipe: %w", err)
	}
	defer in.Close()
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		wr.Close()
		inW.Close()
		return nil, err
	}
	defer devnull.Close()
	// The supervisor's own stderr (a panic, say) lands in the run's
	// stderr.log, where its log lines go too.
	logf, err := os.OpenFile(dir.Path(StderrLog), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		wr.Close()
		inW.Close()
		return nil, fmt.Errorf("supervisor log: %w", err)
	}
	defer logf.Close()
	env := append(withoutPIEnv(spec.Env),
		"PI_ACTORS_RUN_ID="+meta.Run,
		"PI_ACTORS_ADDRESS="+meta.Address,
		"PI_ACTORS_STATE_DIR="+meta.StateDir,
		"PI_ACTORS_SESSION="+meta.OwnerID,
		"PI_ACTORS_DEPTH="+strconv.Itoa(meta.Depth),
	)
	argv := append(append([]string{}, spec.Supervisor...), meta.StateDir)
	proc, err := os.StartProcess(argv[0], argv, &os.ProcAttr{
		Dir:   meta.Cwd,
		Env:   env,
		Files: []*os.File{in, devnull, logf, wr},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	wr.Close()
	if err != nil {
		inW.Close()
		return nil, fmt.Errorf("start supervisor: %w", err)
	}
	inW.Write(metaJSON)
	inW.Close()
	meta.Pid = proc.Pid
	meta.PidStart = StartTime(proc.Pid)
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(rd).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	fail := func(msg string) (*os.Process, error) {
		syscall.Kill(-proc.Pid, syscall.SIGKILL)
		proc.Wait()
		return nil, fmt.Errorf("start supervisor: %s", msg)
	}
	select {
	case l := <-line:
		if l == "ok" {
			return proc, nil
		}
		if l == "" {
			l = "supervisor exited before it was ready; see " + dir.Path(StderrLog)
		}
		fail("")
		return nil, fmt.Errorf("start supervisor: %w", parseReadyError(l))
	case <-time.After(ReadyTimeout):
		return fail(fmt.Sprintf("not ready after %s", ReadyTimeout))
	}
}

// readyError is the readiness line of a supervisor that could not set
// up: "error [errno=N ]<message>", the errno (a full disk, no file
// descriptor left) kept for the kernel to classify.
func readyError(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return fmt.Sprintf("error errno=%d %v", int(errno), err)
	}
	return fmt.Sprintf("error %v", err)
}

// parseReadyError is the error a readiness line other than "ok" reports:
// its message, matching the errno it carries (errors.Is(err,
// syscall.ENOSPC)).
func parseReadyError(line string) error {
	msg := strings.TrimPrefix(line, "error ")
	if rest, ok := strings.CutPrefix(msg, "errno="); ok {
		if num, text, ok := strings.Cut(rest, " "); ok {
			if n, err := strconv.Atoi(num); err == nil && n > 0 {
				return &errnoError{syscall.Errno(n), text}
			}
		}
	}
	return errors.New(msg)
}

// errnoError is a supervisor's error as it reported it, with its errno.
type errnoError struct {
	errno syscall.Errno
	text  string
}

func (e *errnoError) Error() string { return e.text }
func (e *errnoError) Unwrap() error { return e.errno }

// withoutPIEnv drops inherited PI_ACTORS_* run identity so a child run
// gets its own.
func withoutPIEnv(env []string) []string {
	out := make([]string, 0, len(env)+7)
	for _, e := range env {
		switch {
		case strings.HasPrefix(e, "PI_ACTORS_RUN_ID="), strings.HasPrefix(e, "PI_ACTORS_ADDRESS="),
			strings.HasPrefix(e, "PI_ACTORS_STATE_DIR="), strings.HasPrefix(e, "PI_ACTORS_SESSION="),
			strings.HasPrefix(e, "PI_ACTORS_DEPTH="), strings.HasPrefix(e, leafGOMAXPROCS+"="):
			continue
		case strings.HasPrefix(e, "GOMAXPROCS="):
			out = append(out, leafGOMAXPROCS+"="+strings.TrimPrefix(e, "GOMAXPROCS="))
			continue
		}
		out = append(out, e)
	}
	// The supervisor runs on one P from its first instruction: fewer
	// threads and about a millisecond less CPU per run started. It gives
	// its leaves the caller's setting back (RestoreLeafEnv).
	return append(out, "GOMAXPROCS=1")
}

// leafGOMAXPROCS carries the caller's GOMAXPROCS (if it had one) past the
// supervisor's own GOMAXPROCS=1.
const leafGOMAXPROCS = "PI_ACTORS_LEAF_GOMAXPROCS"

// RestoreLeafEnv undoes, in the supervisor's own environment (which every
// leaf inherits), the GOMAXPROCS=1 the kernel started it with.
func RestoreLeafEnv() {
	if v, ok := os.LookupEnv(leafGOMAXPROCS); ok {
		os.Setenv("GOMAXPROCS", v)
		os.Unsetenv(leafGOMAXPROCS)
		return
	}
	os.Unsetenv("GOMAXPROCS")
}
