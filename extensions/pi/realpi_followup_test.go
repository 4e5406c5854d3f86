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
