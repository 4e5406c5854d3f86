package runs

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"syscall"
	"time"

	"github.com/pi-actors/pi-actors/sessions"
)

// A run is suspended with its session (package sessions holds the
// record): its supervisor stops every process of the run (SIGSTOP to each
// leaf's process group, then to every other descendant) and its clock —
// the restart delay, the template's timeouts and delays, the readiness
// deadline, the liveness and max_rss checks — and keeps answering. A
// restart asked for meanwhile (control.restart, watch) waits for the
// resume; a stop (kill, cancel, term) is applied at once. On resume the
// clock goes on with the time each timer had left, progress.json records
// the time spent suspended (paused_ms) before any process continues, and
// the processes get SIGCONT.
//
// The session record is the only place the decision lives: the
// supervisor reads it when it starts, when the kernel rings (SIGUSR1) and
// once a second when the file changed, so a run started into a suspended
// session (or whose supervisor missed a ring) starts suspended.

// fileStamp identifies a version of a file (an atomic rewrite makes a new
// inode).
type fileStamp struct {
	ino, size int64
	mod       time.Time
	missing   bool // no such file
}

func stampOf(path string) fileStamp {
	st, err := os.Stat(path)
	if err != nil {
		return fileStamp{missing: errors.Is(err, fs.ErrNotExist)}
	}
	ino := int64(0)
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		ino = int64(sys.Ino)
	}
	return fileStamp{ino: ino, size: st.Size(), mod: st.ModTime()}
}

// sessionRecord is the path of the run's session record, "" for a run
// without a session (or an agent root that cannot be found).
func (s *supervisor) sessionRecord() string {
	if s.meta.OwnerID == "" || s.agentDir == "" {
		return ""
	}
	return sessions.Path(s.agentDir, s.meta.OwnerID, sessions.RecordSuffix)
}

// checkSession suspends or resumes the run as its session record says,
// when the record changed since the last look (force: look anyway).
func (s *supervisor) checkSession(force bool) {
	path := s.sessionRecord()
	if path == "" {
		return
	}
	st := stampOf(path)
	s.mu.Lock()
	same := st == s.sessionSeen
	s.sessionSeen = st
	s.mu.Unlock()
	if same && !force {
		return
	}
	var rec *sessions.Record
	if !st.missing {
		var err error
		if rec, err = sessions.Load(s.agentDir, s.meta.OwnerID); err != nil {
			s.logf("session record: %v", err)
			return
		}
	}
	by := "session:" + s.meta.OwnerID
	if rec != nil && rec.By != "" {
		by = rec.By
	}
	if rec != nil && rec.State == sessions.StateSuspended {
		s.suspend(by)
	} else {
		s.resume(by, true)
	}
}

// suspend stops the run's processes and its clock (once). A run being
// stopped for good (cancel, term, kill) is not suspended again: it was
// continued so it can handle SIGTERM, and its kill grace runs on the
// clock.
func (s *supervisor) suspend(by string) {
	s.smu.Lock()
	defer s.smu.Unlock()
	s.mu.Lock()
	if s.ending() || !s.clock.Pause() {
		s.mu.Unlock()
		return
	}
	s.progress.SuspendedAt = time.Now().UTC()
	s.mu.Unlock()
	n := s.signalTree(syscall.SIGSTOP)
	s.appendEvent(map[string]any{"event": "run.suspend", "by": by, "stopped": n})
	s.flushProgress()
}

// resume continues the run (once): paused_ms is written before any
// process continues; a restart held meanwhile is applied when replay.
func (s *supervisor) resume(by string, replay bool) {
	s.smu.Lock()
	s.mu.Lock()
	paused := s.clock.Resume()
	if paused == 0 && s.progress.SuspendedAt.IsZero() {
		s.mu.Unlock()
		s.smu.Unlock()
		return
	}
	s.progress.SuspendedAt = time.Time{}
	s.progress.PausedMS += paused.Milliseconds()
	deferred := s.deferred
	s.deferred = ""
	s.mu.Unlock()
	s.flushProgress()
	n := s.signalTree(syscall.SIGCONT)
	ev := map[string]any{"event": "run.resume", "by": by, "paused_ms": paused.Milliseconds(), "continued": n}
	if deferred != "" {
		ev["then"] = deferred
	}
	s.appendEvent(ev)
	s.smu.Unlock()
	if deferred != "" && replay {
		s.request(deferred)
	}
}

// held reports whether a stop request waits for the resume: a restart
// while the run is suspended is recorded and applied on resume. (A stop
// that ends the run is not held: request continues the run first.)
func (s *supervisor) held(reason string) bool {
	if !s.clock.Paused() {
		return false
	}
	if restartLike(reason) {
		s.mu.Lock()
		first := s.deferred == ""
		if first {
			s.deferred = reason
		}
		s.mu.Unlock()
		if first {
			s.appendEvent(map[string]any{"event": "run.held", "reason": reason})
		}
		return true
	}
	return false
}

// ending reports whether the run is being stopped for good (s.mu held).
func (s *supervisor) ending() bool {
	return s.stop != "" && !restartLike(s.stop)
}

// awaitRunning waits while the run is suspended, until it resumes or a
// stop is asked for (the next attempt starts only then).
func (s *supervisor) awaitRunning(ctx context.Context) {
	if s.clock.Paused() {
		s.sayReady() // no leaf starts until the run is resumed
	}
	for !s.clock.Running(ctx, s.wake) {
		if ctx.Err() != nil || s.stopReason() != "" {
			return
		}
	}
}

// signalTree sends sig to every process of the run: each live leaf's
// process group, then every descendant (a few rounds, so a process forked
// meanwhile is caught; never the kernel). It returns how many it
// signalled.
func (s *supervisor) signalTree(sig syscall.Signal) int {
	s.mu.Lock()
	groups := make([]int, 0, len(s.leaves))
	for pid := range s.leaves {
		groups = append(groups, pid)
	}
	s.mu.Unlock()
	for _, g := range groups {
		syscall.Kill(-g, sig)
	}
	seen := map[int]bool{}
	for range 5 {
		fresh := 0
		for _, p := range s.others() {
			if !seen[p] {
				seen[p] = true
				syscall.Kill(p, sig)
				fresh++
			}
		}
		if fresh == 0 || sig != syscall.SIGSTOP {
			break
		}
	}
	return len(seen)
}
