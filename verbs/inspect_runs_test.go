package verbs

import (
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
