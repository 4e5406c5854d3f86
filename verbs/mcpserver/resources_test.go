package mcpserver

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pi-actors/pi-actors/verbs"
)

func TestParseRunURI(t *testing.T) {
	for uri, want := range map[string]string{
		"pi-actors://run/web/status":      "web status",
		"pi-actors://run/a.b-c_1/tail":    "a.b-c_1 tail",
		"pi-actors://run/web/events":      "",
		"pi-actors://run/web":             "",
		"pi-actors://run/../etc/status":   "",
		"pi-actors://run//status":         "",
		"pi-actors://room/web/status":     "",
		"pi-actors://run/a/b/status":      "",
		"pi-actors://run/web/status/tail": "",
	} {
		id, view, ok := parseRunURI(uri)
		got := ""
		if ok {
			got = id + " " + view
		}
		if got != want {
			t.Errorf("%s: %q, want %q", uri, got, want)
		}
	}
}

// The list follows the frames: the session's and unowned runs only, new
// ones added, pruned ones removed, at most maxListedEnded ended runs (the
// newest).
func TestRunResourcesApply(t *testing.T) {
	s, err := New(Options{Env: &verbs.Env{AgentDir: t.TempDir(), Session: "me", Cwd: "/"}})
	if err != nil {
		t.Fatal(err)
	}
	// No kernel: the test feeds the frames, and no follow-up pump starts.
	s.runs.once.Do(func() { close(s.runs.ready) })
	s.pump.Do(func() {})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, ct := mcp.NewInMemoryTransports()
	go s.Run(ctx, st)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	listed := func() map[string]bool {
		out := map[string]bool{}
		for r, err := range cs.Resources(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			out[r.URI] = true
		}
		return out
	}
	now := time.Now()
	row := func(id, owner, status string, ended time.Duration) verbs.RunRow {
		r := verbs.RunRow{Run: id, Owner: owner, Status: status, StateDir: "/runs/" + id, Command: "sleep 1"}
		if ended > 0 {
			r.EndedAt = now.Add(-ended)
		}
		return r
	}
	frame := &verbs.EventsFrame{Snapshot: true, Runs: []verbs.RunRow{row("mine", "me", "running", 0), row("loose", "", "running", 0), row("theirs", "other", "running", 0)}}
	for i := range maxListedEnded + 5 {
		frame.Runs = append(frame.Runs, row(fmt.Sprintf("old%03d", i), "me", "done", time.Duration(i+1)*time.Minute))
	}
	s.runs.apply(ctx, frame)
	got := listed()
	if len(got) != 2*(2+maxListedEnded) || !got["pi-actors://run/mine/status"] || !got["pi-actors://run/loose/tail"] || got["pi-actors://run/theirs/status"] {
		t.Fatalf("listed %d: mine=%v loose=%v theirs=%v", len(got), got["pi-actors://run/mine/status"], got["pi-actors://run/loose/tail"], got["pi-actors://run/theirs/status"])
	}
	if !got["pi-actors://run/old000/status"] || got["pi-actors://run/old104/status"] {
		t.Errorf("the newest ended runs are not the ones kept")
	}
	s.runs.apply(ctx, &verbs.EventsFrame{Runs: []verbs.RunRow{row("new", "me", "running", 0)}, Gone: []string{"/runs/loose"}})
	got = listed()
	if !got["pi-actors://run/new/tail"] || got["pi-actors://run/loose/status"] || got["pi-actors://run/loose/tail"] {
		t.Errorf("after a new run and a pruned one: new=%v loose=%v", got["pi-actors://run/new/tail"], got["pi-actors://run/loose/status"])
	}
}
