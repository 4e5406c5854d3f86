package cluster

import (
	"testing"

	"github.com/pi-actors/pi-actors/actors"
)

// A follow-up pushed to its session's home node names this node in the
// kernel's own words (a transition's summary and text, a message's
// "run:<id>:" lead) and nowhere in what the run wrote (a message's
// summary and body travel as written).
func TestQualifyFollowupText(t *testing.T) {
	tr := actors.Followup{Kind: "transition", Run: "w", Summary: "run:w failed (exit 3)", Text: "run:w failed (exit 3)\nnext: inspect target=run:w view=status"}
	qualifyFollowupText(&tr, "gpu-1")
	if tr.Summary != "run:w@gpu-1 failed (exit 3)" || tr.Text != "run:w@gpu-1 failed (exit 3)\nnext: inspect target=run:w@gpu-1 view=status" {
		t.Errorf("transition: %q / %q", tr.Summary, tr.Text)
	}
	msg := actors.Followup{Kind: "message", Run: "w", Summary: "reply to run:w soon", Text: "run:w: reply to run:w soon\nBody: {\"to\":\"run:w\"}"}
	qualifyFollowupText(&msg, "gpu-1")
	if msg.Summary != "reply to run:w soon" || msg.Text != "run:w@gpu-1: reply to run:w soon\nBody: {\"to\":\"run:w\"}" {
		t.Errorf("message: %q / %q", msg.Summary, msg.Text)
	}
	// The kernel's pointer to a cut body names the node too.
	cut := actors.Followup{Kind: "message", Run: "w", Text: "run:w: big\nBody: \"xx…\" [3000 chars; whole: inspect target=run:w view=messages --json, or /a/runs/w/outbox.jsonl id=m1]"}
	qualifyFollowupText(&cut, "gpu-1")
	if cut.Text != "run:w@gpu-1: big\nBody: \"xx…\" [3000 chars; whole: inspect target=run:w@gpu-1 view=messages --json, or /a/runs/w/outbox.jsonl id=m1]" {
		t.Errorf("cut message: %q", cut.Text)
	}
}
