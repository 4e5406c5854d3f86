package rooms

import (
	"fmt"

	"github.com/pi-actors/pi-actors/mailbox"
)

// TypeJoin is the type of the entries that add a member to a roster.
const TypeJoin = "actor.join"

// Summaries of the join entries the runtime writes.
const (
	RunJoinSummary    = "Run joined default room"
	BranchJoinSummary = "Branch joined default room"
)

// ensure appends an actor.join entry from address when the roster does
// not have it yet, and reports whether it did.
func (rt *roomTx) ensure(address string, body map[string]any, summary string) (bool, error) {
	if rt.roster.Find(address) >= 0 {
		return false, nil
	}
	env := mailbox.Envelope{To: "room:" + rt.run, Type: TypeJoin, From: address, Body: body, Summary: summary}
	if _, _, err := rt.append(env); err != nil {
		return false, err
	}
	return true, nil
}

// EnsureDefaultRoom puts the run in its own room: when run:<run> is not
// in the roster, it appends actor.join from run:<run> (body {role: run,
// status: present}, summary "Run joined default room") and writes the
// run's communication snapshot. Calling it again only returns the
// counts. The kernel calls it after every spawn, so a fresh run has one
// message and one member.
func EnsureDefaultRoom(dir, run string) (Counts, error) {
	c, _, err := EnsureMember(dir, run, "run:"+run, map[string]any{"role": "run", "status": "present"}, RunJoinSummary)
	return c, err
}

// EnsureMember adds address (run:<run> or a branch of the run) to the
// run's room with an actor.join entry carrying body and summary, unless
// it is already a member (whatever its status: a member that left stays
// left). It writes the member's and the run's communication snapshots
// when due and reports whether it joined the member.
func EnsureMember(dir, run, address string, body map[string]any, summary string) (Counts, bool, error) {
	a, err := sameRun(address, run, "member")
	if err != nil {
		return Counts{}, false, err
	}
	var joined bool
	c, err := withRoom(dir, run, func(rt *roomTx) error {
		var err error
		if joined, err = rt.ensure(a.String(), body, summary); err != nil {
			return err
		}
		if a.Kind == mailbox.KindBranch {
			rt.snapshot(a.String())
		}
		rt.snapshot("run:" + run)
		return nil
	})
	if err != nil {
		return Counts{}, false, fmt.Errorf("join %s to room:%s: %w", address, run, err)
	}
	return c, joined, nil
}

// sameRun parses address and checks that it is run:<run> or
// branch:<run>/<b>; what names the address in the error.
func sameRun(address, run, what string) (mailbox.Address, error) {
	a, err := mailbox.Parse(address)
	if err == nil && (a.Kind == mailbox.KindRun || a.Kind == mailbox.KindBranch) && a.ID == run {
		return a, nil
	}
	return mailbox.Address{}, &mailbox.EnvelopeError{Field: what, Err: err,
		Msg: fmt.Sprintf("room:%s %s must be run:%s or branch:%s/<branch>; got %s", run, what, run, run, address)}
}

// branchJoinBody is the body of a branch's automatic join.
func branchJoinBody(run string) map[string]any {
	return map[string]any{"parent": "run:" + run, "role": "branch", "status": "present"}
}
