package verbs

import (
	"encoding/json"
	"strings"
	"testing"
)

// The answers below are what a node's kernel gave for run q1 (inspect,
// logs, mailbox as a routed verb runs them there): the run printed
// "literal: run:q1 room:q1 branch:q1/w" and its $PI_ACTORS_ADDRESS, and
// its inbox holds messages whose bodies name run:q1. A caller on another
// node must get every byte of that content as the node has it, and the
// answer's own addresses (address, to, from, next actions, hints) naming
// run:q1@b — in --json and in the text alike.

// routedCase is one routed answer: the node's text and result, and what
// the caller must see.
type routedCase struct {
	name       string
	text       string
	result     string
	wantText   string
	wantFields map[string]string // dotted path → value in the caller's result
	keep       []string          // content: byte for byte in the caller's result
}

var routedCases = []routedCase{{
	name: "logs",
	text: "run=q1 status=running stdout_lines=3 stderr_lines=0\n--- stdout.log (/s/runs/q1/stdout.log) ---\nliteral: run:q1 room:q1 branch:q1/w\naddr=run:q1\nrun:q1\n--- stderr.log (/s/runs/q1/stderr.log) ---\n(empty)",
	result: `{"lines":40,"run":"q1","status":"running","stderr":[],"stderrLog":"/s/runs/q1/stderr.log",` +
		`"stdout":["literal: run:q1 room:q1 branch:q1/w","addr=run:q1","run:q1"],"stdoutLog":"/s/runs/q1/stdout.log"}`,
	wantText:   "", // unchanged
	wantFields: map[string]string{"node": "b", "run": "q1"},
	keep:       []string{`"stdout":["literal: run:q1 room:q1 branch:q1/w","addr=run:q1","run:q1"]`},
}, {
	name: "inspect view=status",
	text: "run=q1 status=running pid=7 active=1 next=inspect_target=run:q1_view=tail|message_to=run:q1_type=<channel.action>\n" +
		"output stream=stdout last=addr=run:q1\n" +
		"leaf pid=8 command=sh_-c_'echo_literal:_run:q1_room:q1_branch:q1/w;_sleep_300'",
	result: `{"active_leaves":[{"command":"sh -c 'echo literal: run:q1 room:q1 branch:q1/w; sleep 300'","pid":8}],"address":"run:q1",` +
		`"last_output":{"line":"addr=run:q1","stream":"stdout"},"next_actions":["inspect target=run:q1 view=tail","message to=run:q1 type=<channel.action>"],` +
		`"run":"q1","template":{"template":"sh -c \"echo literal: run:q1 room:q1 branch:q1/w; sleep 300\""},"values":{"actor_address":"run:q1","default_room":"room:q1"}}`,
	wantText: "run=q1 status=running pid=7 active=1 next=inspect_target=run:q1@b_view=tail|message_to=run:q1@b_type=<channel.action>\n" +
		"output stream=stdout last=addr=run:q1\n" +
		"leaf pid=8 command=sh_-c_'echo_literal:_run:q1_room:q1_branch:q1/w;_sleep_300'",
	wantFields: map[string]string{"address": "run:q1@b", "next_actions.0": "inspect target=run:q1@b view=tail",
		"next_actions.1": "message to=run:q1@b type=<channel.action>", "node": "b"},
	keep: []string{`"command":"sh -c 'echo literal: run:q1 room:q1 branch:q1/w; sleep 300'"`, `"line":"addr=run:q1"`,
		`"values":{"actor_address":"run:q1","default_room":"room:q1"}`, `"template":{"template":"sh -c \"echo literal: run:q1 room:q1 branch:q1/w; sleep 300\""}`},
}, {
	name: "inspect view=mailbox",
	text: "run=q1 accepts= emits=\n" +
		"id=m1 status=queued type=note.x from= to=run:q1 queued_at=2026-11-27T05:08:47Z\n" +
		"id=m2 status=queued type=note.obj from= to=run:q1 queued_at=2026-11-27T05:09:22Z\n" +
		"id=m3 status=queued type=task.do from=run:q1 to=branch:q1/w queued_at=2026-11-27T05:09:35Z",
	result: `{"corrupted":0,"file":"/s/runs/q1/inbox.jsonl","mailbox":null,"messages":[` +
		`{"body":"please reply to run:q1 soon","id":"m1","status":"queued","to":"run:q1","type":"note.x"},` +
		`{"body":{"to":"room:q1","reply_to":"run:q1"},"id":"m2","status":"queued","to":"run:q1","type":"note.obj"},` +
		`{"body":"run:q1","from":"run:q1","id":"m3","status":"queued","to":"branch:q1/w","type":"task.do"}],"run":"q1","total":3}`,
	wantText: "run=q1 accepts= emits=\n" +
		"id=m1 status=queued type=note.x from= to=run:q1@b queued_at=2026-11-27T05:08:47Z\n" +
		"id=m2 status=queued type=note.obj from= to=run:q1@b queued_at=2026-11-27T05:09:22Z\n" +
		"id=m3 status=queued type=task.do from=run:q1@b to=branch:q1/w@b queued_at=2026-11-27T05:09:35Z",
	wantFields: map[string]string{"messages.0.to": "run:q1@b", "messages.1.to": "run:q1@b", "messages.2.to": "branch:q1/w@b",
		"messages.2.from": "run:q1@b", "node": "b"},
	keep: []string{`"body":"please reply to run:q1 soon"`, `"body":{"to":"room:q1","reply_to":"run:q1"}`, `"body":"run:q1"`},
}, {
	name: "inspect room view=messages",
	text: "ts=t1 from=run:q1 to=room:q1 type=chat.say summary=ask_run:q1 body=\"ask run:q1 and room:q1\"\n" +
		"ts=t2 from=branch:q1/w to=room:q1 type=actor.join summary=Branch_joined_default_room body={\"parent\":\"run:q1\",\"role\":\"branch\"}",
	result: `{"messages":[{"to":"room:q1","type":"chat.say","body":"ask run:q1 and room:q1","from":"run:q1","summary":"ask run:q1"},` +
		`{"to":"room:q1","type":"actor.join","body":{"parent":"run:q1","role":"branch"},"from":"branch:q1/w","summary":"Branch joined default room"}],"total":2}`,
	wantText: "ts=t1 from=run:q1@b to=room:q1@b type=chat.say summary=ask_run:q1 body=\"ask run:q1 and room:q1\"\n" +
		"ts=t2 from=branch:q1/w@b to=room:q1@b type=actor.join summary=Branch_joined_default_room body={\"parent\":\"run:q1\",\"role\":\"branch\"}",
	wantFields: map[string]string{"messages.0.from": "run:q1@b", "messages.0.to": "room:q1@b", "messages.1.from": "branch:q1/w@b"},
	keep:       []string{`"body":"ask run:q1 and room:q1"`, `"summary":"ask run:q1"`, `"body":{"parent":"run:q1","role":"branch"}`},
}, {
	name: "inspect view=trace",
	text: "trace run:q1 session=s1 runs=1 entries=2 chain=q1\nchain (the session's root first):\n  run:q1 running created t0 ← session s1\n" +
		"timeline 2026-11-27 UTC:\n  05:08:45.984 spawn run:q1 (template) ← session s1\n  05:08:47.005 message session s1 → run:q1 type=note.x id=m1 queued_mailbox ← session s1 [received]",
	result: `{"target":"run:q1","session":"s1","chain":[{"run":"q1","status":"running"}],"entries":[{"kind":"spawn","run":"q1","text":"spawn run:q1 (template) ← session s1"},` +
		`{"kind":"message","run":"q1","to":"run:q1","text":"message session s1 → run:q1 type=note.x id=m1 queued_mailbox ← session s1"}]}`,
	wantText: "trace run:q1@b session=s1 runs=1 entries=2 chain=q1\nchain (the session's root first):\n  run:q1@b running created t0 ← session s1\n" +
		"timeline 2026-11-27 UTC:\n  05:08:45.984 spawn run:q1 (template) ← session s1\n  05:08:47.005 message session s1 → run:q1 type=note.x id=m1 queued_mailbox ← session s1 [received]",
	wantFields: map[string]string{"target": "run:q1@b", "entries.1.to": "run:q1@b"},
	keep:       []string{`"text":"spawn run:q1 (template) ← session s1"`},
}, {
	name: "mailbox claim",
	text: "id=m3 type=task.do from=run:q1 to=branch:q1/w body=run:q1_work next=mailbox_done_id=m3",
	result: `{"body":"run:q1 work","claimed_by":"branch:q1/w","from":"run:q1","id":"m3","status":"claimed","to":"branch:q1/w","type":"task.do",` +
		`"meta":{"to":"run:q1"}}`,
	wantText:   "id=m3 type=task.do from=run:q1@b to=branch:q1/w@b body=run:q1_work next=mailbox_done_id=m3",
	wantFields: map[string]string{"claimed_by": "branch:q1/w@b", "from": "run:q1@b", "to": "branch:q1/w@b"},
	keep:       []string{`"body":"run:q1 work"`, `"meta":{"to":"run:q1"}`},
}}

// TestRoutedAnswerKeepsContent: a routed answer's addresses name the node
// in --json and in the text; its content — log lines, bodies, commands,
// template values, trace text — comes back byte for byte.
func TestRoutedAnswerKeepsContent(t *testing.T) {
	for _, c := range routedCases {
		t.Run(c.name, func(t *testing.T) {
			ro := &RoutedOutcome{Node: "b", Text: c.text, Result: json.RawMessage(c.result)}
			out := ro.Qualified("q1")
			want := c.wantText
			if want == "" {
				want = c.text
			}
			if out.Text != want {
				t.Errorf("text:\n got %q\nwant %q", out.Text, want)
			}
			raw, ok := out.Result.(json.RawMessage)
			if !ok {
				t.Fatalf("result %T", out.Result)
			}
			for _, k := range c.keep {
				if !strings.Contains(string(raw), k) {
					t.Errorf("content rewritten: %s not in\n%s", k, raw)
				}
			}
			var m any
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatalf("result is not JSON: %v\n%s", err, raw)
			}
			for path, w := range c.wantFields {
				if got := jsonPath(m, path); got != w {
					t.Errorf("%s = %q, want %q\n%s", path, got, w, raw)
				}
			}
		})
	}
}

// jsonPath reads a dotted path (list indexes as numbers) as a string.
func jsonPath(v any, path string) string {
	for _, p := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[p]
		case []any:
			i := 0
			for _, c := range p {
				i = i*10 + int(c-'0')
			}
			if i >= len(x) {
				return "<missing>"
			}
			v = x[i]
		default:
			return "<missing>"
		}
	}
	s, _ := v.(string)
	return s
}

// TestQualifyResultDelivery: a message's delivery from another node (the
// kernel's forward) names the node in to, multicast and next actions; a
// delivery error's text is left alone.
func TestQualifyResultDelivery(t *testing.T) {
	in := `{"to":"run:q1","type":"note.x","run":"q1","delivery_error":"run:q1 said run:q1","multicast":["run:q1","room:q1"],` +
		`"next_actions":["inspect target=run:q1 view=mailbox"]}`
	got := string(QualifyResult(json.RawMessage(in), "q1", "b"))
	want := `{"to":"run:q1@b","type":"note.x","run":"q1","delivery_error":"run:q1 said run:q1","multicast":["run:q1@b","room:q1@b"],` +
		`"next_actions":["inspect target=run:q1@b view=mailbox"],"node":"b"}`
	if got != want {
		t.Errorf("QualifyResult:\n got %s\nwant %s", got, want)
	}
}

// TestQualifiedFailure: a routed failure's message and hint name the node.
func TestQualifiedFailure(t *testing.T) {
	ro := &RoutedOutcome{Node: "b", Fail: &Error{Code: "usage", Message: "run:q1 is not a workflow run", Hint: "pi-actors inspect target=run:q1 view=status"}}
	f := ro.Qualified("q1").Fail
	if f.Message != "run:q1@b is not a workflow run" || f.Hint != "pi-actors inspect target=run:q1@b view=status" {
		t.Errorf("failure: %+v", f)
	}
	if ro.Fail.Message != "run:q1 is not a workflow run" {
		t.Errorf("the routed outcome's own failure was changed: %+v", ro.Fail)
	}
	err := qualifyErr(&Error{Code: "not_found", Message: "run not found: run:nosuch", Hint: "inspect target=session:all view=runs"}, "nosuch", "b")
	if e := Classify(err); e.Message != "run not found: run:nosuch@b" || !strings.Contains(e.Hint, "ps --cluster") {
		t.Errorf("not found on b: %+v", e)
	}
	if e := Classify(qualifyRunErr(&Error{Code: "session_mismatch", Message: "run:k1 reason=session_mismatch"}, "k1@b")); e.Message != "run:k1@b reason=session_mismatch" {
		t.Errorf("kill k1@b: %+v", e)
	}
}

// TestQualifyShortAll: kill all on a cluster names this node's own runs
// with the node, as it names the other members' runs.
func TestQualifyShortAll(t *testing.T) {
	yes := true
	r := qualifyShort(ShortResult{Run: "k1", OK: true, Result: &Delivery{To: "run:k1", Type: "control.kill", Stopped: true, Delivered: &yes,
		NextActions: []string{"inspect target=run:k1 view=status"}}}, "k1", "a")
	if r.Run != "k1@a" || r.Result.To != "run:k1@a" || r.Result.Node != "a" || r.Result.NextActions[0] != "inspect target=run:k1@a view=status" {
		t.Errorf("kill all, this node's run: %+v %+v", r, r.Result)
	}
	if !strings.HasPrefix(r.Result.Text(), "to=run:k1@a type=control.kill node=a ") {
		t.Errorf("text: %s", r.Result.Text())
	}
}
