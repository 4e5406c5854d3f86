package rooms

import (
	"fmt"
	"time"

	"github.com/pi-actors/pi-actors/mailbox"
)

// SendBranch is the branch route, message to=branch:<run>/<b>, after the
// kernel's session check. dir is the run's state directory. In order:
//
//  1. env.From, when set, must be run:<run> or branch:<run>/<b'> —
//     checked before anything is written;
//  2. a message already past its deadline goes to the run's dead letters
//     (the Delivery says so and has nothing to forward);
//  3. the recipient branch, and a branch of the same run that sends, join
//     the room if they are not members (actor.join, BranchJoinSummary),
//     and their communication snapshots, then the run's, are written when
//     due;
//  4. the envelope is appended to branches/<b>/inbox.jsonl (a caller id
//     already there is a duplicate: nothing is written) and
//     branch.message is rung.
//
// The kernel then forwards Delivery.Forward to the run's own inbox and
// calls Delivery.Finish with the outcome.
func SendBranch(dir string, env mailbox.Envelope) (*Delivery, error) {
	env, err := env.Normalized()
	if err != nil {
		return nil, err
	}
	to, err := branchAddress(env.To)
	if err != nil {
		return nil, err
	}
	if env.From != "" {
		if _, err := sameRun(env.From, to.ID, "sender"); err != nil {
			return nil, &mailbox.EnvelopeError{Field: "from", Err: err,
				Msg: fmt.Sprintf("message to %s requires from=run:%s or branch:%s/<branch>; got %s", env.To, to.ID, to.ID, env.From)}
		}
	}
	if expired, why := env.ExpiredAt(time.Now(), time.Now()); expired {
		return deadDelivery(dir, to, env, why)
	}
	d, err := deliverBranch(dir, to, env, env.From)
	if err != nil {
		return nil, fmt.Errorf("deliver to %s: %w", env.To, err)
	}
	return d, nil
}

// deliverBranch does steps 3 and 4 of SendBranch for an envelope whose
// To is the branch.
func deliverBranch(dir string, to mailbox.Address, env mailbox.Envelope, sender string) (*Delivery, error) {
	run, self := to.ID, to.String()
	from, _ := mailbox.Parse(sender)
	fromBranch := from.Kind == mailbox.KindBranch && from.ID == run && from.String() != self
	members := []string{self}
	if fromBranch {
		members = append(members, from.String())
	}
	var err error
	if !roomCurrent(dir, run, members, append(members[:len(members):len(members)], "run:"+run)) {
		_, err = withRoom(dir, run, func(rt *roomTx) error {
			if _, err := rt.ensure(self, branchJoinBody(run), BranchJoinSummary); err != nil {
				return err
			}
			rt.snapshot(self)
			if fromBranch {
				if _, err := rt.ensure(from.String(), branchJoinBody(run), BranchJoinSummary); err != nil {
					return err
				}
				rt.snapshot(from.String())
			}
			rt.snapshot("run:" + run)
			return nil
		})
	}
	if err != nil {
		return nil, err
	}
	q, err := BranchInbox(dir, to.Branch)
	if err != nil {
		return nil, err
	}
	rec, dup, err := q.Append(env)
	if err != nil {
		return nil, err
	}
	d := &Delivery{To: self, Type: env.Type, Run: run, Branch: to.Branch, StateDir: dir, Inbox: q.Path,
		InboxID: rec.ID(), Duplicate: dup, Record: rec}
	fwd := env
	d.Forward = &fwd
	if !dup {
		meta := map[string]any{"type": env.Type, "inbox_id": rec.ID()}
		if env.From != "" {
			meta["from"] = env.From
		}
		if err := wakeBranch(dir, to, mailbox.WakeBranchMessage, meta); err != nil {
			return nil, err
		}
	}
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

// Delivery is a branch message stored in its inbox (or dead-lettered),
// waiting for the kernel's forward to the parent run.
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
	// Forward is the copy for the run's own inbox (to = the branch); nil
	// when there is nothing to forward.
	Forward *mailbox.Envelope

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

// Finish records the outcome of the kernel's forward to the parent run
// (nil: forwarded) and returns the normalised result: consumer
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
