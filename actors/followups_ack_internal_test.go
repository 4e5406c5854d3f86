package actors

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// A client that acknowledges (wire.Request.Ack) gets its follow-ups
// delivered only once it says it passed them on: one that hangs up first
// (killed between the kernel's answer and its own output) leaves them
// queued for the next reader.
func TestFollowupsAnswerWaitsForTheAck(t *testing.T) {
	req := wire.Request{ID: 1, Op: "followups", Session: "s", Params: json.RawMessage(`{}`), Ack: true}
	answer := func(k *Kernel, client func(acks chan<- []string, gone chan<- struct{})) wire.Response {
		acks, gone := make(chan []string), make(chan struct{})
		var got wire.Response
		done := make(chan struct{})
		go func() {
			defer close(done)
			k.answerFollowups(req, func(r wire.Response) error { got = r; return nil }, gone, acks)
		}()
		go client(acks, gone) // it may block on an ack nobody takes
		<-done
		return got
	}
	queued := func(k *Kernel) int {
		t.Helper()
		c := k.claimFollowups("s", 100, claimHold)
		k.settleAnswer("s", ids(c.list), false)
		return len(c.list)
	}

	t.Run("hung up before the ack", func(t *testing.T) {
		k := bareKernel(t)
		queueFollowups(t, k, "s", 3)
		got := answer(k, func(_ chan<- []string, gone chan<- struct{}) { close(gone) })
		if !got.OK {
			t.Fatalf("answer: %+v", got.Error)
		}
		if n := queued(k); n != 3 {
			t.Errorf("%d follow-ups queued after the client hung up unacknowledged, want 3", n)
		}
	})
	t.Run("acknowledged", func(t *testing.T) {
		k := bareKernel(t)
		queueFollowups(t, k, "s", 3)
		answer(k, func(acks chan<- []string, gone chan<- struct{}) {
			acks <- []string{"f-00000", "f-00001", "f-00002"}
			close(gone)
		})
		if n := queued(k); n != 0 {
			t.Errorf("%d follow-ups queued after the ack, want 0", n)
		}
	})
	t.Run("a client that does not acknowledge", func(t *testing.T) {
		k := bareKernel(t)
		queueFollowups(t, k, "s", 2)
		req := req
		req.Ack = false
		k.answerFollowups(req, func(wire.Response) error { return nil }, nil, nil)
		if n := queued(k); n != 0 {
			t.Errorf("%d follow-ups queued after an answer written to a client without acks, want 0", n)
		}
	})
}

// A message follow-up's text shows at most followupBodyChars of the body
// and, when it cut, says how long the body is and where the whole is.
func TestOutboxFollowupSaysWhereTheBodyIs(t *testing.T) {
	m := &runs.Meta{Run: "r", Address: "run:r", StateDir: "/agent/runs/r", CreatedAt: time.Unix(1, 0)}
	long := strings.Repeat("é", 3000)
	f := outboxFollowup(m, mailbox.OutboxRecord{ID: "m1", Event: "review.completed", Summary: "done", Body: long}, 0)
	want := `… [3002 chars; whole: inspect target=run:r view=messages --json, or /agent/runs/r/outbox.jsonl id=m1]`
	if !strings.HasSuffix(f.Text, want) || utf8.RuneCountInString(f.Text) > 700 {
		t.Errorf("text (%d chars) does not end with %q: …%s", utf8.RuneCountInString(f.Text), want, f.Text[max(0, len(f.Text)-200):])
	}
	short := outboxFollowup(m, mailbox.OutboxRecord{ID: "m2", Event: "x.y", Summary: "s", Body: "hi"}, 1)
	if strings.Contains(short.Text, "whole:") {
		t.Errorf("a short body got a pointer: %s", short.Text)
	}
}
