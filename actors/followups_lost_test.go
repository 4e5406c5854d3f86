package actors_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/actors"
	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// Nothing a session's follow-up queue holds is lost: not with a reader
// that goes away before it has the answer, not with a run that ends while
// no kernel runs, not with a torn line in the queue.

// queuedFollowups counts the session's queued follow-ups (the peek top
// uses: it takes none).
func queuedFollowups(t *testing.T, k *kernel, session string) int {
	t.Helper()
	resp := k.call("followups_peek", session, map[string]any{"lines": 500})
	if resp.Error != nil {
		t.Fatalf("followups_peek: %+v", resp.Error)
	}
	var out struct {
		Followups []struct {
			Status string `json:"status"`
		} `json:"followups"`
	}
	if err := json.Unmarshal(resp.Result, &out); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range out.Followups {
		if f.Status == mailbox.StatusQueued {
			n++
		}
	}
	return n
}

// A client that asked for view=followups and went away before it read the
// answer (an interrupted `inspect`) took nothing: the next call gets every
// one of them, each once.
func TestFollowupsAnswerNotReadStayQueued(t *testing.T) {
	agent := newAgent(t)
	k := startKernel(t, agent, settings(nil))
	k.spawn("s1", "src", "sleep-forever", nil)
	// An answer far larger than a socket's buffers: the kernel is still
	// writing it when the client hangs up.
	const n = 12 // 2.4 MB of answer: ten times a Unix socket's send buffer
	body := strings.Repeat("q", 200_000)
	for i := range n {
		if r := k.call("message", "s1", map[string]any{"to": "session:s1", "from": "run:src", "type": "res.x", "id": fmt.Sprintf("f%d", i), "body": body}); r.Error != nil {
			t.Fatalf("message %d: %+v", i, r.Error)
		}
	}
	eventually(t, 15*time.Second, "the messages queued as follow-ups", func() bool { return queuedFollowups(t, k, "s1") == n })

	c, err := net.Dial("unix", wire.SocketPath(agent))
	if err != nil {
		t.Fatal(err)
	}
	req, _ := json.Marshal(wire.Request{ID: 1, Op: "followups", Session: "s1"})
	if _, err := c.Write(append(req, '\n')); err != nil {
		t.Fatal(err)
	}
	// The answer has started (the kernel took the follow-ups); the client
	// goes away without the rest.
	c.SetReadDeadline(time.Now().Add(callTimeout))
	head := make([]byte, 4096)
	if _, err := io.ReadFull(c, head); err != nil {
		t.Fatalf("start of the answer: %v", err)
	}
	if !bytes.Contains(head, []byte(`"followups"`)) && !bytes.Contains(head, []byte(`"count"`)) {
		t.Fatalf("the answer starts %q", head[:200])
	}
	c.Close()

	seen := map[string]int{}
	eventually(t, 15*time.Second, "the follow-ups the client never read", func() bool {
		for _, f := range k.followups("s1") {
			seen[f.ID]++
		}
		return len(seen) >= n
	})
	for id, times := range seen {
		if times != 1 {
			t.Errorf("follow-up %s delivered %d times", id, times)
		}
	}
	if fs := k.followups("s1"); len(fs) != 0 {
		t.Errorf("delivered again: %d follow-ups", len(fs))
	}
}

// A run that ends while no kernel runs: the next kernel queues its outbox
// records (the command.done line, and a message the run sent that was
// stored but never queued) as well as its transition — once, even when a
// kernel dies before it recorded that it did.
func TestRestartQueuesOutboxOfRunEndedWhileDown(t *testing.T) {
	agent := newAgent(t)
	gate := filepath.Join(agent, "gate")
	k1 := startKernel(t, agent, settings(nil))
	if r := k1.call("spawn", "s1", map[string]any{"as": "run:late", "template": "sh -c {s}",
		"values": map[string]any{"s": "while [ ! -e " + gate + " ]; do sleep 0.02; done; exit 3"}}); r.Error != nil {
		t.Fatalf("spawn: %+v", r.Error)
	}
	k1.shutdown()

	dir := runs.StateDirFor(agent, "late")
	// What the kernel stores for `message to=session:s1 from=run:late`
	// (persisted, acknowledged), left undelivered by a kernel that died.
	if _, err := mailbox.AppendOutbox(dir.Path(runs.OutboxFile), mailbox.OutboxRecord{To: "session:s1", From: "run:late", Type: "res.x",
		Delivery: "followup", Summary: "sent while no kernel read the outbox", Body: "hello", ID: "m1"}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(gate, nil, 0o600)
	eventually(t, 10*time.Second, "run:late result", func() bool { return dir.Result() != nil })

	k2 := startKernel(t, agent, settings(nil))
	got := map[string]actors.Followup{}
	for _, f := range k2.followups("s1") {
		got[f.Kind+" "+f.Event] = f
	}
	for _, want := range []string{"transition run.failed", "message command.done", "message res.x"} {
		if _, ok := got[want]; !ok {
			t.Errorf("no %s follow-up for run:late after the restart; got %v", want, keys(got))
		}
	}
	if len(got) != 3 {
		t.Errorf("follow-ups %v, want exactly the three", keys(got))
	}
	var n struct {
		OutboxLines int `json:"outbox_lines"`
	}
	if err := dir.ReadJSON(runs.NotifiedFile, &n); err != nil || n.OutboxLines != 2 {
		t.Errorf("notified.json outbox_lines=%d (%v), want 2", n.OutboxLines, err)
	}
	k2.shutdown()

	// A kernel that died after queueing them, before notified.json said
	// so: the next one queues nothing twice.
	os.Remove(dir.Path(runs.NotifiedFile))
	k3 := startKernel(t, agent, settings(nil))
	if fs := k3.followups("s1"); len(fs) != 0 {
		t.Errorf("a third kernel queued %d follow-ups again", len(fs))
	}
}

// A torn last line in a session's queue (a crash mid-write) stays in the
// file, is counted and named in the answer, and the next follow-up lands
// on a line of its own.
func TestTornFollowupLineReported(t *testing.T) {
	agent := newAgent(t)
	k := startKernel(t, agent, settings(nil))
	for i := 1; i <= 3; i++ {
		k.spawn("s1", fmt.Sprintf("e%d", i), "exit "+fmt.Sprint(i), nil)
	}
	k.waitIdle()
	eventually(t, 10*time.Second, "six follow-ups queued", func() bool { return queuedFollowups(t, k, "s1") == 6 })
	k.shutdown()

	path := filepath.Join(wire.TmpDir(agent), "sessions", "s1.jsonl")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, fi.Size()-30); err != nil {
		t.Fatal(err)
	}
	torn := tornLine(t, path)

	k2 := startKernel(t, agent, settings(nil))
	type answer struct {
		Count     int               `json:"count"`
		Followups []actors.Followup `json:"followups"`
		Corrupted int               `json:"corrupted"`
		File      string            `json:"file"`
	}
	take := func() answer {
		t.Helper()
		resp := k2.call("followups", "s1", nil)
		if resp.Error != nil {
			t.Fatalf("followups: %+v", resp.Error)
		}
		var a answer
		if err := json.Unmarshal(resp.Result, &a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	a := take()
	if a.Count != 5 || a.Corrupted != 1 || a.File != path {
		t.Fatalf("followups count=%d corrupted=%d file=%q, want 5, 1 and %s", a.Count, a.Corrupted, a.File, path)
	}
	peek := k2.call("followups_peek", "s1", nil)
	var p struct {
		Corrupted int    `json:"corrupted"`
		File      string `json:"file"`
	}
	if json.Unmarshal(peek.Result, &p); p.Corrupted != 1 || p.File != path {
		t.Errorf("followups_peek corrupted=%d file=%q, want 1 and %s", p.Corrupted, p.File, path)
	}

	k2.spawn("s1", "e4", "exit 4", nil)
	k2.waitIdle()
	eventually(t, 10*time.Second, "run:e4's follow-ups", func() bool { return queuedFollowups(t, k2, "s1") == 2 })
	a = take()
	if a.Count != 2 || a.Corrupted != 1 {
		t.Errorf("after a new run: count=%d corrupted=%d, want 2 and 1", a.Count, a.Corrupted)
	}
	for _, f := range a.Followups {
		if f.Run != "e4" {
			t.Errorf("follow-up of run:%s, want run:e4's", f.Run)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, append(torn, '\n')) {
		t.Errorf("the torn line is no longer in the queue as a line of its own:\n%s", data)
	}
}

// tornLine is the last line of a file, which must not end in a newline.
func tornLine(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.HasSuffix(data, []byte("\n")) {
		t.Fatalf("%s ends in a newline: not torn", path)
	}
	var last []byte
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		last = append(last[:0], sc.Bytes()...)
	}
	return last
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// A live run's outbox is followed by inotify: with the once-a-second look
// set to an hour, a message to the coordinator still becomes a follow-up
// of the run's session. A record another writer appends in two pieces
// waits for its end; each record is queued once.
func TestOutboxFollowedAsWritten(t *testing.T) {
	agent := newAgent(t)
	k := startKernelConfig(t, actors.Config{AgentDir: agent, Settings: settings(nil), OutboxLook: time.Hour})
	k.spawn("s1", "src", "sleep-forever", nil)
	send := func(body string) {
		t.Helper()
		if r := k.call("message", "s1", map[string]any{"to": "coordinator", "from": "run:src", "type": "note.x", "body": body}); r.Error != nil {
			t.Fatal(r.Error)
		}
	}
	send("one")
	eventually(t, 10*time.Second, "the first message queued as a follow-up", func() bool { return queuedFollowups(t, k, "s1") == 1 })

	outbox := runs.StateDirFor(agent, "src").Path(runs.OutboxFile)
	write := func(s string) {
		t.Helper()
		f, err := os.OpenFile(outbox, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	before := k.runWatch().Events
	write(`{"to":"coordinator","from":"run:src","type":"note.y","event":"note.y","delivery":"followup","id":"piece",`)
	eventually(t, 10*time.Second, "the kernel told of the first piece", func() bool { return k.runWatch().Events > before })
	if got := queuedFollowups(t, k, "s1"); got != 1 {
		t.Fatalf("%d follow-ups queued after half a record, want 1", got)
	}
	write(`"body":"two"}` + "\n")
	eventually(t, 10*time.Second, "the record written in two pieces queued", func() bool { return queuedFollowups(t, k, "s1") == 2 })
	send("three")
	eventually(t, 10*time.Second, "the third queued", func() bool { return queuedFollowups(t, k, "s1") == 3 })
	// notified.json is written after the queue.
	eventually(t, 10*time.Second, "notified.json counting the 3 lines", func() bool {
		var n struct {
			OutboxLines int `json:"outbox_lines"`
		}
		return runs.StateDirFor(agent, "src").ReadJSON(runs.NotifiedFile, &n) == nil && n.OutboxLines == 3
	})
}
