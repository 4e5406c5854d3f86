package piext

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pi-actors/pi-actors/extensions/pi/pitest"
)

// TestRealPiFollowupAcknowledged: a run the model spawned ends while pi
// waits for the model; the extension's watcher (watch acks=stdin) hands
// its follow-up to pi, which sends it to the model, and only then
// acknowledges it — the kernel's session queue marks it handled.
func TestRealPiFollowupAcknowledged(t *testing.T) {
	r := newRealPi(t,
		call("spawn", map[string]any{"as": "run:quick", "template": "echo quick-out"}).On("^run something$"),
		// The run ends while the model "thinks".
		pitest.Step{Text: "waiting for it", DelayMS: 1500}.On(`address=run:quick`),
		pitest.Text("seen it").On(`run:quick completed`),
	)
	r.run("run something")
	var sawFollowup bool
	for _, req := range r.model.Requests() {
		for _, m := range req.Messages {
			if strings.Contains(m.Text, "run:quick completed") {
				sawFollowup = true
			}
		}
	}
	if !sawFollowup {
		t.Fatalf("the model never saw the follow-up:\n%s\nlog:\n%s", r.dump(), r.extLog())
	}
	files, _ := filepath.Glob(filepath.Join(r.agent, "tmp", "pi-actors", "sessions", "*.jsonl"))
	handled := regexp.MustCompile(`"run":"quick".*"status":"handled"|"status":"handled".*"run":"quick"`)
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, `"kind":"transition"`) && handled.MatchString(line) {
				return
			}
		}
	}
	var all strings.Builder
	for _, f := range files {
		b, _ := os.ReadFile(f)
		all.WriteString(f + ":\n" + string(b))
	}
	t.Fatalf("the follow-up pi took is not marked handled in the session queue:\n%s", all.String())
}

// TestRealPiCommandDoneWaitsForTheNextTurn: the end of one of a run's
// commands (command.done) that comes while the agent works costs no model
// call of its own: it is added to the session once the agent is idle (pi
// would otherwise queue it as a follow-up and run a turn for it).
func TestRealPiCommandDoneWaitsForTheNextTurn(t *testing.T) {
	r := newRealPi(t,
		call("spawn", map[string]any{"as": "run:par", "template": map[string]any{"parallel": true, "template": []string{"sleep 0.3", "sleep 8"}}}).On("^go$"),
		// The first leaf ends while the model "thinks".
		pitest.Step{Text: "waiting for it", DelayMS: 3000}.On(`address=run:par`),
		pitest.Step{Text: "EXTRA TURN", Times: -1},
	)
	r.run("go")
	if reqs := r.model.Requests(); len(reqs) != 2 {
		t.Errorf("%d model calls, want 2 (the command's end cost one of its own):\n%s", len(reqs), r.dump())
	}
	files, _ := filepath.Glob(filepath.Join(r.agent, "sessions", "*", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("session files %v", files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"customType":"pi-actors-run-message"`) || !strings.Contains(string(b), "sleep 0.3") {
		t.Errorf("the command's end is not in the session:\n%s", b)
	}
	r.cli("message", "to=run:par", "type=control.kill")
}

// TestRealPiHeldCommandEndsBounded: 400 ends of runs' commands come while
// the agent works (the model "thinks"), then a run's end that starts a
// turn: pi sends the model one message with all of them, within the bound
// (52 KiB), a run's many cut to its first and last 3 with a line saying
// how many were left out, and a first line naming the file that holds the
// whole text. pi-actors is the fake CLI (testdata/fake-pi-actors.mjs,
// $FAKE_HELD_*): the kernel queues no follow-ups that fast.
func TestRealPiHeldCommandEndsBounded(t *testing.T) {
	r := newRealPi(t,
		pitest.Step{Text: "working on it", DelayMS: 6000}.On("^go$"),
		pitest.Text("seen them").On(`Command step-`),
	)
	fake, state := t.TempDir(), t.TempDir()
	copyFile(t, filepath.Join("testdata", "fake-pi-actors.mjs"), filepath.Join(fake, "pi-actors"))
	if err := os.Chmod(filepath.Join(fake, "pi-actors"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.run("go",
		"PATH="+fake+string(os.PathListSeparator)+filepath.Dir(r.node)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"FAKE_LOG="+filepath.Join(state, "calls.jsonl"), "FAKE_STATE="+state,
		// 200 of run:busy, 200 of runs of their own, 300 bytes of padding each (~140 KB in all).
		"FAKE_HELD_COUNT=400", "FAKE_HELD_BUSY=200", "FAKE_HELD_PAD=300", "FAKE_HELD_DELAY_MS=1500")

	reqs := r.model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2:\n%s\nlog:\n%s", len(reqs), firstN(r.dump(), 4000), r.extLog())
	}
	var composed string
	steps := 0
	for _, m := range reqs[1].Messages {
		if strings.Contains(m.Text, "Command step-") {
			steps++
		}
		if strings.Contains(m.Text, "follow-ups came while you worked") {
			composed = m.Text
		}
	}
	if steps != 1 {
		t.Fatalf("the model did not read the commands' ends in one message (%d messages name one):\n%s", steps, firstN(r.dump(), 4000))
	}
	for _, m := range reqs[1].Messages {
		if len(m.Text) > 52*1024 {
			t.Errorf("the model read %d bytes of follow-ups in one message, want at most 52 KiB", len(m.Text))
		}
	}
	m := regexp.MustCompile(`^\[pi-actors: 401 follow-ups came while you worked; (\d+) of them are left out or cut below \(a run with many keeps its first 3 and last 3\)\. All 401 are in (\S+) \(\d+ bytes; pi's read takes offset and limit\)\.\]\n`).FindStringSubmatch(composed)
	if m == nil {
		t.Fatalf("the message does not start with the line naming the file:\n%s", firstN(composed, 600))
	}
	if !strings.HasPrefix(m[2], filepath.Join(state, "agent", "tmp", "pi-actors", "followups-")) {
		t.Errorf("the file %s is not under the agent root's tmp/pi-actors", m[2])
	}
	whole, err := os.ReadFile(m[2])
	if err != nil {
		t.Fatal(err)
	}
	for i := range 400 {
		if !strings.Contains(string(whole), fmt.Sprintf("Command step-%03d completed", i)) {
			t.Fatalf("step %d is not in the file", i)
		}
	}
	for _, want := range []string{"Command step-000 ", "Command step-002 ", "[… 195 more follow-ups of run:busy left out here]", "Command step-199 ", "Command step-399 ", "more follow-ups cut here"} {
		if !strings.Contains(composed, want) {
			t.Errorf("the model did not read %q", want)
		}
	}
	if !strings.HasSuffix(strings.TrimSpace(composed), "run:busy completed successfully.") {
		t.Errorf("the run's end is not last:\n…%s", lastN(composed, 300))
	}
	t.Logf("the model read %d bytes of 401 follow-ups (%d bytes in %s; %s left out or cut)", len(composed), len(whole), m[2], m[1])
}
