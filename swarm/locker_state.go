package swarm

import (
	"fmt"
	"slices"
	"time"

	"github.com/pi-actors/pi-actors/internal/fsutil"
	"github.com/pi-actors/pi-actors/runs"
)

// Locker files in its run's state dir.
const (
	QueueFile   = "queue.json"
	LocksFile   = "locks.json"
	JournalFile = "journal.jsonl"
)

// Queue is queue.json: the tasks waiting, leased, completed and failed.
type Queue struct {
	Items     []Item            `json:"items"`
	Leased    map[string]*Lease `json:"leased"`
	Completed map[string]string `json:"completed"` // id → the owner that completed it
	Failed    map[string]string `json:"failed"`    // id → why
	// Waiting are the claims that found nothing and asked to wait
	// (body.wait_ms): the next task that becomes free goes to the first
	// of them, and each hears lock.empty when its wait is over.
	Waiting []Waiter `json:"waiting,omitempty"`
}

// Waiter is a lock.claim waiting for a task until Until.
type Waiter struct {
	Owner     string `json:"owner"`
	ReplyTo   string `json:"reply_to"`
	From      string `json:"from,omitempty"` // the claiming run (run:<id>), checked before a task is handed to it
	LeaseMS   int64  `json:"lease_ms,omitempty"`
	MessageID string `json:"message_id"` // the claim's id: the answer's correlation_id
	Since     string `json:"since"`
	Until     string `json:"until"`
}

// Item is a queued task.
type Item struct {
	ID         string   `json:"id"`
	Task       any      `json:"task"`
	Resources  []string `json:"resources,omitempty"`
	EnqueuedAt string   `json:"enqueued_at"`
	Attempts   int      `json:"attempts,omitempty"`
}

// Lease is a task handed to an owner until ExpiresAt.
type Lease struct {
	Item
	Owner     string `json:"owner"`
	ClaimedAt string `json:"claimed_at"`
	ExpiresAt string `json:"expires_at"`
}

// Lock is a resource held by an owner until ExpiresAt (Task: the task
// whose lease holds it).
type Lock struct {
	Owner     string `json:"owner"`
	Task      string `json:"task,omitempty"`
	ExpiresAt string `json:"expires_at"`
}

// lockerState is the locker's state, saved whole after every change.
type lockerState struct {
	dir   runs.Dir
	q     Queue
	locks map[string]*Lock
}

// loadState reads queue.json and locks.json (missing files are empty).
func loadState(dir runs.Dir) (*lockerState, error) {
	s := &lockerState{dir: dir, locks: map[string]*Lock{}}
	if dir.Exists(QueueFile) {
		if err := dir.ReadJSON(QueueFile, &s.q); err != nil {
			return nil, fmt.Errorf("locker: %w", err)
		}
	}
	if dir.Exists(LocksFile) {
		if err := dir.ReadJSON(LocksFile, &s.locks); err != nil {
			return nil, fmt.Errorf("locker: %w", err)
		}
	}
	if s.q.Items == nil {
		s.q.Items = []Item{}
	}
	if s.q.Leased == nil {
		s.q.Leased = map[string]*Lease{}
	}
	if s.q.Completed == nil {
		s.q.Completed = map[string]string{}
	}
	if s.q.Failed == nil {
		s.q.Failed = map[string]string{}
	}
	if s.locks == nil {
		s.locks = map[string]*Lock{}
	}
	return s, nil
}

// save writes both files atomically.
func (s *lockerState) save() error {
	if s.q.Items == nil {
		s.q.Items = []Item{}
	}
	if err := fsutil.WriteJSON(s.dir.Path(QueueFile), s.q, 0o600); err != nil {
		return fmt.Errorf("locker: %w", err)
	}
	if err := fsutil.WriteJSON(s.dir.Path(LocksFile), s.locks, 0o600); err != nil {
		return fmt.Errorf("locker: %w", err)
	}
	return nil
}

// known reports whether a task id was ever enqueued (and where it is).
func (s *lockerState) known(id string) string {
	switch {
	case s.q.Leased[id] != nil:
		return "leased"
	case s.q.Completed[id] != "":
		return "completed"
	case s.q.Failed[id] != "":
		return "failed"
	}
	for _, it := range s.q.Items {
		if it.ID == id {
			return "queued"
		}
	}
	return ""
}

// expire takes back what ran out at now: a lease's task goes back to the
// front of the queue (the next claim takes it over), a lock is freed. It
// returns what it did, for the journal.
func (s *lockerState) expire(now time.Time) []map[string]any {
	var out []map[string]any
	var back []Item
	for id, l := range s.q.Leased {
		if past(l.ExpiresAt, now) {
			delete(s.q.Leased, id)
			it := l.Item
			it.Attempts++
			back = append(back, it)
			out = append(out, map[string]any{"event": "lock.expired", "id": id, "owner": l.Owner})
		}
	}
	slices.SortFunc(back, func(a, b Item) int { return compareStr(a.EnqueuedAt, b.EnqueuedAt) })
	s.q.Items = append(back, s.q.Items...)
	for r, l := range s.locks {
		if past(l.ExpiresAt, now) {
			delete(s.locks, r)
			out = append(out, map[string]any{"event": "lock.expired", "resource": r, "owner": l.Owner})
		}
	}
	return out
}

// free reports whether every resource is unlocked or held by owner.
func (s *lockerState) free(resources []string, owner string) bool {
	for _, r := range resources {
		if l := s.locks[r]; l != nil && l.Owner != owner {
			return false
		}
	}
	return true
}

// claim leases the first task whose resources are free to owner.
func (s *lockerState) claim(owner string, lease time.Duration, now time.Time) *Lease {
	for i, it := range s.q.Items {
		if !s.free(it.Resources, owner) {
			continue
		}
		s.q.Items = append(s.q.Items[:i], s.q.Items[i+1:]...)
		l := &Lease{Item: it, Owner: owner, ClaimedAt: stamp(now), ExpiresAt: stamp(now.Add(lease))}
		s.q.Leased[it.ID] = l
		for _, r := range it.Resources {
			s.locks[r] = &Lock{Owner: owner, Task: it.ID, ExpiresAt: l.ExpiresAt}
		}
		return l
	}
	return nil
}

// wait adds a claim that found nothing to the waiters (an owner waits
// once: its newer claim replaces its older one, keeping its place).
func (s *lockerState) wait(w Waiter) {
	for i := range s.q.Waiting {
		if s.q.Waiting[i].Owner == w.Owner {
			s.q.Waiting[i] = w
			return
		}
	}
	s.q.Waiting = append(s.q.Waiting, w)
}

// unwait removes owner's waiting claim, if any.
func (s *lockerState) unwait(owner string) {
	s.q.Waiting = slices.DeleteFunc(s.q.Waiting, func(w Waiter) bool { return w.Owner == owner })
}

// waitOver removes and returns the waiters whose wait ended at now.
func (s *lockerState) waitOver(now time.Time) []Waiter {
	var over []Waiter
	s.q.Waiting = slices.DeleteFunc(s.q.Waiting, func(w Waiter) bool {
		if past(w.Until, now) {
			over = append(over, w)
			return true
		}
		return false
	})
	return over
}

// nextWaitEnd is when the first waiter's wait ends (zero without any).
func (s *lockerState) nextWaitEnd() time.Time {
	var first time.Time
	for _, w := range s.q.Waiting {
		t, err := time.Parse(time.RFC3339Nano, w.Until)
		if err == nil && (first.IsZero() || t.Before(first)) {
			first = t
		}
	}
	return first
}

// finish ends a lease: completed, failed, or (retry) queued again.
func (s *lockerState) finish(l *Lease, failed bool, why string, retry bool) {
	delete(s.q.Leased, l.ID)
	for r, lk := range s.locks {
		if lk.Task == l.ID {
			delete(s.locks, r)
		}
	}
	switch {
	case failed && retry:
		it := l.Item
		it.Attempts++
		s.q.Items = append(s.q.Items, it)
	case failed:
		s.q.Failed[l.ID] = why
	default:
		s.q.Completed[l.ID] = l.Owner
	}
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func past(ts string, now time.Time) bool {
	t, err := time.Parse(time.RFC3339Nano, ts)
	return err == nil && !now.Before(t)
}

func compareStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
