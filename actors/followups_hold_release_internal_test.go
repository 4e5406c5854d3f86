package actors

import (
	"encoding/json"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/verbs/wire"
)

// A view=followups whose queue pass fails (the rewrite that marks a
// malformed follow-up failed cannot be written: a full disk) lets go of
// the follow-ups it took: they stayed held in memory, so no watcher, no
// cluster push and no later view=followups took them (until a kernel
// restart).
func TestFollowupsFailedAnswerLetsGo(t *testing.T) {
	k := bareKernel(t)
	queueFollowups(t, k, "s", 3)
	// An object that is not a follow-up (body of the wrong type): the pass
	// marks it failed, so it rewrites the file.
	f, err := os.OpenFile(k.sessionFile("s"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"id":"bad-1","type":"run.followup","status":"queued","body":"not an object"}` + "\n")
	f.Close()

	// The rewrite fails: files are capped at 64 bytes (EFBIG, as ENOSPC).
	var old syscall.Rlimit
	syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old)
	lim := syscall.Rlimit{Cur: 64, Max: old.Max}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Fatal(err)
	}
	defer syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old)
	var got wire.Response
	req := wire.Request{ID: 1, Op: "followups", Session: "s", Params: json.RawMessage(`{}`)}
	k.answerFollowups(req, func(r wire.Response) error { got = r; return nil }, nil, nil)
	syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old)
	t.Logf("answer: ok=%v err=%+v", got.OK, got.Error)
	if got.Error == nil {
		t.Skip("the rewrite did not fail")
	}
	t.Logf("answering after the failed answer: %v", k.answering.now(k.sessionFile("s")))

	// The disk has room again: the 3 follow-ups are still queued in the
	// file, and the next reader gets them: another view, then (once that
	// one's answer failed too) a watcher.
	again := k.claimFollowups("s", 100, claimHold)
	if len(again.list) != 3 {
		t.Fatalf("a second view=followups got %d, want the 3 still queued", len(again.list))
	}
	ids := make([]string, len(again.list))
	for i, f := range again.list {
		ids[i] = f.ID
	}
	k.settleAnswer("s", ids, false)
	if list, _ := k.take("s", 100); len(list) != 3 {
		t.Errorf("a watcher's take got %d follow-ups, want the 3 still queued", len(list))
	}
}

// A view=followups right after a reader that failed to print its answer
// gets the follow-ups that reader lets go of a moment later (when the
// kernel sees its connection close): under load the next reader came
// first and got none (followups_unprinted_stay_queued failed so).
func TestFollowupsWaitForAFailedReader(t *testing.T) {
	k := bareKernel(t)
	queueFollowups(t, k, "s", 2)
	first := k.claimFollowups("s", 100, claimHold)
	if len(first.list) != 2 {
		t.Fatalf("first reader took %d, want 2", len(first.list))
	}
	ids := []string{first.list[0].ID, first.list[1].ID}
	go func() {
		time.Sleep(60 * time.Millisecond)
		k.settleAnswer("s", ids, false) // its stdout failed: not delivered
	}()
	a, err := k.claimAnswer(wire.Request{Op: "followups", Session: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(a.Followups.Followups); got != 2 {
		t.Errorf("the next reader got %d follow-ups, want the 2 the failed one let go", got)
	}
}
