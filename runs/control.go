package runs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/pi-actors/pi-actors/mailbox"
)

// Control message types the supervisor applies itself. Every other type
// stays queued in inbox.jsonl for the run's own consumer (a script using
// `pi-actors mailbox claim`).
var controlTypes = map[string]string{"control.kill": "kill", "control.cancel": "cancel", "control.restart": "restart"}

// IsControl reports whether a message type is applied by the supervisor.
func IsControl(typ string) bool { _, ok := controlTypes[typ]; return ok }

// appliedBySupervisor reports whether an inbox record is a control
// message for the run itself: a copy of a branch's message (to =
// branch:<run>/<b>, forwarded by the kernel) is for the run's consumer,
// whatever its type.
func appliedBySupervisor(r mailbox.Record) bool {
	to, _ := r["to"].(string)
	return IsControl(r.Type()) && !strings.HasPrefix(to, "branch:")
}

// control takes queued control messages from the inbox, oldest first,
// and applies them. Other messages are left alone. A control message is
// claimed and marked handled in one rewrite (one atomic write), then
// applied: the supervisor is its only consumer.
func (s *supervisor) control() {
	for {
		rec, err := claimControl(s.dir.Path(InboxFile))
		if err != nil {
			s.logf("inbox: %v", err)
		}
		if rec == nil {
			return
		}
		// Claimed and marked handled: it is applied even when something
		// after the claim failed (the dead letters of expired ones).
		reason := controlTypes[rec.Type()]
		from, _ := rec["from"].(string)
		s.appendEvent(map[string]any{"event": "run.control", "type": rec.Type(), "inbox_id": rec.ID(), "from": from})
		s.request(reason)
		if err != nil {
			return
		}
	}
}

// QueuedKill is the id of a control.kill still queued in a live run's
// inbox ("" when none): a kernel that died while applying one (between
// freezing the run's tree and killing it, or before recording it) left it
// there, and the next kernel finishes it.
func QueuedKill(dir Dir) string {
	path := dir.Path(InboxFile)
	if !exists(path) {
		return ""
	}
	lines, err := mailbox.Read(path)
	if err != nil {
		return ""
	}
	for _, l := range lines {
		if l.Err != nil {
			continue
		}
		r := mailbox.Record(l.Value)
		if r.Status() == mailbox.StatusQueued && r.Type() == "control.kill" && appliedBySupervisor(r) {
			return r.ID()
		}
	}
	return ""
}

// claimControl takes the first queued control record: claimed and
// handled by the supervisor at once.
func claimControl(path string) (mailbox.Record, error) {
	return claimWhere(path, "supervisor", appliedBySupervisor, true)
}

// SettleControl marks the control messages still queued in the inbox of
// a run that is not running handled: a run restarted on its state
// directory (Resume) starts a new attempt, which a kill, a stop or a
// restart sent while nothing ran must not stop.
func SettleControl(dir Dir) error {
	for {
		rec, err := claimControl(dir.Path(InboxFile))
		if err != nil || rec == nil {
			return err
		}
	}
}

// ClaimMessage claims the next queued message for the run's own consumer
// (every type but the supervisor's control types).
func ClaimMessage(dir Dir, owner string) (mailbox.Record, error) {
	return claimWhere(dir.Path(InboxFile), owner, func(r mailbox.Record) bool { return !appliedBySupervisor(r) }, false)
}

// claimWhere claims the first queued record that match accepts (and, with
// handled, marks it handled in the same write).
func claimWhere(path, owner string, match func(mailbox.Record) bool, handled bool) (mailbox.Record, error) {
	if !exists(path) {
		return nil, nil // nothing was ever sent (no lock taken to learn it)
	}
	var got mailbox.Record
	var dead []deadLetter
	// Lazily: in a long inbox most records are finished, and a peek at
	// their status skips them without decoding them.
	err := mailbox.RewriteLazy(path, func(lines []mailbox.Line) ([]mailbox.Line, error) {
		for i := range lines {
			l := &lines[i]
			// (An empty status counts as queued, as Record.Status says.)
			if s, ok := l.Peek("status"); ok && s != "" && s != mailbox.StatusQueued {
				continue
			}
			if l.Decode(); l.Err != nil {
				continue
			}
			r := mailbox.Record(l.Value)
			if r.Status() != mailbox.StatusQueued || !match(r) {
				continue
			}
			if r.ID() == "" {
				if err := l.Set("id", mailbox.NewID()); err != nil {
					return nil, err
				}
			}
			now := time.Now().UTC().Format(time.RFC3339Nano)
			if handled {
				// A control message that expired is not applied: it is
				// marked failed (with why) and goes to the dead letters
				// once the inbox lock is released; the next one is looked
				// at.
				if why := expiredRecord(r, time.Now()); why != "" {
					d, err := expireRecord(l, filepath.Dir(path), why, now)
					if err != nil {
						return nil, err
					}
					dead = append(dead, d)
					continue
				}
			}
			fields := [][2]any{{"claimed_at", now}, {"claimed_by", owner}, {"status", mailbox.StatusClaimed}}
			if handled {
				fields = append(fields, [2]any{"handled_at", now}, [2]any{"status", mailbox.StatusHandled})
			}
			for _, kv := range fields {
				if err := l.Set(kv[0].(string), kv[1]); err != nil {
					return nil, err
				}
			}
			got = mailbox.Record(l.Value)
			break
		}
		return lines, nil
	})
	if err == nil && len(dead) > 0 {
		err = deadLetters(filepath.Dir(path), dead)
	}
	return got, err
}

// requeueClaims puts messages a previous attempt's consumer claimed but
// never finished back in the queue (same id), so the new attempt handles
// them: an accepted message is never silently dropped by a crash.
func requeueClaims(path string) (int, error) {
	if !exists(path) {
		return 0, nil
	}
	n := 0
	err := mailbox.Rewrite(path, func(lines []mailbox.Line) ([]mailbox.Line, error) {
		now := time.Now().UTC().Format(time.RFC3339Nano)
		for i := range lines {
			l := &lines[i]
			if l.Err != nil {
				continue
			}
			r := mailbox.Record(l.Value)
			if r.Status() != mailbox.StatusClaimed || r["claimed_by"] == "supervisor" {
				continue
			}
			if err := l.Set("status", mailbox.StatusQueued); err != nil {
				return nil, err
			}
			if err := l.Set("requeued_at", now); err != nil {
				return nil, err
			}
			n++
		}
		return lines, nil
	})
	return n, err
}

// KillTree is the immediate half of control.kill applied from outside
// the supervisor (by the kernel; RecordKill is the other): SIGKILL every
// descendant of the supervisor — the run's whole tree, since the
// supervisor is a subreaper — then the supervisor itself. Pids are trusted
// only with the supervisor's recorded start time. It reports whether the
// supervisor was alive (and so was killed); nothing is flushed to disk.
func KillTree(in *Info, inboxID string) bool {
	m := in.Meta
	if !Alive(m.Pid, m.PidStart) {
		return false
	}
	// The event first (an append, no fsync): when the supervisor's exit is
	// seen, the run already reads as killed, not lost. Then the kill — at
	// once, before any disk flush; RecordKill writes the result after.
	appendEvent(in.Dir, map[string]any{"event": "run.kill", "type": "control.kill", "pid": m.Pid, "signal": "SIGKILL", "signalTarget": "processTree", "inbox_id": inboxID})
	// Freeze first (SIGSTOP): the supervisor, so it writes nothing more
	// (no "command failed" report for leaves it did not stop itself), then
	// its descendants until none is new, so nothing forks away; then
	// SIGKILL them all.
	syscall.Kill(m.Pid, syscall.SIGSTOP)
	seen := map[int]bool{}
	var tree []int
	for range 5 {
		fresh := 0
		// (Never the kernel itself: a run's process may have started it.)
		for _, p := range DescendantsBut(m.Pid, os.Getpid()) {
			if !seen[p] {
				seen[p] = true
				tree = append(tree, p)
				syscall.Kill(p, syscall.SIGSTOP)
				fresh++
			}
		}
		if fresh == 0 {
			break
		}
	}
	KillAll(tree, syscall.SIGKILL)
	syscall.Kill(m.Pid, syscall.SIGKILL)
	return true
}

// RecordKill is the durable half of control.kill, after KillTree: the
// killed result.json and the inbox record marked handled.
func RecordKill(in *Info, inboxID string) error {
	if cur, err := in.Dir.Meta(); err != nil || cur.Pid != in.Meta.Pid || cur.PidStart != in.Meta.PidStart || !cur.CreatedAt.Equal(in.Meta.CreatedAt) {
		return fmt.Errorf("record kill of run:%s: its state dir now holds another run", in.Meta.Run)
	}
	if err := in.Dir.WriteJSON(ResultFile, KilledResult(in.Dir).Identify(in.Meta)); err != nil {
		return err
	}
	return markHandled(in.Dir.Path(InboxFile), inboxID, "kernel")
}

// RecordKilledAlready marks handled a control.kill that arrived while
// another kill of the run was under way: that kill did what it asks (no
// second run.kill event, no second result).
func RecordKilledAlready(dir Dir, inboxID string) error {
	return markHandled(dir.Path(InboxFile), inboxID, "kernel")
}

// markHandled records that a control message was applied (claimed and
// handled at once). A consumer that claimed it first keeps it.
func markHandled(path, id, by string) error {
	return mailbox.Rewrite(path, func(lines []mailbox.Line) ([]mailbox.Line, error) {
		now := time.Now().UTC().Format(time.RFC3339Nano)
		for i := range lines {
			l := &lines[i]
			r := mailbox.Record(l.Value)
			if l.Err != nil || r.ID() != id || r.Status() != mailbox.StatusQueued {
				continue
			}
			for _, kv := range [][2]any{{"claimed_at", now}, {"claimed_by", by}, {"handled_at", now}, {"status", mailbox.StatusHandled}} {
				if err := l.Set(kv[0].(string), kv[1]); err != nil {
					return nil, err
				}
			}
			break
		}
		return lines, nil
	})
}

// KilledResult is the result of a run stopped by control.kill.
func KilledResult(dir Dir) *Result {
	return &Result{Status: StatusKilled, Code: 137, Killed: true, Reason: "control.kill", CompletedAt: time.Now().UTC(), Restarts: restartsSoFar(dir)}
}

// restartsSoFar counts the run's restarts from its events (progress.json
// may lag by up to progressEvery).
func restartsSoFar(dir Dir) int {
	n := 0
	for _, line := range tailLines(dir.Path(EventsFile), 10000) {
		if strings.Contains(line, `"event":"run.restart"`) {
			n++
		}
	}
	return n
}

// exists reports whether path exists (a missing inbox needs no lock).
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil || !errors.Is(err, fs.ErrNotExist)
}

// expiredRecord is why an inbox record's message expired at now
// (deadline_passed, ttl_expired: ttl_ms counted from its received_at), or
// "".
func expiredRecord(r mailbox.Record, now time.Time) string {
	env, err := r.Envelope()
	if err != nil {
		return ""
	}
	// ttl_ms counts from when the inbox accepted it: received_at, else
	// queued_at (as for branch inboxes).
	accepted, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(r["received_at"]))
	if accepted.IsZero() {
		accepted, _ = time.Parse(time.RFC3339Nano, fmt.Sprint(r["queued_at"]))
	}
	_, why := env.ExpiredAt(accepted, now)
	return why
}

// deadLetter is one line of dead_letters.jsonl (the format is package
// rooms' DeadLetterRecord; runs does not import rooms).
type deadLetter struct {
	ID       string         `json:"id"`
	Reason   string         `json:"reason"`
	TS       string         `json:"ts"`
	StateDir string         `json:"state_dir,omitempty"`
	Message  map[string]any `json:"message"`
}

// expireRecord marks an expired message's inbox line failed (with why)
// and returns its dead letter.
func expireRecord(l *mailbox.Line, dir, why, now string) (deadLetter, error) {
	r := mailbox.Record(l.Value)
	msg := map[string]any{}
	for _, k := range []string{"to", "type", "body", "correlation_id", "from", "metadata", "reply_to", "summary", "id", "ttl_ms", "deadline"} {
		if v, ok := r[k]; ok {
			msg[k] = v
		}
	}
	for _, kv := range [][2]any{{"failed_at", now}, {"status", mailbox.StatusFailed}, {"error", "expired: " + why}, {"dead_letter", why}} {
		if err := l.Set(kv[0].(string), kv[1]); err != nil {
			return deadLetter{}, err
		}
	}
	return deadLetter{ID: r.ID(), Reason: why, TS: now, StateDir: dir, Message: msg}, nil
}

// deadLetters appends dead letters to <dir>/dead_letters.jsonl, each id
// once.
func deadLetters(dir string, dead []deadLetter) error {
	return mailbox.Update(filepath.Join(dir, "dead_letters.jsonl"), func(tx *mailbox.Tx) error {
		for _, d := range dead {
			if old, err := tx.Find(d.ID); err != nil || old != nil {
				if err != nil {
					return err
				}
				continue
			}
			if err := tx.Append(d); err != nil {
				return err
			}
		}
		return nil
	})
}
