package piext

import (
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/extensions/pi/pitest"
)

const payKnowledge = "Webhooks are idempotent: verify the Stripe signature before anything else"

func read(path string) pitest.Step { return pitest.Call("read", map[string]string{"path": path}) }

// TestRealPiPathKnowledge: a conversation that reads src/pay/webhook.ts
// gets the atom owning src/pay/** exactly once — appended to the first
// read's result, not to the second read of the same file, and named (not
// repeated) for another file the atom owns; a write gets the atom owning
// the file it creates.
func TestRealPiPathKnowledge(t *testing.T) {
	r := newRealPi(t,
		read("src/pay/webhook.ts").On("^fix the webhook$"),
		read("src/pay/webhook.ts").On("export const webhook"),
		read("src/pay/refund.ts").On("export const webhook"),
		pitest.Call("write", map[string]string{"path": "src/ledger/book.ts", "content": "export const book = 1;\n"}).On("export const refund"),
		pitest.Text("done").On("(?i)wrote|written|success"),
	)
	r.file("src/pay/webhook.ts", "export const webhook = 1;\n")
	r.file("src/pay/refund.ts", "export const refund = 1;\n")
	r.cli("knowledge", "init")
	r.atom("Payments", `["src/pay/**"]`, payKnowledge)
	r.atom("Elsewhere", `["src/other/**"]`, "NOT-FOR-PAY")
	r.atom("Ledger", `["src/ledger/*.ts"]`, "LEDGER-KNOWLEDGE: append-only")

	out := r.run("fix the webhook")
	reqs := r.model.Requests()
	if len(reqs) != 5 {
		t.Fatalf("pi sent %d requests, want 5:\n%s", len(reqs), r.dump())
	}
	// Request 2 carries the first read's result: the file, then the knowledge.
	first := reqs[1].Last()
	if !strings.Contains(first, "export const webhook") || !strings.Contains(first, "[pi-actors knowledge for src/pay/webhook.ts]") ||
		!strings.Contains(first, `atom "Payments"`) || strings.Count(first, payKnowledge) != 1 {
		t.Fatalf("the first read's result lacks the atom:\n%s", first)
	}
	if strings.Contains(reqs[2].Last(), "pi-actors knowledge") {
		t.Fatalf("the second read of the same file got knowledge again:\n%s", reqs[2].Last())
	}
	if third := reqs[3].Last(); !strings.Contains(third, `[pi-actors knowledge for src/pay/refund.ts] owned by atom "Payments": shown earlier`) || strings.Contains(third, payKnowledge) {
		t.Fatalf("another file of the atom:\n%s", third)
	}
	// Over the whole conversation pi sent, the atom's knowledge is there once.
	if n := r.last().Count(payKnowledge); n != 1 {
		t.Fatalf("the atom's knowledge appears %d times in the last request, want 1:\n%s", n, r.dump())
	}
	if strings.Contains(r.dump(), "NOT-FOR-PAY") {
		t.Fatal("an atom owning other paths was added")
	}
	// A write gets the knowledge of the atom owning the new file.
	if w := reqs[4].Last(); !strings.Contains(w, "[pi-actors knowledge for src/ledger/book.ts]") || !strings.Contains(w, "LEDGER-KNOWLEDGE") {
		t.Fatalf("the write's result lacks the Ledger atom:\n%s", w)
	}
	if names, _ := toolResults(out); strings.Join(names, ",") != "read,read,read,write" {
		t.Fatalf("tool calls: %v", names)
	}
	if log := r.extLog(); !strings.Contains(log, "path knowledge for src/pay/webhook.ts: 1 entities") {
		t.Fatalf("log:\n%s", log)
	}
}

// TestRealPiPathKnowledgeEmptyStores: no store, then a store without
// atoms: nothing is added, nothing is logged.
func TestRealPiPathKnowledgeEmptyStores(t *testing.T) {
	r := newRealPi(t, read("src/pay/webhook.ts").On("^one$"), pitest.Text("ok").On("export const webhook"))
	r.file("src/pay/webhook.ts", "export const webhook = 1;\n")
	r.run("one")
	if strings.Contains(r.dump(), "pi-actors knowledge") {
		t.Fatalf("knowledge added without a store:\n%s", r.dump())
	}
	if log := r.extLog(); strings.Contains(log, "path knowledge") {
		t.Fatalf("log:\n%s", log)
	}
	r.cli("knowledge", "init")
	// The kernel opens the store on its first query (as the atoms of the
	// other tests do); a loaded machine may still let a lookup pass its
	// 200 ms, which is logged as a skip and proves nothing: try again.
	r.cli("knowledge", "query_graph", "operation=context", `paths:=["src/pay/webhook.ts"]`)
	const skip = "path knowledge for src/pay/webhook.ts skipped: no answer within 200 ms"
	for try := 1; ; try++ {
		before := len(r.extLog())
		prompt := fmt.Sprintf("two-%d", try)
		r.script(read("src/pay/webhook.ts").On("^"+prompt+"$"), pitest.Text("ok").On("export const webhook"))
		r.run(prompt)
		if strings.Contains(r.dump(), "pi-actors knowledge") {
			t.Fatalf("knowledge added from an empty store:\n%s", r.dump())
		}
		log := r.extLog()[before:]
		if strings.Contains(log, skip) && try < 3 {
			t.Logf("try %d: the lookup was not answered within 200 ms (a loaded machine); again", try)
			continue
		}
		if strings.Contains(log, "path knowledge") {
			t.Fatalf("log:\n%s", log)
		}
		return
	}
}

// TestRealPiSlowStoreSkipped: with the kernel stopped (SIGSTOP), a read
// still answers at once — the knowledge lookup is given up after 200 ms,
// the skip is logged, and the next read after the kernel is back gets the
// knowledge.
func TestRealPiSlowStoreSkipped(t *testing.T) {
	r := newRealPi(t, read("src/pay/webhook.ts").On("^slow$"), pitest.Text("ok").On("export const webhook"))
	r.file("src/pay/webhook.ts", "export const webhook = 1;\n")
	r.cli("knowledge", "init")
	r.atom("Payments", `["src/pay/**"]`, payKnowledge)
	pid := r.kernelPid()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT) })
	r.run("slow")
	syscall.Kill(pid, syscall.SIGCONT)
	if strings.Contains(r.dump(), payKnowledge) {
		t.Fatalf("knowledge added although the store did not answer:\n%s", r.dump())
	}
	if log := r.extLog(); !strings.Contains(log, "path knowledge for src/pay/webhook.ts skipped: no answer within 200 ms") {
		t.Fatalf("the skip is not logged:\n%s", log)
	}
	// pi waited for the read at most the 200 ms cap (plus the read itself):
	// the session file's timestamps of the tool call and its result.
	wait := r.toolWait(t, "read")
	t.Logf("the read answered %s after it was called", wait)
	if wait > 900*time.Millisecond {
		t.Fatalf("the read took %s with a stopped kernel: the 200 ms cap did not hold", wait)
	}
	r.script(read("src/pay/webhook.ts").On("^again$"), pitest.Text("ok").On("export const webhook"))
	r.run("again")
	if n := r.last().Count(payKnowledge); n != 1 {
		t.Fatalf("after the kernel is back the knowledge is there %d times, want 1:\n%s", n, r.dump())
	}
}

// TestRealPiRecallAndSummary: with [pi] recall and record_summary on, the
// prompt gets the top recall hits before the agent starts, and the
// session's final answer becomes a history node a later recall finds.
func TestRealPiRecallAndSummary(t *testing.T) {
	r := newRealPi(t, pitest.Text("FINAL-ANSWER: the refund path now retries twice").On("refund retries"))
	r.cli("knowledge", "init")
	r.cli("knowledge", "node_add", "domain=history", "type=decision", "name=refund retries", "content=RECALLED-DECISION: refunds retry twice, then page")
	r.toml("[pi]\nrecall = true\nrecord_summary = true\n")
	r.run("how do refund retries work?")
	first := r.model.Requests()[0]
	if !strings.Contains(first.Last(), "[pi-actors recall for this prompt") || first.Count("RECALLED-DECISION") != 1 {
		t.Fatalf("the prompt did not get the recall hits:\n%s", r.dump())
	}
	out := r.cli("knowledge", "recall", "query=refund path retries twice", "domain=history", "type=session")
	if !strings.Contains(out, "FINAL-ANSWER: the refund path now retries twice") || !strings.Contains(out, "pi session") {
		t.Fatalf("the session summary was not recorded:\n%s\nlog:\n%s", out, r.extLog())
	}
	if log := r.extLog(); !strings.Contains(log, "session summary recorded: node ") {
		t.Fatalf("log:\n%s", log)
	}
}

// TestRealPiSummaryOfContinuedSession: a session continued by a second
// pi (pi --continue) keeps the name of its first prompt, and its new
// summary supersedes the one the first pi recorded (one current node per
// session, not one per pi process).
func TestRealPiSummaryOfContinuedSession(t *testing.T) {
	r := newRealPi(t, pitest.Text("ANSWER-ONE").On("^FIRST-PROMPT migrate the refunds$"))
	r.cli("knowledge", "init")
	r.toml("[pi]\nrecord_summary = true\n")
	r.run("FIRST-PROMPT migrate the refunds")
	r.script(pitest.Text("ANSWER-TWO").On("^SECOND-PROMPT and the docs$"))
	cmd := exec.Command(r.node, pitest.Args(r.modules, "SECOND-PROMPT and the docs", "--continue")...)
	cmd.Dir, cmd.Env = r.work, r.env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pi --continue: %v\n%s", err, out)
	}
	log := r.extLog()
	m := regexp.MustCompile(`session summary recorded: node (\S+) \(\w+ store\) superseding (\S+)`).FindStringSubmatch(log)
	if m == nil {
		t.Fatalf("the continued session's summary did not supersede the first:\n%s", log)
	}
	second := r.cli("knowledge", "node_get", "id="+m[1], "--json")
	first := r.cli("knowledge", "node_get", "id="+m[2], "--json")
	if !strings.Contains(second, "ANSWER-TWO") || !strings.Contains(second, "FIRST-PROMPT migrate the refunds") || strings.Contains(second, "SECOND-PROMPT") {
		t.Errorf("the second summary is not named after the session's first prompt or lacks its answer:\n%s", second)
	}
	if !strings.Contains(first, "ANSWER-ONE") || !strings.Contains(first, m[1]) {
		t.Errorf("the first summary is not marked superseded by the second:\n%s", first)
	}
}

// TestRealPiRecallAndSummaryOffByDefault: without the settings, neither
// happens.
func TestRealPiRecallAndSummaryOffByDefault(t *testing.T) {
	r := newRealPi(t, pitest.Text("FINAL-ANSWER-OFF").On("refund retries"))
	r.cli("knowledge", "init")
	r.cli("knowledge", "node_add", "domain=history", "type=decision", "name=refund retries", "content=RECALLED-DECISION: refunds retry twice")
	r.run("how do refund retries work?")
	if strings.Contains(r.dump(), "RECALLED-DECISION") {
		t.Fatalf("recall is on by default:\n%s", r.dump())
	}
	if out := r.cli("knowledge", "recall", "query=FINAL-ANSWER-OFF", "domain=history", "type=session"); strings.Contains(out, "FINAL-ANSWER-OFF") {
		t.Fatalf("a summary was recorded by default:\n%s", out)
	}
}
