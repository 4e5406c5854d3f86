package rooms

import (
	"fmt"
	"time"

	"github.com/pi-actors/pi-actors/mailbox"
)

// Posting is a room message appended to the timeline (or dead-lettered),
// with one branch delivery per metadata.recipients entry waiting for the
// kernel's forwards.
type Posting struct {
	Append     AppendResult
	To, Type   string
	Run        string
	StateDir   string
	Recipients []string
	Deliveries []*Delivery
	DeadLetter string
}

// RoomResult is the room route's normalised outcome: {room, message_count,
// roster_count, sent} plus consumer room-timeline, reason room_persisted,
// and for a multicast forwarded, multicast, multicast_count and the
// recipients' branch outcomes.
type RoomResult struct {
	To               string         `json:"to"`
	Type             string         `json:"type"`
	ID               string         `json:"id,omitempty"`
	Duplicate        bool           `json:"duplicate,omitempty"`
	Room             string         `json:"room"`
	Counts                          // message_count, roster_count
	StateDir         string         `json:"state_dir"`
	Sent             bool           `json:"sent"`
	Delivered        bool           `json:"delivered"`
	Persisted        bool           `json:"persisted"`
	Forwarded        bool           `json:"forwarded"`
	Consumer         string         `json:"consumer"`
	Reason           string         `json:"reason"`
	DeadLetter       string         `json:"dead_letter,omitempty"`
	Multicast        []string       `json:"multicast,omitempty"`
	MulticastCount   int            `json:"multicast_count,omitempty"`
	MulticastResults []BranchResult `json:"multicast_results,omitempty"`
	NextActions      []string       `json:"next_actions,omitempty"`
}

// Post is the room route, message to=room:<run>, after the kernel's
// session check. dir is the run's state directory; the run need not be
// running (parent is nil when it is, else why it is not). Everything is validated before anything is written:
//
//   - from is required and must be run:<run> or branch:<run>/<b>;
//   - metadata.recipients, when present, must be an array of
//     branch:<run>/<b> addresses of the same run.
//
// A message already past its deadline goes to the run's dead letters.
// Otherwise the envelope (metadata included) is appended to the timeline
// (see Append), and each recipient gets a branch delivery of a copy with
// to = the recipient and id = <entry id>.<branch> (SendBranch's steps 3
// to 5, the forward to the run's inbox included); Result gives the
// outcome. Retrying a Post with the same caller id completes
// deliveries a crash interrupted and writes nothing twice.
func Post(dir string, env mailbox.Envelope, parent error) (*Posting, error) {
	env, run, recips, err := checkPost(env)
	if err != nil {
		return nil, err
	}
	p := &Posting{To: env.To, Type: env.Type, Run: run, StateDir: dir}
	// A retry of a stored id is a duplicate even past its deadline (and
	// completes the deliveries a crash interrupted): only a new message
	// is dead-lettered.
	if expired, why := env.ExpiredAt(time.Now(), time.Now()); expired && !inTimeline(dir, env.ID) {
		rec, dup, err := DeadLetter(dir, env, why)
		if err != nil {
			return nil, err
		}
		p.DeadLetter, p.Append = why, AppendResult{Entry: Entry{Envelope: env}, Duplicate: dup, Room: Name}
		p.Append.Entry.ID = rec.ID
		return p, nil
	}
	if p.Append, err = Append(dir, env); err != nil {
		return nil, err
	}
	for _, r := range recips {
		cp := env
		cp.To, cp.ID = r.String(), mailbox.MulticastID(p.Append.Entry.ID, r.Branch)
		if p.Append.Duplicate {
			// A retry of a post stored before copy ids had their own
			// namespace: its copies are under the old id.
			if legacy := mailbox.LegacyCopyID(p.Append.Entry.ID, r.Branch); inBranch(dir, r, legacy) {
				cp.ID = legacy
			}
		}
		d, err := deliverBranch(dir, r, cp, env.From, parent, env.ID == "", cp.ID)
		if err != nil {
			return nil, fmt.Errorf("room:%s multicast to %s (the room entry %s is stored; retry with id=%s): %w", run, r, p.Append.Entry.ID, p.Append.Entry.ID, err)
		}
		p.Recipients = append(p.Recipients, r.String())
		p.Deliveries = append(p.Deliveries, d)
	}
	return p, nil
}

// CheckPost validates a room post as Post does, before anything is
// written: the room address, from (required, same run) and
// metadata.recipients. The kernel calls it before its own checks, so a
// bad post is refused without a trace.
func CheckPost(env mailbox.Envelope) error {
	_, _, _, err := checkPost(env)
	return err
}

func checkPost(env mailbox.Envelope) (mailbox.Envelope, string, []mailbox.Address, error) {
	env, run, err := roomEnvelope(env)
	if err != nil {
		return env, "", nil, err
	}
	if env.From == "" {
		return env, "", nil, &mailbox.EnvelopeError{Field: "from", Msg: fmt.Sprintf("message to %s requires from=<actor address>: from=run:%s or from=branch:%s/<branch>", env.To, run, run)}
	}
	if _, err := sameRun(env.From, run, "sender"); err != nil {
		return env, "", nil, &mailbox.EnvelopeError{Field: "from", Err: err,
			Msg: fmt.Sprintf("message to %s requires from=run:%s or from=branch:%s/<branch>; got %s", env.To, run, run, env.From)}
	}
	recips, err := recipients(env.Metadata, run)
	if err != nil {
		return env, "", nil, err
	}
	return env, run, recips, nil
}

// inTimeline reports whether a caller-chosen id is in the room's
// timeline (only lines holding the id's bytes are decoded).
func inTimeline(dir, id string) bool {
	if id == "" {
		return false
	}
	rec, err := mailbox.NewInbox(TimelinePath(dir)).Find(id)
	return err == nil && rec != nil
}

// recipients validates metadata.recipients: an array of same-run branch
// addresses (duplicates count once).
func recipients(meta map[string]any, run string) ([]mailbox.Address, error) {
	v, ok := meta["recipients"]
	if !ok || v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, &mailbox.EnvelopeError{Field: "metadata.recipients", Msg: "room multicast metadata.recipients must be an array of branch:" + run + "/<branch> addresses."}
	}
	var out []mailbox.Address
	seen := map[string]bool{}
	for _, e := range list {
		s, ok := e.(string)
		if !ok {
			return nil, &mailbox.EnvelopeError{Field: "metadata.recipients", Msg: fmt.Sprintf("room multicast recipients must be actor addresses (strings such as branch:%s/<branch>); got %v.", run, e)}
		}
		a, err := mailbox.Parse(s)
		if err != nil {
			return nil, &mailbox.EnvelopeError{Field: "metadata.recipients", Err: err, Msg: fmt.Sprintf("room multicast recipient: %v", err)}
		}
		if a.Kind != mailbox.KindBranch || a.ID != run {
			return nil, &mailbox.EnvelopeError{Field: "metadata.recipients", Msg: fmt.Sprintf("room multicast recipient must be branch:%s/<branch>; got %s.", run, s)}
		}
		if !seen[a.String()] {
			seen[a.String()] = true
			out = append(out, a)
		}
	}
	return out, nil
}

// Result is the normalised outcome.
func (p *Posting) Result() RoomResult {
	r := RoomResult{To: p.To, Type: p.Type, ID: p.Append.Entry.ID, Duplicate: p.Append.Duplicate, Room: Name, Counts: p.Append.Counts,
		StateDir: p.StateDir, Persisted: true, Consumer: ConsumerRoom, Reason: ReasonRoom}
	if p.DeadLetter != "" {
		r.Consumer, r.Reason, r.DeadLetter = ConsumerDead, ReasonDeadLetter, p.DeadLetter
		r.NextActions = []string{"inspect target=run:" + p.Run + " view=dead_letters"}
		return r
	}
	r.Sent, r.Delivered = true, true
	if len(p.Deliveries) > 0 {
		r.Forwarded, r.Multicast, r.MulticastCount = true, p.Recipients, len(p.Deliveries)
		for _, d := range p.Deliveries {
			r.MulticastResults = append(r.MulticastResults, d.Result())
		}
	}
	return r
}
