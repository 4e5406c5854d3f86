package piext

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/extensions/pi/pitest"
)

// TestRealPiLongResults: tool results longer than their bounds, through
// real pi. The model reads what matters and where the rest is — a recipe
// output cut to its tail ends with the notice naming the file with the
// whole output; an inspect tail of a megabyte keeps its head and its end
// (the newest lines, the stderr section) with a marker naming the file
// with the whole result and a narrower call — and the session file stays
// small (the details are bounded too).
func TestRealPiLongResults(t *testing.T) {
	r := newRealPi(t,
		call("utility-jsonl-tail", map[string]any{"file": "big.jsonl", "lines": 100000}).On("^long results$"),
		call("inspect", map[string]any{"target": "run:big", "view": "tail", "lines": 100000}).On(`file-line-019999`),
		pitest.Text("done").On(`run=big`),
	)
	var big strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&big, "file-line-%06d %s\n", i, strings.Repeat("j", 80))
	}
	r.file("big.jsonl", big.String())
	// A run with 2 MB of stdout, then a line on stderr (sh: the test's own command, not pi-actors').
	r.cli("spawn", "as=run:big", "template=sh -c 'seq -f run-line-%06g-"+strings.Repeat("x", 80)+" 0 19999; echo STDERR-MARK the reason >&2'")
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(r.cli("inspect", "target=run:big", "view=status"), "status=done") {
		if time.Now().After(deadline) {
			t.Fatalf("run:big did not end:\n%s", r.cli("inspect", "target=run:big", "view=status"))
		}
		time.Sleep(50 * time.Millisecond)
	}

	r.run("long results")
	reqs := r.model.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3:\n%s", len(reqs), r.dump())
	}
	result := func(req pitest.Request) string {
		m := req.Messages[len(req.Messages)-1]
		if m.Role != "tool" {
			t.Fatalf("request %d: the last message is %s, not a tool result", req.N, m.Role)
		}
		return m.Text
	}

	// The recipe's output: its tail, then the notice with the saved file.
	tail := result(reqs[1])
	m := regexp.MustCompile(`\n\[Output truncated: \d+ of 20000 lines \([0-9.]+KB of [0-9.]+MB\)\. Full output saved to: (\S+)\]$`).FindStringSubmatch(tail)
	if m == nil {
		t.Errorf("utility-jsonl-tail: the text the model read does not end with the notice (%d bytes):\n…%s", len(tail), lastN(tail, 400))
	} else if whole, err := os.ReadFile(m[1]); err != nil || string(whole) != big.String() {
		t.Errorf("the notice's file %s does not hold the whole output (%d bytes, %v)", m[1], len(whole), err)
	}
	if !strings.Contains(tail, "file-line-019999 ") {
		t.Errorf("utility-jsonl-tail: the newest line is missing")
	}

	// inspect's tail: the head, the end, one marker saying where the whole is.
	text := result(reqs[2])
	if len(text) > 53*1024 {
		t.Errorf("inspect: the model read %d bytes", len(text))
	}
	for _, want := range []string{"run=big status=done", "--- stdout.log (", "run-line-019999-", "--- stderr.log", "STDERR-MARK the reason"} {
		if !strings.Contains(text, want) {
			t.Errorf("inspect view=tail: the model did not read %q:\n%s\n…\n%s", want, firstN(text, 300), lastN(text, 600))
		}
	}
	if strings.Contains(text, "details") {
		t.Errorf("inspect: the model is pointed at details it cannot read:\n%s", markerLine(text))
	}
	mk := regexp.MustCompile(`\n\[… \d+ bytes \(\d+ lines\) cut here: .*The whole result \(\d+ lines\) is in (\S+) \(pi's read takes offset and limit\); lines=(\d+) returns about what fits\.\]\n`).FindStringSubmatch(text)
	if mk == nil {
		t.Errorf("inspect: no marker naming the whole result and a narrower call:\n%s", markerLine(text))
	} else if whole, err := os.ReadFile(mk[1]); err != nil || !strings.Contains(string(whole), "run-line-010000-") || !strings.HasSuffix(strings.TrimSpace(string(whole)), "STDERR-MARK the reason") {
		t.Errorf("the marker's file %s does not hold the whole result (%d bytes, %v)", mk[1], len(whole), err)
	}

	// The session file: the two results and bounded details, not a megabyte.
	files, _ := filepath.Glob(filepath.Join(r.agent, "sessions", "*", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("session files %v", files)
	}
	fi, err := os.Stat(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > 256<<10 {
		t.Errorf("the session file is %d bytes, want at most 256 KiB", fi.Size())
	}
	t.Logf("session file %d bytes; the marker: %s", fi.Size(), markerLine(text))
}

// TestRealPiBrokenConfig: a pi-actors.toml whose [pi] tools is malformed
// leaves the default tools offered (the same as with no config at all)
// and the log says why, in print mode; a pi-actors that is not there
// leaves none, and the log says why.
func TestRealPiBrokenConfig(t *testing.T) {
	r := newRealPi(t, pitest.Text("ok").On("^no config$"))
	r.run("no config")
	defaults := ours(r.last().Tools)
	if !slices.Contains(defaults, "inspect") || !slices.Contains(defaults, "spawn") {
		t.Fatalf("with no config pi offered %v", defaults)
	}

	r.toml("[pi]\ntools = [\"default\", \"a b\"]\n")
	r.script(pitest.Text("ok").On("^broken$"))
	r.run("broken")
	if got := ours(r.last().Tools); !slices.Equal(got, defaults) {
		t.Errorf("with a malformed [pi] tools pi offered %v, want the default set %v", got, defaults)
	}
	if log := r.extLog(); !strings.Contains(log, `pi.tools entry "a b" is not a tool name or glob`) || !strings.Contains(log, "(using the defaults)") {
		t.Errorf("the log does not say why the tools are the defaults:\n%s", log)
	}

	os.Remove(filepath.Join(r.agent, "pi-actors.toml"))
	r.script(pitest.Text("ok").On("^missing$"))
	r.run("missing", "PI_ACTORS_BIN="+filepath.Join(r.work, "no-such-pi-actors"))
	if got := ours(r.last().Tools); len(got) != 0 {
		t.Errorf("without pi-actors pi offered %v", got)
	}
	if log := r.extLog(); !strings.Contains(log, "pi-actors tools unavailable: pi-actors not found ("+filepath.Join(r.work, "no-such-pi-actors")+")") {
		t.Errorf("the log does not say why there are no tools:\n%s", log)
	}
}

func firstN(s string, n int) string { return s[:min(n, len(s))] }

func lastN(s string, n int) string { return s[max(0, len(s)-n):] }

// markerLine is the line of text that says what was cut, else its end.
func markerLine(text string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "[") && (strings.Contains(l, "cut") || strings.Contains(l, "truncated")) {
			return l
		}
	}
	return "…" + lastN(text, 300)
}

// TestRealPiFailedCalls: what the model reads of a failed tool call,
// through real pi. A recipe that says why it failed on stdout only (as
// test runners do) — the model reads that line; one whose stdout is long —
// the model reads its tail and the file with the whole output, not a
// pointer at details it cannot see; a spawn whose long inline template
// does not parse — the failure is bounded, not the template echoed whole.
func TestRealPiFailedCalls(t *testing.T) {
	big := "echo '" + strings.Repeat("0123456789abcdef\n", 12000) // ~200 KB, an unterminated quote
	r := newRealPi(t,
		call("stdoutfail", map[string]any{}).On("^fail please$"),
		call("noisyfail", map[string]any{}).On("REASON-42"),
		call("spawn", map[string]any{"template": big}).On("exit 3"),
		pitest.Text("ok").On("unterminated"),
	)
	if err := os.MkdirAll(filepath.Join(r.agent, "recipes"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"stdoutfail": `{"description":"fails, reason on stdout","template":"sh -c 'echo FAIL: TestRefund REA\"SON-\"42; exit 1'"}`,
		"noisyfail":  `{"description":"fails noisily","template":"sh -c 'seq -f STDOUT-LINE-%06g 1 20000; echo LAST-STDOUT-LINE; exit 3'"}`,
	} {
		if err := os.WriteFile(filepath.Join(r.agent, "recipes", name+".json"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := r.run("fail please")
	_, texts := toolResults(out)
	if len(texts) != 3 {
		t.Fatalf("tool results %d, want 3:\n%s", len(texts), r.dump())
	}
	if !strings.Contains(texts[0], "REASON-42") || !strings.Contains(texts[0], "command_failed: exit 1") {
		t.Errorf("the failed call's reason (on stdout) did not reach the model:\n%s", texts[0])
	}
	noisy := texts[1]
	m := regexp.MustCompile(`Full output saved to: (\S+)\]`).FindStringSubmatch(noisy)
	if !strings.Contains(noisy, "LAST-STDOUT-LINE") || m == nil || len(noisy) > 53*1024 {
		t.Errorf("a long failed call: the model read %d bytes without its stdout's end or the file with the whole:\n%s", len(noisy), lastN(noisy, 600))
	} else if whole, err := os.ReadFile(m[1]); err != nil || !strings.Contains(string(whole), "STDOUT-LINE-000001\n") {
		t.Errorf("the notice's file %s does not hold the whole stdout (%v)", m[1], err)
	}
	if spawn := texts[2]; len(spawn) > 16*1024 || !strings.Contains(spawn, "unterminated") {
		t.Errorf("the failed spawn's text is %d bytes (want a bounded error naming the unterminated quote): %.300q", len(spawn), spawn)
	}
}
