package rooms

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/pi-actors/pi-actors/mailbox"
)

// SendBranch is the branch route, message to=branch:<run>/<b>, after the
// kernel's session check. dir is the run's state directory; parent is
// nil when the run is running, else why it is not. In order:
//
//  1. env.From, when set, must be run:<run> or branch:<run>/<b'> —
//     checked before anything is written;
//  2. a message already past its deadline goes to the run's dead letters
//     (the Delivery says so and nothing is forwarded);
//  3. the recipient branch, and a branch of the same run that sends, join
//     the room if they are not members (actor.join, BranchJoinSummary),
//     and their communication snapshots, then the run's, are written when
//     due;
//  4. the envelope is appended to branches/<b>/inbox.jsonl (a caller id
//     already there is a duplicate: nothing is written);
//  5. in one step under the run directory's lock: when the run is
//     running, a copy goes to the run's own inbox (the same id: a copy
//     already there is not written twice), then the doorbell rings
//     (wake.jsonl: branch.message for a new branch record, run.message
//     for a new copy).
//
// The Delivery is finished: Result gives the outcome.
func SendBranch(dir string, env mailbox.Envelope, parent error) (*Delivery, error) {
	env, to, err := checkBranchMessage(env)
	if err != nil {
		return nil, err
	}
	// A retry of a stored id is a duplicate even past its deadline (and
	// completes the forward a crash interrupted): only a new message is
	// dead-lettered.
	if expired, why := env.ExpiredAt(time.Now(), time.Now()); expired && !inBranch(dir, to, env.ID) {
		return deadDelivery(dir, to, env, why)
	}
	d, err := deliverBranch(dir, to, env, env.From, parent, false, mailbox.ForwardID(env.ID, to.Branch))
	if err != nil {
		return nil, fmt.Errorf("deliver to %s: %w", env.To, err)
	}
	return d, nil
}

// CheckBranch validates a branch message as SendBranch does, before
// anything is written: the branch address and from (when set, the same
// run). The kernel calls it before its own checks.
func CheckBranch(env mailbox.Envelope) error {
	_, _, err := checkBranchMessage(env)
	return err
}

func checkBranchMessage(env mailbox.Envelope) (mailbox.Envelope, mailbox.Address, error) {
	env, err := env.Normalized()
	if err != nil {
		return env, mailbox.Address{}, err
	}
	to, err := branchAddress(env.To)
	if err != nil {
		return env, to, err
	}
	if env.From != "" {
		if _, err := sameRun(env.From, to.ID, "sender"); err != nil {
			return env, to, &mailbox.EnvelopeError{Field: "from", Err: err,
				Msg: fmt.Sprintf("message to %s requires from=run:%s or from=branch:%s/<branch>; got %s", env.To, to.ID, to.ID, env.From)}
		}
	}
	return env, to, checkBranch(to.Branch)
}

// inBranch reports whether a caller-chosen id is in the branch's inbox.
func inBranch(dir string, to mailbox.Address, id string) bool {
	if id == "" {
		return false
	}
	q, err := BranchInbox(dir, to.Branch)
	if err != nil {
		return false
	}
	rec, err := q.Lookup(id)
	return err == nil && rec != nil
}

// deliverBranch does steps 3 to 5 of SendBranch for an envelope whose
// To is the branch.
//
// freshID says env.ID, when set, was made by this package from a new uuid
// (a multicast copy of a room entry whose id was generated), so no other
// record can have it. fwdID is the id of the copy for the run's inbox
// (mailbox.ForwardID, a multicast copy's own id), "" for a new one.
func deliverBranch(dir string, to mailbox.Address, env mailbox.Envelope, sender string, parent error, freshID bool, fwdID string) (*Delivery, error) {
	run, self := to.ID, to.String()
	from, _ := mailbox.Parse(sender)
	fromBranch := from.Kind == mailbox.KindBranch && from.ID == run && from.String() != self
	members := []string{self}
	if fromBranch {
		members = append(members, from.String())
	}
	d := &Delivery{To: self, Type: env.Type, Run: run, Branch: to.Branch, StateDir: dir}
	if !roomCurrent(dir, run, members, append(members[:len(members):len(members)], "run:"+run)) {
		_, err := withRoom(dir, run, func(rt *roomTx) error {
			for _, m := range members {
				joined, err := rt.ensure(m, branchJoinBody(run), BranchJoinSummary)
				if err != nil {
					return err
				}
				d.RoomChanged = d.RoomChanged || joined
				rt.snapshot(m)
			}
			rt.snapshot("run:" + run)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	q, err := BranchInbox(dir, to.Branch)
	if err != nil {
		return nil, err
	}
	rec, dup, err := q.Append(env)
	if err != nil {
		return nil, err
	}
	d.Inbox, d.InboxID, d.Duplicate, d.Record = q.Path, rec.ID(), dup, rec
	if fwdID == "" && !dup {
		// No caller id: the branch record's id was made here from a new
		// uuid, and its copy is <that id>@<branch> like every other.
		fwdID, freshID = mailbox.ForwardID(rec.ID(), to.Branch), true
	}
	forwardErr := parent
	runInbox := mailbox.NewInbox(filepath.Join(dir, RunInboxFile))
	if dup && parent == nil && fwdID != "" && !strings.Contains(env.ID, mailbox.CopySep) {
		// A retry of a message stored before copy ids had their own
		// namespace: its copy is under the old id.
		if legacy := mailbox.LegacyCopyID(env.ID, to.Branch); legacy != fwdID {
			if old, err := runInbox.Find(legacy); err == nil && old != nil {
				fwdID = legacy
			}
		}
	}
	err = mailbox.Update(filepath.Join(dir, WakeFile), func(tx *mailbox.Tx) error {
		var wakes []mailbox.Wake
		if !dup {
			meta := map[string]any{"type": env.Type, "inbox_id": rec.ID()}
			if env.From != "" {
				meta["from"] = env.From
			}
			wakes = append(wakes, mailbox.Wake{Actor: self, Reason: mailbox.WakeBranchMessage, StateDir: dir, Metadata: meta})
		}
		if parent == nil {
			// The copy keeps to = the branch: the run's consumer sees whom
			// it was for. Its id is a copy id (mailbox.ForwardID,
			// <id>@<branch>, or a room entry's copy's own): the run's inbox
			// holds the run's own messages too, and a caller may use one id
			// for a run message and a branch message, or for two branches,
			// while no caller id can take a copy's. The copy may be there
			// already (this message's earlier forward), so the inbox is
			// searched for it — unless the id was made here from a fresh
			// uuid and this is its first record.
			fwd := env
			fwd.ID = fwdID
			var cp mailbox.Record
			var fdup bool
			var err error
			if freshID && !dup {
				cp, err = runInbox.AppendNewIn(tx, fwd)
			} else {
				cp, fdup, err = runInbox.AppendIn(tx, fwd)
			}
			switch {
			case err != nil:
				forwardErr = fmt.Errorf("forward to run:%s: %w", run, err)
			case fdup && !dup:
				// Never said forwarded for a copy not written: a new
				// message whose copy id is taken (it cannot be, but by
				// a hand-written line).
				forwardErr = fmt.Errorf("forward to run:%s: its inbox holds another record with the copy's id %s; the message is in the branch inbox only", run, fwdID)
			case !fdup:
				wakes = append(wakes, mailbox.Wake{Actor: "run:" + run, Reason: mailbox.WakeRunMessage, StateDir: dir,
					Metadata: map[string]any{"inbox_id": cp.ID(), "type": env.Type, "to": env.To}})
			}
		}
		if len(wakes) == 0 {
			return nil
		}
		// Advisory: a doorbell that cannot be written (a full disk) does
		// not fail a message already stored in the branch inbox.
		mailbox.AppendWakes(tx, filepath.Join(dir, WakeFile), wakes...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	d.Finish(forwardErr)
	return d, nil
}

// deadDelivery dead-letters a message that expired before it was sent.
func deadDelivery(dir string, to mailbox.Address, env mailbox.Envelope, why string) (*Delivery, error) {
	rec, dup, err := DeadLetter(dir, env, why)
	if err != nil {
		return nil, err
	}
	return &Delivery{To: to.String(), Type: env.Type, Run: to.ID, Branch: to.Branch, StateDir: dir,
		InboxID: rec.ID, Duplicate: dup, DeadLetter: why}, nil
}

// Delivery is a branch message stored in its inbox (or dead-lettered)
// and the outcome of its forward to the parent run.
type Delivery struct {
	To, Type   string
	Run        string
	Branch     string
	StateDir   string
	Inbox      string // the branch inbox file
	InboxID    string
	Duplicate  bool
	Record     mailbox.Record
	DeadLetter string // why the message went to dead letters instead
	// RoomChanged: a member joined, so the timeline grew.
	RoomChanged bool

	result *BranchResult
}

// BranchResult is the branch route's normalised outcome.
type BranchResult struct {
	To            string   `json:"to"`
	Type          string   `json:"type"`
	Run           string   `json:"run"`
	Branch        string   `json:"branch"`
	StateDir      string   `json:"state_dir"`
	Inbox         string   `json:"inbox,omitempty"`
	InboxID       string   `json:"inbox_id,omitempty"`
	Duplicate     bool     `json:"duplicate,omitempty"`
	Sent          bool     `json:"sent"`
	Delivered     bool     `json:"delivered"`
	Persisted     bool     `json:"persisted"`
	Consumer      string   `json:"consumer"`
	Reason        string   `json:"reason"`
	DeliveryError string   `json:"delivery_error,omitempty"`
	DeadLetter    string   `json:"dead_letter,omitempty"`
	NextActions   []string `json:"next_actions,omitempty"`
}

// Outcome reasons and consumers of the branch and room routes.
const (
	ConsumerBranch     = "branch-mailbox"
	ConsumerRoom       = "room-timeline"
	ConsumerDead       = "dead-letters"
	ReasonForwarded    = "branch_persisted_forwarded"
	ReasonParentDown   = "branch_persisted_parent_unavailable"
	ReasonRoom         = "room_persisted"
	ReasonDeadLetter   = "dead_lettered"
	reasonNotForwarded = "parent run forward not attempted"
)

// Finish records the outcome of the forward to the parent run (nil:
// forwarded) and returns the normalised result: consumer
// branch-mailbox, persisted, sent and delivered when forwarded, reason
// branch_persisted_forwarded, or branch_persisted_parent_unavailable with
// the error as delivery_error (the message stays in the branch inbox).
// A dead-lettered message ignores forwardErr.
func (d *Delivery) Finish(forwardErr error) BranchResult {
	r := BranchResult{To: d.To, Type: d.Type, Run: d.Run, Branch: d.Branch, StateDir: d.StateDir, Inbox: d.Inbox,
		InboxID: d.InboxID, Duplicate: d.Duplicate, Persisted: true, Consumer: ConsumerBranch}
	switch {
	case d.DeadLetter != "":
		r.Consumer, r.Reason, r.DeadLetter = ConsumerDead, ReasonDeadLetter, d.DeadLetter
		r.Inbox = ""
		r.NextActions = []string{"inspect target=run:" + d.Run + " view=dead_letters"}
	case forwardErr == nil:
		r.Sent, r.Delivered, r.Reason = true, true, ReasonForwarded
	default:
		r.Reason, r.DeliveryError = ReasonParentDown, forwardErr.Error()
		r.NextActions = []string{"inspect target=" + d.To + " view=mailbox", "inspect target=run:" + d.Run + " view=status"}
	}
	d.result = &r
	return r
}

// Result is the result Finish gave; before Finish, the result of a
// forward that was not attempted.
func (d *Delivery) Result() BranchResult {
	if d.result != nil {
		return *d.result
	}
	return d.Finish(fmt.Errorf("%s", reasonNotForwarded))
}
