package runs

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pi-actors/pi-actors/internal/fsutil"
	"github.com/pi-actors/pi-actors/sessions"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// Spec is everything needed to start a run.
type Spec struct {
	ID             string
	StateDir       string // "" = <runs>/<id>
	Cwd            string
	Owner          string // the launching session
	Home           string // the node of the launching session when it is another member ("" = this one)
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
	// Supervisor is the argv that starts the run's supervisor
	// (`pi-actors-supervise` or `pi-actors supervise`); the state
	// directory is appended.
	Supervisor []string
	// Pool, when set, lends a supervisor already started (Pool).
	Pool *Pool
	// Dirs, when set, collects the parent of a new state directory for
	// the caller to fsync once for a whole batch (fsutil.DirSyncs);
	// without it Start fsyncs the parent itself.
	Dirs *fsutil.DirSyncs
	// Seed, when set, writes more files into a new state directory
	// before it is published (the run's default room): they appear with
	// run.json, in one rename. It is not called when the run reuses a
	// state directory (a restart of a terminal run id).
	Seed func(stage string) error
	// Published, when set, is called with the run's meta (its supervisor
	// started) before run.json is written: whatever records the run (the
	// kernel's index) has it before it can start, so a kernel that dies
	// any time after leaves no started run unrecorded (an entry whose
	// run.json never came is skipped by the listings).
	Published func(*Meta)

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

// Start creates the run's state directory with its run.json and starts
// its supervisor, returning once the supervisor reports it is set up. It
// refuses (ErrBusy) a state directory whose run is live or being started.
// On any error nothing is left running.
//
// A new state directory appears whole: it is made under a hidden name
// beside its final one (<parent>/.<name>.new-<n>, see CleanStaging),
// holding the supervisor's stderr.log and the run.json the kernel writes
// and fsyncs once it knows the supervisor's pid, and renamed into place
// before the supervisor gets its run — so however the kernel dies, no
// state directory is left without its run.json. The rename is made
// durable by an fsync of the parent directory: at once, or once for a
// whole batch when spec.Dirs collects it (a group commit).
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
		// A symlink's target is the state dir: archive and prune move
		// and delete the run's files, not a link to them.
		dir = Dir(realPath(abs))
	}
	_, statErr := os.Stat(string(dir))
	fresh := errors.Is(statErr, os.ErrNotExist)
	if statErr != nil && !fresh {
		return nil, nil, fmt.Errorf("%w: %w", ErrStateDir, statErr)
	}
	if fresh {
		if err := os.MkdirAll(filepath.Dir(string(dir)), 0o700); err != nil {
			return nil, nil, fmt.Errorf("%w: %w", ErrStateDir, err)
		}
	}
	// The kernel (one per agent root) is the only starter: an in-process
	// guard refuses a concurrent start of the same state dir.
	if _, busy := starting.LoadOrStore(string(dir), true); busy {
		return nil, nil, fmt.Errorf("%w: run state is already being started: %s; retry after the current start finishes", ErrBusy, dir)
	}
	defer starting.Delete(string(dir))
	// Whose the directory is, under the guard: a start of another id into
	// the same empty directory that finished meanwhile made it that run's.
	if spec.StateDir != "" {
		if err := CheckStateDirUse(agentDir, spec.ID, string(dir)); err != nil {
			return nil, nil, err
		}
		if !fresh {
			// A directory the caller made (0755 by their umask) holds the
			// run's messages and output: its names are no one else's to list.
			if err := os.Chmod(string(dir), 0o700); err != nil {
				return nil, nil, fmt.Errorf("%w: %w", ErrStateDir, err)
			}
		}
	}
	if old, err := dir.Meta(); err == nil && dir.Result() == nil && Alive(old.Pid, old.PidStart) {
		return nil, nil, fmt.Errorf("%w: run:%s is already running (pid %d, %s); stop it (message type=control.kill) before reusing its id or state_dir", ErrBusy, old.Run, old.Pid, dir)
	}
	meta := &Meta{
		Run: spec.ID, Address: "run:" + spec.ID, StateDir: string(dir), Cwd: spec.Cwd, CreatedAt: time.Now().UTC(),
		LaunchSource: spec.LaunchSource, OwnerID: spec.Owner, HomeNode: spec.Home, Recipe: spec.Recipe, RecipeFile: spec.RecipeFile, Tool: spec.Tool,
		Template: spec.Template, Values: spec.Values, Artifacts: spec.Artifacts, Mailbox: spec.Mailbox, Restart: spec.Restart,
		RetireWhen: spec.RetireWhen, Depth: spec.Depth, ContextRecords: spec.ContextRecords, ActorContext: spec.ActorContext,
		Limits: spec.Limits, DraftRecipe: spec.DraftRecipe, Parent: spec.Parent, Health: spec.Health, Cause: spec.Cause,
		Workflow: spec.Workflow, WorkflowNode: spec.WorkflowNode,
	}
	if meta.Values == nil {
		meta.Values = map[string]any{}
	}
	if !fresh {
		// A restart of a terminal run id. run.json becomes the new run's
		// first (no supervisor yet), so the previous run's actor, still
		// finishing, sees another instance and leaves the directory
		// alone — and the directory is never without a run.json. Then the
		// previous run's other files go (rooms/, branches/ and
		// communication.json stay) — but for an archived previous run:
		// its room and branches went to the archive with it, and whatever
		// is beside its tombstone was never its (a message written there
		// before archived runs refused messages), so the new run starts
		// with none of it.
		var tomb Tombstone
		archived := dir.ReadJSON(TombstoneFile, &tomb) == nil && tomb.Archived
		if err := writeRecord(dir, meta, false, nil); err != nil {
			return nil, nil, fmt.Errorf("%w: %w", ErrStateDir, err)
		}
		if archived {
			for _, f := range []string{"rooms", "branches", "communication.json"} {
				if err := os.RemoveAll(dir.Path(f)); err != nil {
					return nil, nil, fmt.Errorf("clear %s: %w", dir.Path(f), err)
				}
			}
		}
		for _, f := range []string{EventsFile, InboxFile, OutboxFile, ProgressFile, ResultFile, HandledFile, NotifiedFile, WakeFile, TombstoneFile} {
			if err := os.Remove(dir.Path(f)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, nil, fmt.Errorf("clear %s: %w", dir.Path(f), err)
			}
		}
		// The logs, their rotated files and the marks of each: logs would
		// show the previous run's output before the new run's.
		for _, log := range []string{StdoutLog, StderrLog} {
			for _, f := range append(LogFiles(dir.Path(log)), dir.Path(log)) {
				for _, p := range []string{f, f + MarksSuffix} {
					if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
						return nil, nil, fmt.Errorf("clear %s: %w", p, err)
					}
				}
			}
		}
		os.RemoveAll(dir.Path("tmp"))
	}
	proc, written, err := launch(dir, meta, spec, fresh)
	if err != nil {
		// Leave a record of the failed start for inspect.
		if !written {
			// The caller drops the draft recipe of a run that never ran:
			// the record does not name it.
			meta.Pid, meta.PidStart, meta.DraftRecipe = 0, 0, ""
			if werr := writeRecord(dir, meta, fresh, spec.Dirs); werr != nil {
				return nil, nil, fmt.Errorf("%w (and its record: %v)", err, werr)
			}
		}
		appendEvent(dir, map[string]any{"event": "run.failed", "error": err.Error()})
		dir.WriteJSON(ResultFile, (&Result{Status: StatusFailed, Code: 1, Error: err.Error(), Reason: "start_failed", CompletedAt: time.Now().UTC()}).Identify(meta))
		return nil, nil, err
	}
	return meta, proc, nil
}

// launch starts the supervisor in its own session — or takes one that is
// waiting (spec.Pool) — writes run.json with the supervisor's pid and
// start time (for a fresh state directory, into the staging directory it
// then publishes), and hands the run to the supervisor on its stdin; fd 3
// is the readiness pipe: "ok" once the supervisor is set up. written
// reports whether run.json was written.
func launch(dir Dir, meta *Meta, spec Spec, fresh bool) (proc *os.Process, written bool, err error) {
	if len(spec.Supervisor) == 0 {
		return nil, false, errors.New("no supervisor command configured")
	}
	work := string(dir)
	// seeded waits for spec.Seed, which fills the staging directory while
	// the supervisor is taken and run.json is encoded: it is done before
	// the directory is published or removed.
	seeded := func() error { return nil }
	if fresh {
		if work, err = os.MkdirTemp(filepath.Dir(string(dir)), "."+filepath.Base(string(dir))+stagingInfix); err != nil {
			return nil, false, fmt.Errorf("%w: %w", ErrStateDir, err)
		}
		defer func() {
			seeded()
			if !written {
				os.RemoveAll(work)
			}
		}()
		if spec.Seed != nil {
			done := make(chan error, 1)
			go func() { done <- spec.Seed(work) }()
			seeded = sync.OnceValue(func() error { return <-done })
		}
	}
	env := append(withoutPIEnv(spec.Env),
		"PI_ACTORS_RUN_ID="+meta.Run,
		"PI_ACTORS_ADDRESS="+meta.Address,
		"PI_ACTORS_STATE_DIR="+meta.StateDir,
		"PI_ACTORS_SESSION="+meta.OwnerID,
		"PI_ACTORS_DEPTH="+strconv.Itoa(meta.Depth),
	)
	sup := spec.Pool.take()
	// The replacement starts once the supervisor said it is ready (its
	// leaf started), or failed.
	defer spec.Pool.fill()
	if sup == nil {
		if sup, err = startSupervisor(work, meta, spec, env); err != nil {
			return nil, false, err
		}
	}
	defer sup.ready.Close()
	defer sup.in.Close()
	proc = sup.proc
	// fail keeps the cause's errno (a full disk: 73; no descriptor: 74).
	stop := func() {
		syscall.Kill(-proc.Pid, syscall.SIGKILL)
		proc.Wait()
	}
	fail := func(cause error) (*os.Process, bool, error) {
		stop()
		return nil, written, fmt.Errorf("start supervisor: %w", cause)
	}
	// The supervisor waits for its run on stdin: run.json is on disk, with
	// its pid, before it gets it.
	meta.Pid, meta.PidStart = proc.Pid, sup.start
	data, err := fsutil.MarshalIndent(meta)
	if err == nil && fresh {
		// Written and fsynced while the room is seeded beside it; not
		// visible until the directory is renamed below.
		err = stageRecord(work, data)
	}
	if serr := seeded(); serr != nil {
		stop()
		return nil, false, serr
	}
	// The new directory's entry in its parent is made durable once the
	// supervisor has its run (off the way to its leaf), or with the rest
	// of the batch.
	dirs, own := spec.Dirs, spec.Dirs == nil
	if own {
		dirs = &fsutil.DirSyncs{}
	}
	if err == nil {
		if spec.Published != nil {
			// Before run.json: a supervisor whose kernel dies before the
			// handover runs what run.json (naming it) says.
			spec.Published(meta)
		}
		if fresh {
			err = commitStage(work, dir, dirs)
		} else {
			err = fsutil.WriteFile(dir.Path(RunFile), data, 0o600)
		}
	}
	if err != nil {
		return fail(fmt.Errorf("write run.json: %w", err))
	}
	written = true
	hand := data
	if sup.waiting {
		// A waiting supervisor takes on the run's environment too.
		hand = encodeHandover(env, data)
	}
	if _, err := sup.in.Write(hand); err != nil {
		return fail(fmt.Errorf("hand over the run: %w", err))
	}
	sup.in.Close()
	if own {
		if err := dirs.Sync(); err != nil {
			return fail(fmt.Errorf("sync state dir: %w", err))
		}
	}
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(sup.ready).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	select {
	case l := <-line:
		if l == "ok" {
			return proc, true, nil
		}
		if l == "" {
			l = "supervisor exited before it was ready; see " + dir.Path(StderrLog)
		}
		return fail(parseReadyError(l))
	case <-time.After(ReadyTimeout):
		return fail(fmt.Errorf("not ready after %s", ReadyTimeout))
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

// startSupervisor starts the supervisor of the run meta describes in its
// own session, its stderr the run's stderr.log in work (the state
// directory, or its staging directory).
func startSupervisor(work string, meta *Meta, spec Spec, env []string) (*waiting, error) {
	rd, wr, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("readiness pipe: %w", err)
	}
	in, inW, err := os.Pipe()
	if err != nil {
		rd.Close()
		wr.Close()
		return nil, fmt.Errorf("run.json pipe: %w", err)
	}
	defer in.Close()
	defer wr.Close()
	closeAll := func() { rd.Close(); inW.Close() }
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		closeAll()
		return nil, err
	}
	defer devnull.Close()
	// The supervisor's own stderr (a panic, say) lands in the run's
	// stderr.log, where its log lines go too.
	logf, err := os.OpenFile(filepath.Join(work, StderrLog), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("supervisor log: %w", err)
	}
	defer logf.Close()
	argv := append(append([]string{}, spec.Supervisor...), meta.StateDir)
	proc, err := os.StartProcess(argv[0], argv, &os.ProcAttr{
		Dir:   meta.Cwd,
		Env:   env,
		Files: []*os.File{in, devnull, logf, wr},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("start supervisor: %w", err)
	}
	return &waiting{proc: proc, start: StartTime(proc.Pid), in: inW, ready: rd}, nil
}

// CheckStateDir checks, before anything starts, that dir can be run id's
// state directory (CheckStateDirUse) and that it can be made where it was
// asked for: it is a directory already, or a directory can be created in
// its nearest existing ancestor (a trial directory is made there and
// removed). The error wraps ErrStateDir.
func CheckStateDir(agentDir, id, dir string) error {
	if dir == "" {
		return nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrStateDir, err)
	}
	if err := CheckStateDirUse(agentDir, id, abs); err != nil {
		return err
	}
	if st, err := os.Stat(abs); err == nil {
		if !st.IsDir() {
			return fmt.Errorf("%w: %s is not a directory", ErrStateDir, abs)
		}
		return nil
	}
	parent := filepath.Dir(abs)
	for {
		st, err := os.Stat(parent)
		if err == nil {
			if !st.IsDir() {
				return fmt.Errorf("%w: %s is not a directory", ErrStateDir, parent)
			}
			break
		}
		if !errors.Is(err, os.ErrNotExist) || filepath.Dir(parent) == parent {
			return fmt.Errorf("%w: state_dir=%s: %w", ErrStateDir, dir, err)
		}
		parent = filepath.Dir(parent)
	}
	trial, err := os.MkdirTemp(parent, ".pi-actors-check-")
	if err != nil {
		return fmt.Errorf("%w: state_dir=%s cannot be made in %s: %w", ErrStateDir, dir, parent, err)
	}
	return os.Remove(trial)
}

// CheckStateDirUse refuses a state_dir that is not run id's to use: a run
// clears its state directory's files when it starts again, and rm moves
// (or --prune deletes) the whole directory. Accepted: a missing or empty
// directory, or run id's own state directory (its run.json or archive
// tombstone names the run; any run when id is "", for a caller that does
// not know the id yet). Refused: the agent root, the runs root and any
// directory holding them, a directory inside the runs root other than
// <runs>/<id>, and any other directory with something in it. The error
// wraps ErrStateDir.
func CheckStateDirUse(agentDir, id, dir string) error {
	if dir == "" {
		return nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrStateDir, err)
	}
	abs = realPath(abs)
	fix := "give a new or empty directory, or leave state_dir out for <agent>/tmp/pi-actors/runs/<id>"
	if agentDir != "" {
		root := realPath(Root(agentDir))
		if within(abs, root) {
			return fmt.Errorf("%w: state_dir=%s holds the agent's runs (%s): a run's state dir is cleared and moved by restarts and rm; %s", ErrStateDir, dir, root, fix)
		}
		if own := filepath.Dir(abs) == root && (id == "" || filepath.Base(abs) == id); within(root, abs) && !own {
			return fmt.Errorf("%w: state_dir=%s is inside the runs directory %s, which is <runs>/<id> for each run; %s", ErrStateDir, dir, root, fix)
		}
	}
	if err := checkOwner(dir, abs); err != nil {
		return err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil // nothing there to lose: whether it can be made is CheckStateDir's
	}
	if !st.IsDir() {
		return fmt.Errorf("%w: state_dir=%s is not a directory; %s", ErrStateDir, dir, fix)
	}
	d := Dir(abs)
	if m, err := d.Meta(); err == nil {
		if id == "" || m.Run == id {
			return nil
		}
		return fmt.Errorf("%w: state_dir=%s is run:%s's state directory (this spawn is run:%s); %s", ErrStateDir, dir, m.Run, id, fix)
	}
	var tomb Tombstone
	if err := d.ReadJSON(TombstoneFile, &tomb); err == nil && tomb.Run != "" {
		if id == "" || tomb.Run == id {
			return nil
		}
		return fmt.Errorf("%w: state_dir=%s is archived run:%s's state directory (this spawn is run:%s); %s", ErrStateDir, dir, tomb.Run, id, fix)
	}
	f, err := os.Open(abs)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrStateDir, err)
	}
	names, _ := f.Readdirnames(3)
	f.Close()
	if len(names) > 0 {
		slices.Sort(names)
		return fmt.Errorf("%w: state_dir=%s is not empty (it holds %s) and is no run's state directory: a run clears its state dir's files when it starts again, and rm moves or deletes the whole directory; %s", ErrStateDir, dir, strings.Join(names, ", "), fix)
	}
	return nil
}

// within reports whether path is dir or inside it.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && filepath.IsLocal(rel)
}

// realPath resolves the symbolic links of the longest existing prefix of
// an absolute path (the rest is kept as written); a link whose target is
// missing (a state dir pruned through it) stands for its target.
func realPath(p string) string {
	return realPathN(p, 40)
}

func realPathN(p string, hops int) string {
	p = filepath.Clean(p)
	rest := ""
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 && hops > 0 {
			if to, err := os.Readlink(p); err == nil {
				if !filepath.IsAbs(to) {
					to = filepath.Join(filepath.Dir(p), to)
				}
				return filepath.Join(realPathN(to, hops-1), rest)
			}
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest)
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// withoutPIEnv drops inherited PI_ACTORS_* run identity so a child run
// gets its own, and the mark of a front door's call (CallEnv).
func withoutPIEnv(env []string) []string {
	env = lastWins(env)
	out := make([]string, 0, len(env)+7)
	for _, e := range env {
		switch {
		case strings.HasPrefix(e, "PI_ACTORS_RUN_ID="), strings.HasPrefix(e, "PI_ACTORS_ADDRESS="), strings.HasPrefix(e, sessions.RemoteRunEnv+"="),
			strings.HasPrefix(e, "PI_ACTORS_STATE_DIR="), strings.HasPrefix(e, "PI_ACTORS_SESSION="),
			strings.HasPrefix(e, "PI_ACTORS_DEPTH="), strings.HasPrefix(e, leafGOMAXPROCS+"="),
			strings.HasPrefix(e, CallEnv+"="): // a run outlives the call that spawned it
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

// lastWins keeps one entry per variable, the last one given (os/exec's
// rule: a caller overrides a variable by appending it), in the order of
// those last entries. os.StartProcess passes duplicates on, and a Go
// program reads the first: a supervisor started directly saw the first,
// one taken from the pool (which sets them in order) the last.
func lastWins(env []string) []string {
	last := make(map[string]int, len(env))
	for i, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		last[k] = i
	}
	if len(last) == len(env) {
		return env
	}
	out := make([]string, 0, len(last))
	for i, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); last[k] == i {
			out = append(out, kv)
		}
	}
	return out
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
