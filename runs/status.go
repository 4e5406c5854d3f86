package runs

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"time"
)

// startGrace is how long a run whose supervisor pid is not yet recorded
// still counts as starting.
const startGrace = 5 * time.Second

// Info is a run as read from its state directory, with its status derived
// now (never cached).
type Info struct {
	Dir      Dir
	Meta     *Meta
	Status   string
	Reason   string // why a run ended: start_limit, control.kill, supervisor_lost, kernel_lost…
	Progress *Progress
	Result   *Result
	Handled  *Handled
	Archived *Tombstone
}

// Tombstone is left where an archived run's state directory was.
type Tombstone struct {
	Archived         bool      `json:"archived"`
	ArchiveDir       string    `json:"archive_dir"`
	OriginalStateDir string    `json:"original_state_dir"`
	Run              string    `json:"run"`
	Status           string    `json:"status"`
	TS               time.Time `json:"ts"`
}

// Load reads a run and derives its status:
//
//   - an archive tombstone → archived;
//   - result.json → its status (done, failed, killed, cancelled, exited);
//   - a live supervisor (pid and start time match) → running, suspended
//     while its session is, or backoff while the restart policy waits;
//   - a supervisor pid not yet recorded, within 5 s of creation → running;
//     later → exited (kernel_lost: the start never completed);
//   - otherwise the last run.kill / run.cancel event decides, else exited
//     (supervisor_lost).
func Load(dir Dir) (*Info, error) { return loadFrom(dir, true, directReader{dir}) }

// fileReader reads a run's run.json and progress.json: from the files
// (directReader), or through what a listing process keeps (liveFiles).
type fileReader interface {
	meta() (*Meta, error)
	progress() *Progress
}

type directReader struct{ dir Dir }

func (r directReader) meta() (*Meta, error) { return r.dir.Meta() }
func (r directReader) progress() *Progress  { return r.dir.Progress() }

// loadHead is Load of only what a runs index entry needs: run.json's
// identity fields, no terminal-handled record, no progress for an ended
// run.
func loadHead(dir Dir) (*Info, error) { return loadFrom(dir, false, headReader{directReader{dir}}) }

// headReader reads only run.json's identity fields (metaHead).
type headReader struct{ directReader }

func (r headReader) meta() (*Meta, error) { return r.dir.metaHead() }

// loadFrom is Load reading run.json and progress.json through files;
// with full false it reads only what loadHead needs.
func loadFrom(dir Dir, full bool, files fileReader) (*Info, error) {
	in := &Info{Dir: dir}
	meta := files.meta
	// run.json first: an archived run's state dir holds only its
	// tombstone (archiving moves the whole directory away).
	m, err := meta()
	if errors.Is(err, ErrNotFound) {
		var tomb Tombstone
		if dir.ReadJSON(TombstoneFile, &tomb) == nil && tomb.Archived {
			in.Archived = &tomb
			in.Status = StatusArchived
			in.Reason = "archived from " + tomb.Status
			if m, err := Dir(tomb.ArchiveDir).Meta(); err == nil {
				in.Meta = m
				in.Result = Dir(tomb.ArchiveDir).Result()
			} else {
				in.Meta = &Meta{Run: tomb.Run, Address: "run:" + tomb.Run, StateDir: string(dir)}
			}
			return in, nil
		}
	}
	if err != nil {
		return nil, err
	}
	in.Meta = m
	in.Result = dir.Result()
	if full || in.Result == nil {
		in.Progress = files.progress()
	}
	var h Handled
	if full && dir.ReadJSON(HandledFile, &h) == nil {
		in.Handled = &h
	}
	if in.Handled == nil && in.Result != nil {
		switch in.Result.Reason {
		case "control.kill":
			in.Handled = &Handled{Event: "run.kill", Signal: "SIGKILL", TS: in.Result.CompletedAt}
		case "control.cancel":
			in.Handled = &Handled{Event: "run.cancel", Signal: "SIGTERM", TS: in.Result.CompletedAt}
		}
	}
	switch {
	case in.Result != nil:
		in.ended()
	case m.Pid > 0 && Alive(m.Pid, m.PidStart):
		in.Status = StatusRunning
		switch {
		case in.Progress == nil:
		case !in.Progress.SuspendedAt.IsZero():
			in.Status = StatusSuspended
		case in.Progress.Phase == StatusBackoff:
			in.Status = StatusBackoff
		}
	case m.Pid == 0 && time.Since(m.CreatedAt) < startGrace:
		in.Status = StatusRunning
	case m.Pid == 0:
		in.Status, in.Reason = StatusExited, "kernel_lost"
	default:
		// The supervisor writes result.json before it exits, so now that
		// it is seen gone a second look is conclusive: it may have ended
		// between the first read and the liveness check (a run ending as
		// it was loaded read as supervisor_lost).
		if in.Result = dir.Result(); in.Result != nil {
			in.ended()
			break
		}
		in.Status, in.Reason = lastStop(dir)
	}
	return in, nil
}

// ended sets the status and reason of a run that has its result.json.
func (in *Info) ended() {
	in.Status, in.Reason = in.Result.Status, in.Result.Reason
	if in.Status == "" {
		in.Status = StatusDone
		if in.Result.Code != 0 {
			in.Status = StatusFailed
		}
	}
}

// lastStop scans the newest events for an intentional stop.
func lastStop(dir Dir) (string, string) {
	lines := tailLines(dir.Path(EventsFile), 200)
	for i := len(lines) - 1; i >= 0; i-- {
		var ev struct {
			Event string `json:"event"`
		}
		if json.Unmarshal([]byte(lines[i]), &ev) != nil {
			continue
		}
		switch ev.Event {
		case "run.kill":
			return StatusKilled, "control.kill"
		case "run.cancel":
			return StatusCancelled, "control.cancel"
		}
	}
	return StatusExited, "supervisor_lost"
}

// tailLines returns up to n last lines of a file, reading at most 1 MiB
// from its end (lastLines: a line that began before that window is
// dropped, or kept cut when it is the only one).
func tailLines(path string, n int) []string {
	lines, _ := tailWindow(path, n)
	return lines
}

// tailWindow is tailLines, and whether the window held the whole file
// (nothing before the lines was left unread).
func tailWindow(path string, n int) (lines []string, whole bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, true
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, true
	}
	size := st.Size()
	off := max(0, size-tailWindowBytes)
	// One byte more in front: the window's first line is cut unless the
	// byte before it ends a line.
	from := max(0, off-1)
	buf := make([]byte, size-from)
	k, _ := f.ReadAt(buf, from)
	buf = buf[:k]
	cut := false
	if off > 0 && len(buf) > 0 {
		cut, buf = buf[0] != '\n', buf[1:]
	}
	return lastLines(buf, cut, n), off == 0
}

// tailWindowBytes is how far back from a log's end a tail reads.
const tailWindowBytes = 1 << 20

// TailLines is tailLines for callers outside the package (inspect views).
func TailLines(path string, n int) []string { return tailLines(path, n) }

// Live reports whether the run's supervisor is alive.
func (in *Info) Live() bool { return !Terminal(in.Status) }

// Files lists the run's files for reports.
func (in *Info) Files() []string {
	d := in.Dir
	if in.Archived != nil {
		d = Dir(in.Archived.ArchiveDir)
	}
	return []string{d.Path(StdoutLog), d.Path(StderrLog), d.Path(EventsFile), d.Path(OutboxFile), filepath.Join(string(d), "communication.json"), d.Path(ResultFile)}
}
