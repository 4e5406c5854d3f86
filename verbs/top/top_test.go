package top

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/pi-actors/pi-actors/verbs"
)

var update = flag.Bool("update", false, "rewrite the golden frames in testdata/")

// clock is the fixed "now" of the golden frames.
var clock = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// fixture is a first frame: a service with two children (one stalled,
// one of another session), and two ended runs.
func fixture() *verbs.EventsFrame {
	dir := func(id string) string { return "/agent/tmp/pi-actors/runs/" + id }
	return &verbs.EventsFrame{Snapshot: true, TS: clock, Kernel: &verbs.KernelFigures{Pid: 42, LiveRuns: 3, CPUPercent: 0.4, RSSBytes: 19 << 20, Streams: 1},
		Runs: []verbs.RunRow{
			{Run: "web", Status: "running", Owner: "s1", Command: "python3 -m http.server 8000", Pid: 100,
				CreatedAt: clock.Add(-62 * time.Minute), Restarts: 2, CPUPercent: 3.4, RSSBytes: 25 << 20, LastLine: "GET /index.html 200", LastStream: "stdout", StateDir: dir("web")},
			{Run: "worker-1", Status: "running", Owner: "s1", Parent: "web", Recipe: "subagent-worker", Pid: 101,
				CreatedAt: clock.Add(-20 * time.Minute), CPUPercent: 0, RSSBytes: 12 << 20, LastLine: "step 3/10", Stalled: true, StateDir: dir("worker-1")},
			{Run: "worker-2", Status: "backoff", Owner: "s2", Parent: "web", Recipe: "subagent-worker", Pid: 102,
				CreatedAt: clock.Add(-19 * time.Minute), Restarts: 5, RSSBytes: 3 << 20, LastLine: "connection refused", LastStream: "stderr", StateDir: dir("worker-2")},
			{Run: "build", Status: "done", Owner: "s1", Command: "make all", CreatedAt: clock.Add(-7 * time.Minute), EndedAt: clock.Add(-5 * time.Minute),
				LastLine: "ok", StateDir: dir("build")},
			{Run: "lint", Status: "failed", Reason: "", Owner: "s2", Command: "golangci-lint run", CreatedAt: clock.Add(-3 * time.Minute),
				EndedAt: clock.Add(-2 * time.Minute), LastLine: "3 issues", StateDir: dir("lint")},
		}}
}

// newTest is a model at 80×24 holding the fixture, without colour.
func newTest(t *testing.T, session string) *Model {
	t.Helper()
	m := New(&verbs.Env{AgentDir: t.TempDir(), Session: session}, 80, 24, false)
	m.now = func() time.Time { return clock }
	m.Update(frameMsg{f: fixture()})
	return m
}

// readable is a monochrome frame as a golden file holds it: the selected
// line starts with ▶ (reverse video on a terminal), other escapes go.
func readable(frame string) string {
	lines := strings.Split(frame, "\n")
	for i, l := range lines {
		sel := strings.HasPrefix(l, "\x1b[7m")
		l = strings.TrimRight(ansi.Strip(l), " ")
		if sel {
			l = "▶" + l
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n")
}

// keyMsg is the key press a terminal sends for a key name.
func keyMsg(k string) tea.KeyPressMsg {
	special := map[string]rune{"enter": tea.KeyEnter, "esc": tea.KeyEscape, "tab": tea.KeyTab, "down": tea.KeyDown,
		"up": tea.KeyUp, "backspace": tea.KeyBackspace, "pgdown": tea.KeyPgDown}
	if c, ok := special[k]; ok {
		return tea.KeyPressMsg{Code: c}
	}
	if k == "ctrl+c" {
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	}
	r := []rune(k)
	return tea.KeyPressMsg{Code: r[0], Text: k}
}

// press sends keys; the commands they return are not run (golden frames
// feed data themselves), except that a quit is reported.
func press(m *Model, keys ...string) (quit bool) {
	for _, k := range keys {
		_, cmd := m.Update(keyMsg(k))
		if cmd != nil && k != "enter" && k != "f" && k != "l" && k != "tab" && k != "y" && k != "c" {
			if _, ok := cmd().(tea.QuitMsg); ok {
				quit = true
			}
		}
	}
	return quit
}

// golden compares a frame with testdata/<name>.golden (-update writes it).
func golden(t *testing.T, name, frame string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, []byte(frame+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./verbs/top -run %s -update writes it)", err, t.Name())
	}
	if got := frame + "\n"; got != string(want) {
		t.Errorf("frame %s differs:\n--- got\n%s--- want\n%s", name, got, want)
	}
	for i, l := range strings.Split(frame, "\n") {
		if w := len([]rune(strings.TrimPrefix(l, "▶"))); w > 80 {
			t.Errorf("frame %s line %d is %d wide (> 80): %q", name, i+1, w, l)
		}
	}
}

func TestGoldenFrames(t *testing.T) {
	cases := []struct {
		name    string
		session string
		keys    []string
		feed    []tea.Msg
	}{
		{name: "list"},
		{name: "move-down", keys: []string{"j", "down"}},
		{name: "detail", keys: []string{"j", "enter"}, feed: []tea.Msg{detailMsg{dir: "/agent/tmp/pi-actors/runs/worker-1", d: &detail{
			facts:  "run=worker-1 status=running recipe=subagent-worker pid=101 elapsed=20m0s stalled=true next=inspect_target=run:worker-1_view=tail",
			stdout: []string{"step 1/10", "step 2/10", "step 3/10"}, stderr: []string{"warning: slow"},
			events: []string{`{"event":"run.start","pid":101}`}, mailbox: []string{"id=m1 status=queued type=task.assign from=coordinator to=run:worker-1"}}}}},
		{name: "detail-room", keys: []string{"j", "enter"}, feed: []tea.Msg{detailMsg{dir: "/agent/tmp/pi-actors/runs/worker-1", d: &detail{
			facts:  "run=worker-1 status=running pid=101",
			stdout: []string{"step 1/10"},
			room: []string{"room=main messages=3 roster=2 last_from=branch:worker-1/w1 last_type=task.result",
				"ts=2026-11-25T07:00:00Z from=branch:worker-1/w1 to=room:worker-1 type=task.result summary=done"}}}}},
		{name: "filter", keys: []string{"/", "w", "o", "r", "enter"}},
		{name: "filter-typing", keys: []string{"/", "s", "t", "a", "l", "x", "backspace"}},
		{name: "scope-mine", session: "s1"},
		{name: "scope-all", session: "s1", keys: []string{"s"}},
		{name: "kill-confirm", keys: []string{"j", "K"}},
		{name: "kill-cancelled", keys: []string{"j", "K", "n"}},
		{name: "restart-done", keys: []string{"r", "y"}, feed: []tea.Msg{actionMsg{note: "restart: to=run:web type=control.restart message=sent delivered=true"}}},
		{name: "logs", keys: []string{"l"}, feed: []tea.Msg{logsMsg{dir: "/agent/tmp/pi-actors/runs/web", l: &logView{lines: []string{"GET / 200", "GET /index.html 200"}}}}},
		{name: "help", keys: []string{"?"}},
		{name: "followups", session: "s1", keys: []string{"f"}, feed: []tea.Msg{followupsMsg{list: []verbs.QueuedFollowup{
			{Status: "handled", Followup: verbs.Followup{Run: "build", Summary: "run:build done code=0", TS: clock.Add(-5 * time.Minute)}},
			{Status: "queued", Followup: verbs.Followup{Run: "lint", Summary: "run:lint failed code=1", TS: clock.Add(-2 * time.Minute)}}}}}},
		{name: "no-session-scope", keys: []string{"s"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newTest(t, c.session)
			press(m, c.keys...)
			for _, msg := range c.feed {
				m.Update(msg)
			}
			golden(t, c.name, readable(m.Render()))
		})
	}
}

// The tree follows the stream: a new child run appears under its parent,
// a gone run leaves, and the selection stays on its run.
func TestStreamUpdates(t *testing.T) {
	m := newTest(t, "")
	press(m, "j", "j") // worker-2
	m.Update(frameMsg{f: &verbs.EventsFrame{Runs: []verbs.RunRow{{Run: "worker-0", Status: "running", Parent: "web", CreatedAt: clock.Add(-30 * time.Minute), StateDir: "/r/worker-0"}},
		Gone: []string{"/agent/tmp/pi-actors/runs/build"}}})
	if r := m.selected(); r == nil || r.Run != "worker-2" {
		t.Fatalf("selection moved to %+v", r)
	}
	frame := m.Render()
	if strings.Contains(frame, "build") {
		t.Error("a gone run is still listed")
	}
	if !strings.Contains(frame, "├─worker-0") {
		t.Errorf("the new child is not under its parent:\n%s", frame)
	}
}

// q and ctrl+c quit; q in the log view goes back.
func TestQuit(t *testing.T) {
	m := newTest(t, "s1")
	if !press(m, "q") {
		t.Error("q did not quit")
	}
	m = newTest(t, "s1")
	m.Update(keyMsg("l"))
	if press(m, "q") || m.mode != modeList {
		t.Error("q in the log view did not go back to the list")
	}
	if !press(m, "ctrl+c") {
		t.Error("ctrl+c did not quit")
	}
}

// Colour: status words coloured; with NO_COLOR (colour false) no colour
// at all (reverse video marks the selection).
func TestColour(t *testing.T) {
	for _, colour := range []bool{true, false} {
		m := New(&verbs.Env{AgentDir: t.TempDir()}, 80, 24, colour)
		m.now = func() time.Time { return clock }
		m.Update(frameMsg{f: fixture()})
		frame := m.Render()
		hasColour := strings.Contains(frame, "\x1b[31m") || strings.Contains(frame, "\x1b[33m") || strings.Contains(frame, "38;")
		if hasColour != colour {
			t.Errorf("colour=%v: coloured=%v\n%q", colour, hasColour, frame)
		}
		if !strings.Contains(frame, "\x1b[7m") {
			t.Errorf("colour=%v: no reverse-video selection", colour)
		}
	}
}

// A running run with a readiness probe shows ready, starting or unready
// as its status (stalled still wins), and its detail title says for how
// long; an ended run shows its status.
func TestReadinessStatusWord(t *testing.T) {
	since := clock.Add(-2*time.Minute - 3*time.Second)
	for _, c := range []struct {
		row  verbs.RunRow
		word string
	}{
		{verbs.RunRow{Status: "running", ReadyState: "ready", ReadySince: since}, "ready"},
		{verbs.RunRow{Status: "running", ReadyState: "waiting", ReadySince: since}, "starting"},
		{verbs.RunRow{Status: "running", ReadyState: "timed_out", ReadySince: since}, "unready"},
		{verbs.RunRow{Status: "running", ReadyState: "ready", Stalled: true}, "stalled"},
		{verbs.RunRow{Status: "running"}, "running"},
		{verbs.RunRow{Status: "failed", ReadyState: "ready"}, "failed"},
	} {
		if w := statusWord(&c.row); w != c.word {
			t.Errorf("%+v: %q, want %q", c.row, w, c.word)
		}
	}
	m := New(&verbs.Env{AgentDir: t.TempDir()}, 100, 30, false)
	m.now = func() time.Time { return clock }
	rows := fixture()
	rows.Runs[0].ReadyState, rows.Runs[0].ReadySince = "ready", since
	m.Update(frameMsg{f: rows})
	if title := m.detailRows(10)[0]; !strings.Contains(title, "· ready 2m03s") {
		t.Errorf("detail title %q, want the readiness and its age", title)
	}
}

// A run's output never reaches the terminal raw: its last line in the
// list and the lines of the detail and log panes show control characters
// as \xNN (a title escape and a screen clear came through as written).
func TestRunOutputShownVisible(t *testing.T) {
	m := newTest(t, "")
	f := fixture()
	f.Runs[0].LastLine = "\x1b]0;TITLE\x07\x1b[2Jcleared"
	m.Update(frameMsg{f: f})
	frame := m.Render()
	if strings.Contains(frame, "\x1b]0;") || strings.Contains(frame, "\x1b[2J") {
		t.Fatalf("the frame holds the run's escapes raw:\n%q", frame)
	}
	if !strings.Contains(frame, `\x1b]0;TITLE\x07`) {
		t.Fatalf("the run's last line is not shown visible:\n%s", readable(frame))
	}
	got := strs([]any{"a\x1b[31mred", 7})
	if len(got) != 1 || got[0] != `a\x1b[31mred` {
		t.Fatalf("strs = %q", got)
	}
}
