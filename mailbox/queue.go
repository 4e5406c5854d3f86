package mailbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pi-actors/pi-actors/internal/fsutil"
	"github.com/pi-actors/pi-actors/internal/proc"
)

// StatusUpdate is the status of a Queue's update lines: they are not
// messages, and no Inbox or Queue operation hands one out.
const StatusUpdate = "update"

// foldMin is the number of update lines below which a Queue never folds
// for their sake alone.
const foldMin = 256

// Queue is a journaled inbox for inboxes that many writers and several
// consumers share (a branch's branches/<b>/inbox.jsonl). Its records are
// an Inbox's — the message fields, then id, queued_at, received_at,
// status — but a claim or a status change does not rewrite the file: it
// appends an update line
//
//	{"status":"update","ref":"<id>","set":{"claimed_at":…,"claimed_by":…,"status":"claimed"}}
//
// and a later fold writes the changes into their records (the exact bytes
// an Inbox rewrite would give) and drops the update lines. So a claim
// costs one append instead of a rewrite of the whole file, and every
// operation reads only what other processes added since its last one
// (a Queue value remembers the file's state; values are safe for
// concurrent use, and processes share the file through its lock).
//
// Folds happen under the lock when the update lines reach half the
// records (at least foldMin), when an id-less or duplicate-id legacy
// record is about to be claimed (it gets a fresh id first: every claimed
// record has a unique id), and for KeepTerminal. Folds never drop a
// malformed line.
//
// A claimed record whose consumer is gone is taken over by the next Claim:
// when the claim recorded a pid (claimed_pid) and no process has it any
// more, or when it is older than Lease. Readers that do not know update
// lines (Inbox.List, Read) see them as records with status "update".
type Queue struct {
	Path string
	// KeepTerminal bounds the handled/failed records a fold keeps (the
	// newest): > 0 keeps that many, 0 keeps all, < 0 keeps none. Folds
	// run when the terminal records exceed the bound by half (exactly,
	// below 16) or by half the unfinished records if that is more, so
	// trimming costs O(1) per operation.
	KeepTerminal int
	// Lease, when > 0, lets Claim take over a record claimed (or its
	// lease renewed, see Renew) longer ago.
	Lease time.Duration

	mu sync.Mutex
	st queueState
}

// NewQueue returns the queue stored at path. Nothing is created until the
// first Append.
func NewQueue(path string) *Queue { return &Queue{Path: path} }

// queueState is what a Queue knows of its file: every record's id and
// current status, folded from the lines read so far.
type queueState struct {
	f        *Follower
	recs     []qrec
	byID     map[string]int
	head     int // recs[:head] are all handled or failed
	updates  int // update lines in the file
	terminal int // handled/failed records
	unsafeID int // records without an id or repeating an earlier one
}

type qrec struct {
	id, status string
	off        int64 // the record line's offset and length
	n          int
	sets       []json.RawMessage // update sets not yet folded, in order
	claimedAt  time.Time
	renewedAt  time.Time // the claim's lease was last renewed
	by         string    // claimed_by
	pid        int
	pidStart   uint64 // claimed_pid_start: the claimant's start time
	unsafeID   bool
}

// Append stores a message as a queued record, as Inbox.Append does: a
// caller-chosen id already in the queue returns the stored record (with
// its current status) and dup true, and writes nothing.
func (q *Queue) Append(msg any) (rec Record, dup bool, err error) {
	line, id, callerID, err := recordLine(msg)
	if err != nil {
		return nil, false, err
	}
	err = q.locked(true, func(st *queueState) error {
		if i, ok := st.byID[id]; ok && callerID {
			rec, err = q.record(st, i)
			dup = true
			return err
		}
		if err := appendLocked(q.Path, append(line, '\n'), false); err != nil {
			return err
		}
		m, err := decodeObject(line)
		rec = Record(m)
		return err
	})
	if err != nil {
		return nil, false, err
	}
	return rec, dup, nil
}

// Claim hands out the first record that is queued, or claimed by a
// consumer that is gone (see Queue): it records claimed_at, claimed_by
// (owner, default "runtime"), claimed_pid (when pid > 0: the process that
// will finish the record; its exit lets others take the record over; 0
// when a takeover names none) and status claimed. It returns nil when there is nothing to claim. Under
// the lock no record is handed out twice.
func (q *Queue) Claim(owner string, pid int) (Record, error) {
	if owner == "" {
		owner = DefaultOwner
	}
	var got Record
	err := q.locked(false, func(st *queueState) error {
		i := q.pick(st, time.Now())
		if i >= 0 && st.recs[i].unsafeID {
			if err := q.fold(st); err != nil {
				return err
			}
			if i = q.pick(st, time.Now()); i < 0 {
				return nil
			}
		}
		if i < 0 {
			return nil
		}
		now := timestamp()
		set := object{}
		set.set("claimed_at", now)
		set.set("claimed_by", owner)
		// A takeover overwrites what the claim before recorded of its
		// consumer, in the file too (a fold merges sets into the record,
		// and a field left out would come back).
		if prev := &st.recs[i]; pid > 0 || prev.pid > 0 {
			// With its start time: a pid alone could be reused by an
			// unrelated process that keeps the claim forever.
			set.set("claimed_pid", max(pid, 0))
			var start uint64
			if pid > 0 {
				start = proc.StartTime(pid)
			}
			set.set("claimed_pid_start", start)
		}
		if !st.recs[i].renewedAt.IsZero() {
			set.set("lease_renewed_at", now)
		}
		set.set("status", StatusClaimed)
		id := st.recs[i].id
		if err := q.appendUpdate(st, i, set); err != nil {
			return err
		}
		// The update may have folded the file: positions move, ids do not.
		j, ok := st.byID[id]
		if !ok {
			return fmt.Errorf("claim %s in %s: the record vanished in a fold", id, q.Path)
		}
		var err error
		got, err = q.record(st, j)
		return err
	})
	return got, err
}

// pick returns the index of the first claimable record, or -1.
func (q *Queue) pick(st *queueState, now time.Time) int {
	gone := map[claimant]bool{} // each claimant looked at once per pick
	for i := st.head; i < len(st.recs); i++ {
		r := &st.recs[i]
		switch {
		case r.status == StatusQueued:
			return i
		case r.status == StatusClaimed && q.abandoned(r, now, gone):
			return i
		}
	}
	return -1
}

// claimant is the process a claim belongs to.
type claimant struct {
	pid   int
	start uint64
}

// abandoned reports whether a claimed record's consumer is gone; gone
// remembers the claimants already looked at.
func (q *Queue) abandoned(r *qrec, now time.Time, gone map[claimant]bool) bool {
	if r.pid > 0 {
		c := claimant{r.pid, r.pidStart}
		g, seen := gone[c]
		if !seen {
			g = !processExists(c.pid)
			if !g && c.start != 0 {
				s := proc.StartTime(c.pid)
				g = s != 0 && s != c.start // the pid was reused: its claimant is gone
			}
			gone[c] = g
		}
		if g {
			return true
		}
	}
	last := r.claimedAt
	if r.renewedAt.After(last) {
		last = r.renewedAt
	}
	return q.Lease > 0 && !last.IsZero() && now.Sub(last) >= q.Lease
}

// Lookup returns the record with id (its updates applied), or nil: for a
// sender that must know whether a caller-chosen id was stored already.
func (q *Queue) Lookup(id string) (Record, error) {
	var rec Record
	err := q.locked(false, func(st *queueState) error {
		i, ok := st.byID[strings.TrimSpace(id)]
		if !ok {
			return nil
		}
		var err error
		rec, err = q.record(st, i)
		return err
	})
	return rec, err
}

// Renew renews the lease of a claimed record (see Queue.Lease): it
// records lease_renewed_at, and the record is not taken over until a
// whole lease has passed since. A consumer that works on a message longer
// than the lease renews it every fraction of a lease. owner, when not
// empty, must be the claim's (claimed_by). An unknown id is ErrNotFound;
// a record that is not claimed, or is claimed by another owner (it was
// taken over), is ErrTransition.
func (q *Queue) Renew(id, owner string) error {
	id = strings.TrimSpace(id)
	return q.locked(false, func(st *queueState) error {
		i, ok := st.byID[id]
		if !ok {
			return fmt.Errorf("%w: %s in %s", ErrNotFound, id, q.Path)
		}
		r := &st.recs[i]
		if r.status != StatusClaimed {
			return fmt.Errorf("%w: inbox record %s is %s, not claimed; only a claim's lease is renewed", ErrTransition, id, r.status)
		}
		if owner != "" && r.by != owner {
			return fmt.Errorf("%w: inbox record %s is claimed by %s, not %s (it was taken over)", ErrTransition, id, r.by, owner)
		}
		set := object{}
		set.set("lease_renewed_at", timestamp())
		return q.appendUpdate(st, i, set)
	})
}

// Requeue gives a claimed record back to the queue (its claim's answer
// never reached the consumer): it records requeued_at and status queued,
// and the next Claim hands it out again. owner, when not empty, must be
// the claim's; a record that is not claimed, or was taken over, is left
// as it is (nil).
func (q *Queue) Requeue(id, owner string) error {
	id = strings.TrimSpace(id)
	return q.locked(false, func(st *queueState) error {
		i, ok := st.byID[id]
		if !ok {
			return fmt.Errorf("%w: %s in %s", ErrNotFound, id, q.Path)
		}
		if r := &st.recs[i]; r.status != StatusClaimed || owner != "" && r.by != owner {
			return nil
		}
		set := object{}
		set.set("requeued_at", timestamp())
		set.set("status", StatusQueued)
		return q.appendUpdate(st, i, set)
	})
}

// processExists reports whether a process with pid exists (a zombie
// counts until it is reaped).
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Done marks a claimed record handled or failed, as Inbox.Done does: meta
// (sorted by key; never id or status), <status>_at and the status. An
// unknown id is ErrNotFound; a record that is not claimed is
// ErrTransition.
func (q *Queue) Done(id, status string, meta map[string]any) error {
	return q.DoneBy(id, "", status, meta)
}

// DoneBy is Done by the claim's owner: when owner is not empty it must be
// the record's claimed_by, so a consumer whose claim was taken over (its
// lease ran out, its process was thought gone) cannot finish the new
// owner's work (ErrTransition).
func (q *Queue) DoneBy(id, owner, status string, meta map[string]any) error {
	if status != StatusHandled && status != StatusFailed {
		return fmt.Errorf("%w: done status %q; use %s or %s", ErrTransition, status, StatusHandled, StatusFailed)
	}
	if err := CheckDoneMeta(meta); err != nil {
		return err
	}
	id = strings.TrimSpace(id)
	return q.locked(false, func(st *queueState) error {
		i, ok := st.byID[id]
		if !ok {
			return fmt.Errorf("%w: %s in %s", ErrNotFound, id, q.Path)
		}
		if cur := st.recs[i].status; cur != StatusClaimed {
			return fmt.Errorf("%w: inbox record %s is %s, not claimed; claim it before marking it %s", ErrTransition, id, cur, status)
		}
		if by := st.recs[i].by; owner != "" && by != owner {
			return fmt.Errorf("%w: inbox record %s is claimed by %s, not %s (it was taken over)", ErrTransition, id, by, owner)
		}
		keys := make([]string, 0, len(meta))
		for k := range meta {
			if k != "id" && k != "status" {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		set := object{}
		for _, k := range keys {
			if err := set.set(k, meta[k]); err != nil {
				return err
			}
		}
		set.set(status+"_at", timestamp())
		set.set("status", status)
		return q.appendUpdate(st, i, set)
	})
}

// appendUpdate writes one update line for record i and folds when the
// journal or the terminal records have grown past their bounds.
func (q *Queue) appendUpdate(st *queueState, i int, set object) error {
	line := object{}
	line.set("status", StatusUpdate)
	line.set("ref", st.recs[i].id)
	line = append(line, member{"set", set.bytes()})
	if err := appendLocked(q.Path, append(line.bytes(), '\n'), false); err != nil {
		return err
	}
	// Read our own line back: the state follows the file, never ahead.
	if err := st.catchUp(q.Path); err != nil {
		return err
	}
	if q.needFold(st) {
		return q.fold(st)
	}
	return nil
}

// needFold reports whether the journal or the terminal records are due
// for a fold.
func (q *Queue) needFold(st *queueState) bool {
	if st.updates >= max(foldMin, len(st.recs)/2) {
		return true
	}
	keep := retained(q.KeepTerminal)
	if keep < 0 {
		return false
	}
	slack := (len(st.recs) - st.terminal) / 2
	if keep >= 16 {
		slack = max(slack, keep/2)
	}
	return st.terminal > keep+slack
}

// retained maps KeepTerminal to the number of terminal records a fold
// keeps, -1 for all.
func retained(keep int) int {
	switch {
	case keep > 0:
		return keep
	case keep == 0:
		return -1
	}
	return 0
}

// Compact folds the journal now: update lines are written into their
// records and removed, and terminal records beyond KeepTerminal dropped.
func (q *Queue) Compact() error {
	return q.locked(false, func(st *queueState) error { return q.fold(st) })
}

// locked runs fn under the file's lock with the state brought up to date.
// Only an append (create) makes the directory: without it, a missing
// directory is an empty queue.
func (q *Queue) locked(create bool, fn func(st *queueState) error) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	var unlock func()
	var err error
	if create {
		unlock, err = lockFile(q.Path)
	} else if unlock, err = fsutil.LockDir(LockPath(q.Path), LockWait); errors.Is(err, fs.ErrNotExist) {
		q.st.reset()
		return fn(&q.st)
	}
	if err != nil {
		return err
	}
	defer unlock()
	if err := q.st.catchUp(q.Path); err != nil {
		return err
	}
	return fn(&q.st)
}

// record reads record i from the file and applies its pending updates.
func (q *Queue) record(st *queueState, i int) (Record, error) {
	r := st.recs[i]
	f, err := os.Open(q.Path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", q.Path, err)
	}
	defer f.Close()
	raw := make([]byte, r.n)
	if _, err := f.ReadAt(raw, r.off); err != nil {
		return nil, fmt.Errorf("read %s: %w", q.Path, err)
	}
	m, err := decodeObject(raw)
	if err != nil {
		return nil, fmt.Errorf("read %s: record %s at offset %d: %w", q.Path, r.id, r.off, err)
	}
	for _, s := range r.sets {
		set, err := decodeObject(s)
		if err != nil {
			return nil, fmt.Errorf("read %s: update of %s: %w", q.Path, r.id, err)
		}
		for k, v := range set {
			m[k] = v
		}
	}
	return Record(m), nil
}

// Count returns how many records the queue holds (its update lines
// applied); a missing file holds none.
func (q *Queue) Count() (int, error) {
	lines, err := Read(q.Path)
	if err != nil {
		return 0, err
	}
	recs, _ := foldRecords(lines)
	return len(recs), nil
}

// List returns the records among the last lines of the queue (at least n
// records when the file has them), oldest first, with their updates
// applied, and how many of the lines read are malformed.
func (q *Queue) List(n int) (recs []Record, malformed int, err error) {
	if n <= 0 {
		return nil, 0, nil
	}
	for k := 2*n + 16; ; k *= 2 {
		lines, err := Tail(q.Path, k)
		if err != nil {
			return nil, 0, err
		}
		recs, malformed = foldRecords(lines)
		if len(recs) >= n || len(lines) < k {
			if len(recs) > n {
				recs = recs[len(recs)-n:]
			}
			return recs, malformed, nil
		}
	}
}

// foldRecords applies the update lines among lines to the records before
// them; updates of records outside lines are ignored.
func foldRecords(lines []Line) (recs []Record, malformed int) {
	idx := map[string]int{}
	for _, l := range lines {
		switch {
		case l.Err != nil:
			malformed++
		case Record(l.Value).Status() == StatusUpdate:
			ref, _ := l.Value["ref"].(string)
			set, _ := l.Value["set"].(map[string]any)
			if i, ok := idx[ref]; ok {
				for k, v := range set {
					recs[i][k] = v
				}
			}
		default:
			r := Record(l.Value)
			if id := r.ID(); id != "" {
				if _, seen := idx[id]; !seen {
					idx[id] = len(recs)
				}
			}
			recs = append(recs, r)
		}
	}
	return recs, malformed
}

// newUUID is the fresh id of a legacy record.
var newUUID = NewID
