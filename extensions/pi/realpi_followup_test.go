package piext

import (
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
