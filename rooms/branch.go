package rooms

import (
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/pi-actors/pi-actors/mailbox"
)

// maxCachedQueues bounds the branch inboxes whose state a process keeps.
const maxCachedQueues = 64

var queues = struct {
	sync.Mutex
	m map[string]*mailbox.Queue
}{m: map[string]*mailbox.Queue{}}

// BranchInbox returns the queue of a branch inbox, configured from
// EnvLimits when this process first opens it (its terminal records
// retained, its claim lease). The same *mailbox.Queue is returned for the
// same file, so its state is kept between operations.
func BranchInbox(dir, branch string) (*mailbox.Queue, error) {
	if err := checkBranch(branch); err != nil {
		return nil, err
	}
	path := filepath.Clean(BranchInboxPath(dir, branch))
	queues.Lock()
	defer queues.Unlock()
	if q := queues.m[path]; q != nil {
		return q, nil
	}
	if len(queues.m) >= maxCachedQueues {
		for k := range queues.m { // evict one at random
			delete(queues.m, k)
			break
		}
	}
	lim := EnvLimits()
	q := mailbox.NewQueue(path)
	q.KeepTerminal, q.Lease = lim.BranchRetained, lim.ClaimLease
	if lim.BranchRetained == 0 {
		q.KeepTerminal = -1 // keep none
	}
	queues.m[path] = q
	return q, nil
}

// branchAddress parses a branch address.
func branchAddress(address string) (mailbox.Address, error) {
	a, err := mailbox.Parse(address)
	if err != nil {
		return a, err
	}
	if a.Kind != mailbox.KindBranch {
		return a, &mailbox.EnvelopeError{Field: "address", Msg: fmt.Sprintf("a branch inbox needs address=branch:<run>/<branch>, got %s", address)}
	}
	return a, nil
}

// ClaimBranch claims the next message of a branch inbox for owner (see
// mailbox.Queue.Claim; pid, when > 0, is the process that will finish
// it, so its exit frees the message for others). A message that expired
// (ttl_ms or deadline) is not handed out: it is marked failed and moved
// to the run's dead letters, and the next one is tried. It rings
// branch.inbox.claim and returns nil when nothing is queued.
func ClaimBranch(dir, address, owner string, pid int) (mailbox.Record, error) {
	a, q, err := branchQueue(dir, address)
	if err != nil {
		return nil, err
	}
	for {
		rec, err := q.Claim(owner, pid)
		if err != nil || rec == nil {
			return nil, err
		}
		if exp, why := Expired(rec, time.Now()); exp {
			if err := expire(dir, a, q, rec, why); err != nil {
				return nil, err
			}
			continue
		}
		if err := wakeBranch(dir, a, mailbox.WakeBranchClaim, map[string]any{"id": rec.ID(), "owner": rec["claimed_by"]}); err != nil {
			return rec, err
		}
		return rec, nil
	}
}

// RequeueBranch gives back a message owner claimed from a branch inbox
// whose claim's answer never reached it (mailbox claim's output failed).
func RequeueBranch(dir, address, id, owner string) error {
	_, q, err := branchQueue(dir, address)
	if err != nil {
		return err
	}
	return q.Requeue(id, owner)
}

// branchQueue is the inbox of a branch address of the run in dir.
func branchQueue(dir, address string) (mailbox.Address, *mailbox.Queue, error) {
	a, err := branchAddress(address)
	if err != nil {
		return a, nil, err
	}
	q, err := BranchInbox(dir, a.Branch)
	return a, q, err
}

// expire moves a claimed, expired message to the dead letters, then
// marks it failed (a crash in between leaves it claimed, to be taken over
// and expired again; the dead letter is written once per id).
func expire(dir string, a mailbox.Address, q *mailbox.Queue, rec mailbox.Record, why string) error {
	env, err := rec.Envelope()
	if err != nil {
		env = mailbox.Envelope{To: a.String(), Type: rec.Type(), ID: rec.ID()}
	}
	env.ID = rec.ID()
	if _, _, err := DeadLetter(dir, env, why); err != nil {
		return err
	}
	if err := q.Done(rec.ID(), mailbox.StatusFailed, map[string]any{"error": "expired: " + why, "dead_letter": why}); err != nil {
		return err
	}
	return wakeBranch(dir, a, mailbox.WakeBranchStatus, map[string]any{"id": rec.ID(), "status": mailbox.StatusFailed})
}

// DoneBranch marks a claimed branch message handled or failed (meta
// such as error is stored with it) and rings branch.inbox.status.
// Compaction to Limits.BranchRetained terminal records happens as the
// queue folds.
func DoneBranch(dir, address, id, status string, meta map[string]any) error {
	return DoneBranchBy(dir, address, id, "", status, meta)
}

// DoneBranchBy is DoneBranch by the claim's owner (see
// mailbox.Queue.DoneBy): a consumer whose claim was taken over cannot
// finish the new owner's work.
func DoneBranchBy(dir, address, id, owner, status string, meta map[string]any) error {
	a, q, err := branchQueue(dir, address)
	if err != nil {
		return err
	}
	if err := q.DoneBy(id, owner, status, meta); err != nil {
		return err
	}
	return wakeBranch(dir, a, mailbox.WakeBranchStatus, map[string]any{"id": id, "status": status})
}

// RenewBranch renews the lease of a claimed branch message (see
// mailbox.Queue.Renew): a consumer working on one longer than
// Limits.ClaimLease renews it every fraction of a lease so no other
// claimer takes it over. owner, when not empty, must be the claim's.
func RenewBranch(dir, address, id, owner string) error {
	_, q, err := branchQueue(dir, address)
	if err != nil {
		return err
	}
	return q.Renew(id, owner)
}

// Expired reports whether an inbox record's message has expired at now:
// ttl_ms counts from the record's received_at (else queued_at).
func Expired(rec mailbox.Record, now time.Time) (bool, string) {
	env, err := rec.Envelope()
	if err != nil {
		return false, ""
	}
	accepted := parseTime(str(rec, "received_at"))
	if accepted.IsZero() {
		accepted = parseTime(str(rec, "queued_at"))
	}
	return env.ExpiredAt(accepted, now)
}

// wakeBranch rings the run's doorbell for a branch. It is advisory
// (watchers watch the inbox too): a doorbell that cannot be written (a
// full disk) does not fail the claim or status change already stored.
func wakeBranch(dir string, a mailbox.Address, reason string, meta map[string]any) error {
	mailbox.AppendWake(filepath.Join(dir, WakeFile), mailbox.Wake{Actor: a.String(), Reason: reason, StateDir: dir, Metadata: meta})
	return nil
}
