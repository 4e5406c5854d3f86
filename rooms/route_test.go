package rooms

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/mailbox"
)

// nothingWritten fails when dir holds any file.
func nothingWritten(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			t.Errorf("%s was written", path)
		}
		return nil
	})
}

func TestPostSenderRules(t *testing.T) {
	for _, c := range []struct{ from, want string }{
		{"", "requires from=<actor address>"},
		{"run:other", "requires from=run:r or from=branch:r/<branch>; got run:other"},
		{"branch:other/x", "got branch:other/x"},
		{"coordinator", "got coordinator"},
		{"session:s1", "got session:s1"},
	} {
		dir := t.TempDir()
		_, err := Post(dir, mailbox.Envelope{To: "room:r", Type: "chat", From: c.from}, nil)
		var ee *mailbox.EnvelopeError
		if !errors.As(err, &ee) || ee.Field != "from" || !errors.Is(err, mailbox.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("from %q: %v, want a from error containing %q", c.from, err, c.want)
		}
		nothingWritten(t, dir)
	}
	dir := t.TempDir()
	for _, from := range []string{"run:r", "branch:r/b1"} {
		p, err := Post(dir, mailbox.Envelope{To: "room:r/main", Type: "chat", From: from}, nil)
		if err != nil {
			t.Fatalf("from %s: %v", from, err)
		}
		if r := p.Result(); !r.Sent || !r.Delivered || !r.Persisted || r.Forwarded || r.Consumer != "room-timeline" || r.Reason != "room_persisted" || r.Room != "main" || r.To != "room:r" {
			t.Fatalf("result: %+v", r)
		}
	}
	// A branch sender's snapshot is written with the run's.
	s, err := LoadSnapshot(filepath.Join(BranchDir(dir, "b1"), CommunicationFile))
	if err != nil || s == nil || s.Self != "branch:r/b1" || s.Parent != "run:r" || len(s.Contacts) != 1 || s.Contacts[0].Address != "run:r" {
		t.Fatalf("branch snapshot: %+v %v", s, err)
	}
}

func TestMulticastValidatedBeforeWrite(t *testing.T) {
	for _, c := range []struct {
		recips any
		want   string
	}{
		{"branch:r/a", "must be an array"},
		{map[string]any{"a": 1}, "must be an array"},
		{[]any{"branch:r/a", 7}, "must be actor addresses"},
		{[]any{"branch:r/a", "run:r"}, "must be branch:r/<branch>; got run:r"},
		{[]any{"branch:r/a", "branch:other/b"}, "got branch:other/b"},
		{[]any{"branch:r/a", "nonsense"}, `room multicast recipient: actor address must include kind`},
		{[]any{"branch:r/a", "branch:r/" + strings.Repeat("x", 300)}, "is 300 bytes, longer than 128"},
	} {
		dir := t.TempDir()
		_, err := Post(dir, mailbox.Envelope{To: "room:r", Type: "task.assign", From: "run:r", Metadata: map[string]any{"recipients": c.recips}}, nil)
		var ee *mailbox.EnvelopeError
		if !errors.As(err, &ee) || ee.Field != "metadata.recipients" || !strings.Contains(err.Error(), c.want) {
			t.Errorf("recipients %v: %v, want %q", c.recips, err, c.want)
		}
		nothingWritten(t, dir)
	}
}

func TestMulticast(t *testing.T) {
	dir := t.TempDir()
	env := mailbox.Envelope{To: "room:r", Type: "task.assign", From: "branch:r/lead", Body: map[string]any{"task": 1},
		Metadata: map[string]any{"recipients": []any{"branch:r/a", "branch:r/b", "branch:r/a"}}, ID: "t1"}
	p, err := Post(dir, env, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Deliveries) != 2 {
		t.Fatalf("%d deliveries", len(p.Deliveries))
	}
	// The copies in the run's own inbox: to = the branch, id = <entry>@room@<branch>.
	fwd, _ := readLines(t, filepath.Join(dir, RunInboxFile))
	for i, d := range p.Deliveries {
		if d.InboxID != "t1@room@"+d.Branch || len(fwd) != 2 || fwd[i]["to"] != d.To || fwd[i]["id"] != "t1@room@"+d.Branch || fwd[i]["from"] != "branch:r/lead" {
			t.Fatalf("delivery %+v forwards %v", d, fwd)
		}
	}
	// Retried while the run is down: nothing is written twice, and the
	// outcome says the parent was unavailable.
	down, err := Post(dir, env, errors.New("run:r is not running"))
	if err != nil || !down.Result().Duplicate || down.Deliveries[1].Result().DeliveryError != "run:r is not running" {
		t.Fatalf("retry: %+v %v", down, err)
	}
	if again, _ := readLines(t, filepath.Join(dir, RunInboxFile)); len(again) != 2 {
		t.Fatalf("the retry forwarded again: %v", again)
	}
	p.Deliveries[1].Finish(errors.New("run:r is not running"))
	r := p.Result()
	if !r.Forwarded || r.MulticastCount != 2 || strings.Join(r.Multicast, ",") != "branch:r/a,branch:r/b" || r.ID != "t1" || r.Reason != "room_persisted" {
		t.Fatalf("result: %+v", r)
	}
	if a, b := r.MulticastResults[0], r.MulticastResults[1]; a.Reason != "branch_persisted_forwarded" || !a.Sent || !a.Delivered ||
		b.Reason != "branch_persisted_parent_unavailable" || b.Sent || b.Delivered || !b.Persisted || b.DeliveryError != "run:r is not running" || len(b.NextActions) != 2 {
		t.Fatalf("branch outcomes: %+v / %+v", a, b)
	}
	// The timeline: the sender's join, the original (metadata included),
	// then the recipients' joins.
	recs, _ := readLines(t, TimelinePath(dir))
	var types []string
	for _, e := range recs {
		types = append(types, e["type"].(string)+"<"+e["from"].(string))
	}
	if got := strings.Join(types, " "); got != "task.assign<branch:r/lead actor.join<branch:r/a actor.join<branch:r/b" {
		t.Fatalf("timeline: %s", got)
	}
	if recs[0]["metadata"] == nil || recs[0]["id"] != "t1" {
		t.Fatalf("the room entry lost its metadata or id: %v", recs[0])
	}
	join := recs[1]
	if b := join["body"].(map[string]any); b["parent"] != "run:r" || b["role"] != "branch" || b["status"] != "present" || join["summary"] != BranchJoinSummary {
		t.Fatalf("branch join: %v", join)
	}
	for _, b := range []string{"a", "b"} {
		in, _ := readLines(t, BranchInboxPath(dir, b))
		if len(in) != 1 || in[0]["to"] != "branch:r/"+b || in[0]["status"] != "queued" || in[0]["id"] != "t1@room@"+b {
			t.Fatalf("inbox %s: %v", b, in)
		}
	}
	// A retry writes nothing anywhere and reports duplicates.
	before := snapshotFiles(t, dir)
	p2, err := Post(dir, env, nil)
	if err != nil || !p2.Append.Duplicate || !p2.Deliveries[0].Duplicate || !p2.Deliveries[1].Duplicate {
		t.Fatalf("retry: %+v %v", p2, err)
	}
	after := snapshotFiles(t, dir)
	for path, n := range before {
		if strings.HasSuffix(path, ".jsonl") && !strings.HasSuffix(path, WakeFile) && after[path] != n {
			t.Errorf("%s changed on retry: %d → %d bytes", path, n, after[path])
		}
	}
}

// snapshotFiles maps every file under dir to its size.
func snapshotFiles(t *testing.T, dir string) map[string]int64 {
	out := map[string]int64{}
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			fi, _ := d.Info()
			out[path] = fi.Size()
		}
		return nil
	})
	return out
}

func TestSendBranch(t *testing.T) {
	dir := t.TempDir()
	for _, from := range []string{"run:other", "branch:other/x", "coordinator", "room:r"} {
		_, err := SendBranch(dir, mailbox.Envelope{To: "branch:r/w", Type: "task.assign", From: from}, nil)
		if !errors.Is(err, mailbox.ErrInvalid) || !strings.Contains(err.Error(), "requires from=run:r or from=branch:r/<branch>; got "+from) {
			t.Errorf("from %s: %v", from, err)
		}
	}
	nothingWritten(t, dir)
	d, err := SendBranch(dir, mailbox.Envelope{To: "branch:r/w", Type: "task.assign", From: "branch:r/lead", Body: "do it"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	fwd, _ := readLines(t, filepath.Join(dir, RunInboxFile))
	if d.Run != "r" || d.Branch != "w" || d.InboxID == "" || len(fwd) != 1 || fwd[0]["to"] != "branch:r/w" || fwd[0]["body"] != "do it" {
		t.Fatalf("delivery: %+v forwards %v", d, fwd)
	}
	res := d.Result()
	if res.Consumer != "branch-mailbox" || res.Reason != "branch_persisted_forwarded" || !res.Sent || !res.Delivered || !res.Persisted || res.Inbox != BranchInboxPath(dir, "w") {
		t.Fatalf("result: %+v", res)
	}
	r, _ := LoadRoster(dir)
	if len(r) != 2 || r[0].Address != "branch:r/w" || r[1].Address != "branch:r/lead" || r[0].Role != "branch" || r[0].Parent != "run:r" {
		t.Fatalf("roster: %+v", r)
	}
	for _, p := range []string{filepath.Join(dir, CommunicationFile), filepath.Join(BranchDir(dir, "w"), CommunicationFile), filepath.Join(BranchDir(dir, "lead"), CommunicationFile)} {
		if s, err := LoadSnapshot(p); err != nil || s == nil || len(s.Rooms[0].Members) != 2 {
			t.Fatalf("snapshot %s: %+v %v", p, s, err)
		}
	}
	// The doorbell: the branch's, then the run's for the copy.
	wakes, _ := readLines(t, filepath.Join(dir, WakeFile))
	w, rw := wakes[len(wakes)-2], wakes[len(wakes)-1]
	if w["reason"] != "branch.message" || w["actor"] != "branch:r/w" || w["metadata"].(map[string]any)["from"] != "branch:r/lead" {
		t.Fatalf("wake: %v", w)
	}
	if rw["reason"] != "run.message" || rw["actor"] != "run:r" || rw["metadata"].(map[string]any)["to"] != "branch:r/w" {
		t.Fatalf("run wake: %v", rw)
	}
	// From the run, and without from: no sender joins.
	if _, err := SendBranch(dir, mailbox.Envelope{To: "branch:r/w", Type: "t", From: "run:r"}, nil); err != nil {
		t.Fatal(err)
	}
	d, err = SendBranch(dir, mailbox.Envelope{To: "branch:r/w2", Type: "t"}, errors.New("run:r is not running"))
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := LoadRoster(dir); len(r) != 3 {
		t.Fatalf("roster after sends from the run and from nobody: %+v", r)
	}
	// The run is down: the message stays in the branch inbox only.
	if res := d.Result(); res.Sent || res.Reason != "branch_persisted_parent_unavailable" || res.DeliveryError != "run:r is not running" {
		t.Fatalf("parent down: %+v", res)
	}
	if fwd, _ := readLines(t, filepath.Join(dir, RunInboxFile)); len(fwd) != 2 {
		t.Fatalf("forwarded to a run that is down: %v", fwd)
	}
}

func TestExpiredAtSendIsDeadLettered(t *testing.T) {
	dir := t.TempDir()
	past := time.Now().Add(-time.Minute)
	d, err := SendBranch(dir, mailbox.Envelope{To: "branch:r/w", Type: "t", Deadline: past, ID: "late-1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.DeadLetter != "deadline_passed" {
		t.Fatalf("delivery: %+v", d)
	}
	if res := d.Finish(nil); res.Sent || res.Delivered || !res.Persisted || res.Reason != "dead_lettered" || res.Consumer != "dead-letters" || res.DeadLetter != "deadline_passed" {
		t.Fatalf("result: %+v", res)
	}
	p, err := Post(dir, mailbox.Envelope{To: "room:r", Type: "t", From: "run:r", Deadline: past}, nil)
	if err != nil || p.Result().Reason != "dead_lettered" || len(p.Deliveries) != 0 {
		t.Fatalf("room post: %+v %v", p, err)
	}
	if _, err := os.Stat(TimelinePath(dir)); err == nil {
		t.Fatal("an expired room post reached the timeline")
	}
	v, err := DeadLetters(filepath.Join(dir, DeadLettersFile), 0)
	if err != nil || len(v.DeadLetters) != 2 || v.DeadLetters[0].ID != "late-1" || v.DeadLetters[0].Reason != "deadline_passed" || v.DeadLetters[0].Message["to"] != "branch:r/w" {
		t.Fatalf("dead letters: %+v %v", v, err)
	}
	// Idempotent by id.
	if d, _ := SendBranch(dir, mailbox.Envelope{To: "branch:r/w", Type: "t", Deadline: past, ID: "late-1"}, nil); !d.Duplicate {
		t.Fatal("second dead letter of one id")
	}
}

// A caller's id reaches the run's inbox once, whichever branch it was sent
// to first; a multicast of a room entry whose id was generated forwards
// one copy per recipient.
func TestForwardKeepsCallerIDsUnique(t *testing.T) {
	// The same caller id to two branches, to the run and a branch.
	dir := t.TempDir()
	for _, to := range []string{"branch:r/a", "branch:r/b"} {
		if _, err := SendBranch(dir, mailbox.Envelope{To: to, Type: "t", ID: "same"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	// A direct message with an id, then a branch message with it.
	in := mailbox.NewInbox(filepath.Join(dir, RunInboxFile))
	if _, _, err := in.Append(mailbox.Envelope{To: "run:r", Type: "t", ID: "direct"}); err != nil {
		t.Fatal(err)
	}
	if _, err := SendBranch(dir, mailbox.Envelope{To: "branch:r/a", Type: "t", ID: "direct"}, nil); err != nil {
		t.Fatal(err)
	}
	p, err := Post(dir, mailbox.Envelope{To: "room:r", Type: "t", From: "run:r", Metadata: map[string]any{"recipients": []any{"branch:r/a", "branch:r/b"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]int{}
	recs, _ := readLines(t, filepath.Join(dir, RunInboxFile))
	for _, r := range recs {
		ids[r["id"].(string)]++
	}
	// Every message reaches the run's inbox once, under an id of its own:
	// a branch's copy is <id>@<branch>, a room entry's <entry>@room@<branch>.
	entry := p.Append.Entry.ID
	if len(recs) != 6 || ids["same@a"] != 1 || ids["same@b"] != 1 || ids["direct"] != 1 || ids["direct@a"] != 1 || ids[entry+"@room@a"] != 1 || ids[entry+"@room@b"] != 1 {
		t.Fatalf("run inbox ids: %v", ids)
	}
	// A retried branch message is not forwarded twice.
	if _, err := SendBranch(dir, mailbox.Envelope{To: "branch:r/a", Type: "t", ID: "same"}, nil); err != nil {
		t.Fatal(err)
	}
	if recs, _ := readLines(t, filepath.Join(dir, RunInboxFile)); len(recs) != 6 {
		t.Fatalf("after a retry the run inbox has %d records, want 6", len(recs))
	}
}

// A copy id is in a namespace no caller id can take: a caller id that
// looks like another message's copy (job.w1 beside job to w1, t8.w1 to
// the run after t8 to w1, a room entry's id beside a branch message's) is
// a message of its own, stored and forwarded; a retry still forwards
// nothing twice.
func TestCopyIDsNeverClashWithCallerIDs(t *testing.T) {
	dir := t.TempDir()
	send := func(id, body string) BranchResult {
		t.Helper()
		d, err := SendBranch(dir, mailbox.Envelope{To: "branch:r1/w1", From: "run:r1", Type: "task.assign", ID: id, Body: body}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return d.Result()
	}
	if r := send("job.w1", "first"); r.Duplicate || r.Reason != ReasonForwarded {
		t.Fatalf("first: %+v", r)
	}
	if r := send("job", "second"); r.Duplicate || r.Reason != ReasonForwarded {
		t.Fatalf("second: %+v", r)
	}
	send("t8", "A")
	in := mailbox.NewInbox(filepath.Join(dir, RunInboxFile))
	if _, dup, err := in.Append(mailbox.Envelope{To: "run:r1", Type: "task.other", ID: "t8.w1", Body: "B"}); err != nil || dup {
		t.Fatalf("run message t8.w1: dup=%v %v", dup, err)
	}
	// A room entry with a caller id, multicast to w1, beside the branch
	// message of that id.
	if _, err := Post(dir, mailbox.Envelope{To: "room:r1", From: "run:r1", Type: "t", ID: "job", Body: "post",
		Metadata: map[string]any{"recipients": []any{"branch:r1/w1"}}}, nil); err != nil {
		t.Fatal(err)
	}
	bodies := map[string]string{}
	recs, _ := readLines(t, filepath.Join(dir, RunInboxFile))
	for _, r := range recs {
		b, _ := r["body"].(string)
		bodies[r["id"].(string)] = b
	}
	want := map[string]string{"job.w1@w1": "first", "job@w1": "second", "t8@w1": "A", "t8.w1": "B", "job@room@w1": "post"}
	if len(recs) != len(want) {
		t.Fatalf("run inbox: %v, want %v", bodies, want)
	}
	for id, b := range want {
		if bodies[id] != b {
			t.Fatalf("run inbox %s = %q, want %q (all: %v)", id, bodies[id], b, bodies)
		}
	}
	// Retries: duplicates, nothing written twice.
	if r := send("job", "second"); !r.Duplicate || r.Reason != ReasonForwarded {
		t.Fatalf("retry: %+v", r)
	}
	if recs, _ := readLines(t, filepath.Join(dir, RunInboxFile)); len(recs) != len(want) {
		t.Fatalf("after a retry the run inbox has %d records, want %d", len(recs), len(want))
	}
}

// A branch message sent without an id gets one (a new uuid), and its
// copy in the run's inbox is <that id>@<branch>, as with a caller's id.
func TestCopyOfMessageWithoutIDNamedAfterIt(t *testing.T) {
	dir := t.TempDir()
	d, err := SendBranch(dir, mailbox.Envelope{To: "branch:r1/w1", From: "run:r1", Type: "task.assign", Body: "no id"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := d.Result()
	if r.InboxID == "" || r.Reason != ReasonForwarded {
		t.Fatalf("result: %+v", r)
	}
	recs, _ := readLines(t, filepath.Join(dir, RunInboxFile))
	if len(recs) != 1 || recs[0]["id"] != r.InboxID+"@w1" || recs[0]["body"] != "no id" {
		t.Fatalf("run inbox: %v, want one copy with id %s@w1", recs, r.InboxID)
	}
}

// A retry of a message stored with the old copy ids (<id>.<branch>) finds
// its copies under them and writes none again.
func TestLegacyCopyIDsStillDeduplicate(t *testing.T) {
	dir := t.TempDir()
	q, err := BranchInbox(dir, "w1")
	if err != nil {
		t.Fatal(err)
	}
	in := mailbox.NewInbox(filepath.Join(dir, RunInboxFile))
	// What an older version wrote: the branch message old-1 and its copy
	// old-1.w1; a room entry's copy e1.w1 in the branch and the run inbox.
	for _, id := range []string{"old-1", "e1.w1"} {
		if _, _, err := q.Append(mailbox.Envelope{To: "branch:r1/w1", Type: "t", ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"old-1.w1", "e1.w1"} {
		if _, _, err := in.Append(mailbox.Envelope{To: "branch:r1/w1", Type: "t", ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Append(dir, mailbox.Envelope{To: "room:r1", From: "run:r1", Type: "t", ID: "e1"}); err != nil {
		t.Fatal(err)
	}
	d, err := SendBranch(dir, mailbox.Envelope{To: "branch:r1/w1", Type: "t", ID: "old-1"}, nil)
	if err != nil || !d.Duplicate {
		t.Fatalf("retry of old-1: %+v %v", d, err)
	}
	if _, err := Post(dir, mailbox.Envelope{To: "room:r1", From: "run:r1", Type: "t", ID: "e1",
		Metadata: map[string]any{"recipients": []any{"branch:r1/w1"}}}, nil); err != nil {
		t.Fatal(err)
	}
	if recs, _ := readLines(t, filepath.Join(dir, RunInboxFile)); len(recs) != 2 {
		t.Fatalf("run inbox: %v", recs)
	}
	if recs, _ := readLines(t, q.Path); len(recs) != 2 {
		t.Fatalf("branch inbox: %v", recs)
	}
}

// A retry of a stored id answers duplicate even once its deadline has
// passed; only a new message is dead-lettered.
func TestRetryPastDeadlineIsDuplicate(t *testing.T) {
	dir := t.TempDir()
	soon := time.Now().Add(150 * time.Millisecond)
	post := mailbox.Envelope{To: "room:r", Type: "t", From: "run:r", ID: "p1", Deadline: soon}
	send := mailbox.Envelope{To: "branch:r/w", Type: "t", ID: "b1", Deadline: soon}
	if _, err := Post(dir, post, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := SendBranch(dir, send, nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	p, err := Post(dir, post, nil)
	if err != nil || !p.Result().Duplicate || p.Result().DeadLetter != "" {
		t.Fatalf("room retry: %+v %v", p.Result(), err)
	}
	d, err := SendBranch(dir, send, nil)
	if err != nil || !d.Duplicate || d.DeadLetter != "" {
		t.Fatalf("branch retry: %+v %v", d, err)
	}
	if _, err := os.Stat(filepath.Join(dir, DeadLettersFile)); err == nil {
		t.Fatal("a retry was dead-lettered")
	}
	// A new message past its deadline is.
	late := mailbox.Envelope{To: "branch:r/w", Type: "t", ID: "b2", Deadline: time.Now().Add(-time.Second)}
	if d, err := SendBranch(dir, late, nil); err != nil || d.DeadLetter == "" {
		t.Fatalf("late: %+v %v", d, err)
	}
}

// A cursor opened on a timeline without entries hands out every entry
// appended after it, whatever its received_at.
func TestCursorOnEmptyTimeline(t *testing.T) {
	dir := t.TempDir()
	c, err := NewCursor(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	// An entry stamped before the cursor opened, written after.
	mailbox.Append(TimelinePath(dir), map[string]any{"to": "room:r", "type": "t", "id": "e1", "received_at": "2020-01-01T00:00:00.000000000Z"})
	got, err := c.Next()
	if err != nil || len(got) != 1 || got[0].ID != "e1" {
		t.Fatalf("got %+v %v", got, err)
	}
}

// One dead-letter file holds the messages of many addresses: the same
// caller id on messages to two addresses is two dead letters, and a retry
// of either is a duplicate.
func TestDeadLetterSameIDTwoAddresses(t *testing.T) {
	path := filepath.Join(t.TempDir(), DeadLettersFile)
	send := func(to string) (DeadLetterRecord, bool) {
		t.Helper()
		rec, dup, err := DeadLetterAt(path, "", mailbox.Envelope{To: to, Type: "t", ID: "lost-1"}, "run_not_found")
		if err != nil {
			t.Fatal(err)
		}
		return rec, dup
	}
	a, dupA := send("run:gone1")
	b, dupB := send("run:gone2")
	c, dupC := send("run:gone3")
	if dupA || dupB || dupC || a.ID == b.ID || b.ID == c.ID || a.ID == c.ID {
		t.Fatalf("three addresses: ids %s %s %s, duplicate %v %v %v", a.ID, b.ID, c.ID, dupA, dupB, dupC)
	}
	for _, to := range []string{"run:gone1", "run:gone2", "run:gone3"} {
		if rec, dup := send(to); !dup || rec.Message["to"] != to {
			t.Errorf("retry to %s: duplicate=%v record to %v", to, dup, rec.Message["to"])
		}
	}
	if recs, _ := readLines(t, path); len(recs) != 3 {
		t.Errorf("%d dead letters, want 3", len(recs))
	}
}

// The coordinator's dead-letter log holds every session's messages: each
// session sees its own and those sent with no session, and the same id
// from two sessions is two dead letters, not a duplicate of the other's.
func TestSessionDeadLetters(t *testing.T) {
	path := filepath.Join(t.TempDir(), DeadLettersFile)
	for _, s := range []string{"s1", "s2", "", "s1"} {
		if _, _, err := DeadLetterAt(path, s, mailbox.Envelope{To: "run:gone", Type: "t", ID: "lost-" + s}, "run_not_found"); err != nil {
			t.Fatal(err)
		}
	}
	if _, dup, _ := DeadLetterAt(path, "s2", mailbox.Envelope{To: "run:gone", Type: "t", ID: "lost-s1"}, "run_not_found"); dup {
		t.Fatal("s2's message with s1's id was taken for s1's retry")
	}
	ids := func(session string) (out []string) {
		v, err := SessionDeadLetters(path, session, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range v.DeadLetters {
			out = append(out, d.ID+"/"+d.Session)
		}
		if v.Total != len(out) {
			t.Errorf("session %q: total %d, shown %d", session, v.Total, len(out))
		}
		return out
	}
	if got := ids("s1"); !reflect.DeepEqual(got, []string{"lost-s1/s1", "lost-/"}) {
		t.Errorf("s1 sees %v", got)
	}
	if got := ids("s2"); len(got) != 3 || got[0] != "lost-s2/s2" || got[1] != "lost-/" || !strings.HasPrefix(got[2], "lost-s1.") {
		t.Errorf("s2 sees %v", got)
	}
	if got := ids(""); len(got) != 4 {
		t.Errorf("no session sees %v, want all 4", got)
	}
}
