package verbs

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/runs"
)

func TestFormatElapsedAndBytes(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Second:                          "0s",
		340 * time.Millisecond:                "340ms",
		1500 * time.Millisecond:               "2s",
		83*time.Second + 400*time.Millisecond: "1m23s",
		26 * time.Hour:                        "26h0m0s",
	} {
		if got := formatElapsed(d); got != want {
			t.Errorf("formatElapsed(%v) = %q, want %q", d, got, want)
		}
		if _, err := time.ParseDuration(formatElapsed(d)); err != nil {
			t.Errorf("formatElapsed(%v) does not parse back: %v", d, err)
		}
	}
	for n, want := range map[uint64]string{0: "0B", 1023: "1023B", 1024: "1.0KiB", 27746304: "26.5MiB", 3 << 30: "3.0GiB"} {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestCutLine(t *testing.T) {
	if got := cutLine("short", 10); got != "short" {
		t.Errorf("short line changed: %q", got)
	}
	if got := cutLine(strings.Repeat("é", 12), 10); got != strings.Repeat("é", 10)+"…[+2 chars]" {
		t.Errorf("long line: %q", got)
	}
}

func TestMailboxTypes(t *testing.T) {
	mb := map[string]any{
		"accepts": []any{"task.review", map[string]any{"type": " control.kill "}, map[string]any{"summary": "no type"}, 3},
		"emits":   []any{map[string]any{"type": "task done"}},
	}
	if got := mailboxTypes(mb, "accepts"); !reflect.DeepEqual(got, []string{"task.review", "control.kill"}) {
		t.Errorf("accepts: %q", got)
	}
	if got := mailboxTypes(mb, "emits"); !reflect.DeepEqual(got, []string{"task_done"}) {
		t.Errorf("emits: %q", got)
	}
	if got := mailboxTypes(nil, "accepts"); got != nil {
		t.Errorf("no mailbox: %q", got)
	}
}

func TestInboxLine(t *testing.T) {
	rec := mailbox.Record{"id": "m1", "type": "task.review", "from": "run:lead", "to": "run:w", "status": "claimed",
		"queued_at": "2026-01-01T00:00:00Z", "claimed_at": "2026-01-01T00:00:01Z"}
	want := "id=m1 status=claimed type=task.review from=run:lead to=run:w queued_at=2026-01-01T00:00:00Z claimed_at=2026-01-01T00:00:01Z"
	if got := inboxLine(rec); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if got := inboxLine(mailbox.Record{"body": "legacy"}); got != "id= status=queued type= from= to=" {
		t.Errorf("legacy record: %q", got)
	}
}

func TestRunStatusNext(t *testing.T) {
	info := func(status string, arts map[string]any) *runs.Info {
		return &runs.Info{Status: status, Meta: &runs.Meta{Run: "r", Artifacts: arts}}
	}
	cases := []struct {
		in      *runs.Info
		stalled bool
		want    []string
	}{
		{info(runs.StatusRunning, nil), false, []string{"inspect target=run:r view=tail", "inspect target=run:r view=messages", "message to=run:r type=<channel.action>"}},
		{info(runs.StatusRunning, nil), true, []string{"inspect target=run:r view=tail", "inspect target=run:r view=events", "message to=run:r type=control.kill"}},
		{info(runs.StatusDone, map[string]any{"a": "/x"}), false, []string{"inspect target=run:r view=artifacts", "inspect target=run:r view=messages", "inspect target=run:r view=tail"}},
		{info(runs.StatusDone, nil), false, []string{"inspect target=run:r view=messages", "inspect target=run:r view=tail"}},
		{info(runs.StatusFailed, nil), false, []string{"inspect target=run:r view=tail lines=80", "inspect target=run:r view=events", "inspect target=run:r view=messages"}},
		{info(runs.StatusArchived, nil), false, []string{"inspect target=run:r view=files", "inspect target=run:r view=messages"}},
	}
	for _, c := range cases {
		if got := runStatusNext(c.in, c.stalled); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s stalled=%v: %q", c.in.Status, c.stalled, got)
		}
	}
}

func TestOrderRuns(t *testing.T) {
	at := func(s int) time.Time { return time.Unix(int64(s), 0) }
	mk := func(run, status string, created time.Time, progress *runs.Progress) *runs.Info {
		return &runs.Info{Status: status, Progress: progress, Meta: &runs.Meta{Run: run, CreatedAt: created}}
	}
	list := []*runs.Info{
		mk("done-new", runs.StatusDone, at(50), nil),
		mk("live-old", runs.StatusRunning, at(1), nil),
		mk("killed-late", runs.StatusKilled, at(2), &runs.Progress{UpdatedAt: at(60)}),
		mk("done-old", runs.StatusDone, at(10), nil),
		mk("live-new", runs.StatusRunning, at(5), nil),
	}
	var got []string
	for _, in := range orderRuns(list) {
		got = append(got, in.Meta.Run)
	}
	want := []string{"live-new", "live-old", "killed-late", "done-new", "done-old"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("order %q, want %q", got, want)
	}
}

// Legacy outbox records (no id) are named <run>:<line index>, blank lines
// counted — the index the kernel's follow-up ids use (the mailbox
// Follower's line numbers), and the line the bounded --json points at.
func TestRunMessagesViewLegacyIDsCountBlankLines(t *testing.T) {
	dir := t.TempDir()
	in := &runs.Info{Dir: runs.Dir(dir), Meta: &runs.Meta{Run: "r"}, Status: runs.StatusRunning}
	path := filepath.Join(dir, runs.OutboxFile)
	data := `{"event":"a.one"}` + "\n\n  \n" + `{"event":"a.two","id":"own"}` + "\n\n" + `{"event":"a.three","metadata":{"requires_response":true}}` + "\n"
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runMessagesView(in, 40)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Messages []struct{ ID string }
	}
	if err := json.Unmarshal(mustJSON(t, out.details), &got); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range got.Messages {
		ids = append(ids, m.ID)
	}
	f := &mailbox.Follower{Path: path}
	lines, _, err := f.Next()
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, l := range lines {
		rec, err := mailbox.ParseOutbox(l.Raw, "r", l.N-1)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, rec.ID)
	}
	if !reflect.DeepEqual(ids, want) || !reflect.DeepEqual(ids, []string{"r:0", "own", "r:5"}) {
		t.Errorf("view=messages ids %v, follower ids %v, want [r:0 own r:5]", ids, want)
	}
	// triage's attention list names it the same way
	if att := attentionMessages("r", runs.Dir(dir)); len(att) != 1 || att[0].ID != "r:5" {
		t.Errorf("attention: %+v, want one r:5", att)
	}
}
