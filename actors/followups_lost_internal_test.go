package actors

import (
	"testing"
	"time"
)

// Follow-ups a kernel claimed for a watcher and never handed over (the
// kernel died) are taken over by the next kernel at once, not after
// redeliverAfter: only one kernel serves an agent root, so its claims are
// the only live ones.
func TestClaimOfAGoneKernelTakenOverAtOnce(t *testing.T) {
	dead := bareKernel(t)
	dead.started = time.Now().Add(-time.Minute)
	queueFollowups(t, dead, "s", 5)
	if got, _ := dead.take("s", 5); len(got) != 5 {
		t.Fatalf("claimed %d, want 5", len(got))
	}
	next := &Kernel{tmp: dead.tmp, log: dead.log, started: time.Now()}
	got, _ := next.take("s", 10)
	if len(got) != 5 || got[0].ID != "f-00000" {
		t.Fatalf("the next kernel took %d of the dead one's claims, want all 5 in order: %v", len(got), got)
	}
	// Its own fresh claims it leaves to the delivery under way.
	if again, _ := next.take("s", 10); len(again) != 0 {
		t.Fatalf("took its own fresh claims again: %v", again)
	}
}

// What an answer is being written with (claimHold) is taken by no other
// reader meanwhile; unwritten, it is all still there for the next one;
// written, it is delivered.
func TestAnswerHoldsItsFollowups(t *testing.T) {
	k := bareKernel(t)
	queueFollowups(t, k, "s", 10)
	first := k.claimFollowups("s", 3, claimHold)
	if len(first.list) != 3 || first.more != 7 {
		t.Fatalf("took %d (%d more), want 3 (7 more)", len(first.list), first.more)
	}
	if rest, _ := k.take("s", 100); len(rest) != 7 || rest[0].ID != "f-00003" {
		t.Fatalf("a watcher took %d while an answer held 3, want the other 7: %v", len(rest), rest)
	}
	if none := k.claimFollowups("s", 100, claimDurable); len(none.list) != 0 {
		t.Fatalf("took %v: every follow-up is held or claimed", ids(none.list))
	}
	k.settleAnswer("s", ids(first.list), false) // the answer was not written
	again := k.claimFollowups("s", 100, claimHold)
	if len(again.list) != 3 || again.list[0].ID != "f-00000" {
		t.Fatalf("after an unwritten answer the next reader got %v, want f-00000..f-00002", ids(again.list))
	}
	k.settleAnswer("s", ids(again.list), true)
	if left := k.claimFollowups("s", 100, claimHold); len(left.list) != 0 {
		t.Fatalf("delivered follow-ups taken again: %v", ids(left.list))
	}
}
