package verbs

import (
	"fmt"
	"testing"
)

// The short verbs' runs: every CLI word, a JSON string or array; all
// stands alone; a malformed id is refused before anything is sent.
func TestShortRunsDecode(t *testing.T) {
	for _, verb := range []string{"stop", "kill", "restart", "rm"} {
		spec := Find(verb)
		req, err := spec.DecodeCLI([]string{"web", "run:worker"}, nil)
		if err != nil {
			t.Fatalf("%s: %v", verb, err)
		}
		if err := req.Validate(); err != nil {
			t.Fatalf("%s: %v", verb, err)
		}
		for raw, want := range map[string]string{`{"run":"web"}`: "[web]", `{"run":["a","b"]}`: "[a b]", `{"run":["all"]}`: "[all]"} {
			req, err := spec.DecodeJSON([]byte(raw))
			if err != nil {
				t.Fatalf("%s %s: %v", verb, raw, err)
			}
			if got := fmt.Sprint(runsOf(req)); got != want || req.Validate() != nil {
				t.Errorf("%s %s: %s %v, want %s", verb, raw, got, req.Validate(), want)
			}
		}
		for raw, exit := range map[string]int{
			`{"run":{"a":1}}`:           ExitDataErr,
			`{"run":[1]}`:               ExitDataErr,
			`{"run":[]}`:                ExitUsage,
			`{}`:                        ExitUsage,
			`{"run":["all","web"]}`:     ExitUsage,
			`{"run":["web","a/b"]}`:     ExitDataErr,
			`{"run":["web","run:"]}`:    ExitUsage,
			`{"run":["web"],"x":true}`:  ExitUsage,
			`{"run":"web","prune":"x"}`: ExitDataErr,
		} {
			if verb != "rm" && raw == `{"run":"web","prune":"x"}` {
				continue
			}
			req, err := spec.DecodeJSON([]byte(raw))
			if err == nil {
				err = req.Validate()
			}
			if e := Classify(err); err == nil || e.Exit != exit {
				t.Errorf("%s %s: %v, want exit %d", verb, raw, err, exit)
			}
		}
	}
	// One word stays one word for the verbs that take one.
	if _, err := Find("logs").DecodeCLI([]string{"a", "b"}, nil); err == nil {
		t.Error("logs took two words")
	}
}

func runsOf(req Request) RunList {
	switch r := req.(type) {
	case *RunRef:
		return r.Run
	case *Remove:
		return r.Run
	}
	return nil
}

// Several runs report one line each, the list as the result, and the
// first failure's code as the exit code with the list as its details.
func TestShortOutcome(t *testing.T) {
	ok := ShortResult{Run: "web", OK: true, Result: &Delivery{To: "run:web", Type: "control.kill", Stopped: true}}
	bad := ShortResult{Run: "nope", Error: &Error{Exit: ExitNoInput, Code: "not_found", Message: "run not found: run:nope\nmore"}}
	busy := ShortResult{Run: "db", Error: &Error{Exit: ExitTempFail, Code: "busy", Message: "busy"}}
	out := shortOutcome(&Env{Session: "s1"}, "control.kill", []ShortResult{ok, bad, busy})
	want := "to=run:web type=control.kill message=sent stopped=true\n" +
		"to=run:nope type=control.kill error=not_found exit=66: run not found: run:nope\n" +
		"to=run:db type=control.kill error=busy exit=75: busy"
	if out.Text != want {
		t.Errorf("text:\n%s\nwant:\n%s", out.Text, want)
	}
	if out.Exit != ExitNoInput || out.Fail == nil || out.Fail.Code != "not_found" || len(out.Fail.Details.([]ShortResult)) != 3 {
		t.Errorf("exit %d fail %+v", out.Exit, out.Fail)
	}
	if out := shortOutcome(&Env{}, "control.kill", []ShortResult{ok}); out.Exit != 0 || out.Fail != nil || len(out.Result.([]ShortResult)) != 1 {
		t.Errorf("all ok: %+v", out)
	}
	if out := shortOutcome(&Env{}, "control.prune", nil); out.Text != "(no ended runs in any session: nothing to do for all)" || out.Exit != 0 {
		t.Errorf("none: %+v", out)
	}
}
