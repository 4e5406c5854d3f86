package rooms

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/internal/fsutil"
	"github.com/pi-actors/pi-actors/mailbox"

	"github.com/pi-actors/pi-actors/internal/testproc"
)

// helperVar selects a helper mode in the test binary: TestMain then runs
// runHelper(os.Args[1:]) instead of the tests, so the concurrency tests
// use real OS processes.
const helperVar = "PI_ACTORS_ROOMS_HELPER"

func TestMain(m *testing.M) {
	testproc.NoRaceExitSleep()
	if os.Getenv(helperVar) != "" {
		if err := runHelper(os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	testproc.Watchdog()
	os.Exit(m.Run())
}

// The branch all writers send to, and its address.
const (
	soakBranch = "q"
	soakTo     = "branch:r/" + soakBranch
)

// runHelper modes:
//
//	write DIR N TAG      N room posts from branch:r/TAG and N branch
//	                     messages to branch:r/q, ids TAG-0 …; every 97th
//	                     is sent twice and must come back duplicate
//	claim DIR OWNER STOP claim and finish branch:r/q messages, printing
//	                     each id it finished, until STOP exists and the
//	                     inbox has nothing queued
//	claim-crash DIR      claim one message (naming this process), print
//	                     its id and exit without finishing it
//	torn-room DIR        start an entry under the room lock and die
//	torn-branch DIR      start a record under the inbox lock and die
func runHelper(args []string) error {
	if len(args) < 2 {
		return fmt.Errorf("usage: write|claim|claim-crash|torn-room|torn-branch DIR …")
	}
	dir := args[1]
	switch args[0] {
	case "write":
		n, _ := strconv.Atoi(args[2])
		return helperWrite(dir, n, args[3])
	case "claim":
		return helperClaim(dir, args[2], args[3])
	case "claim-crash":
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			rec, err := ClaimBranch(dir, soakTo, "crasher", os.Getpid())
			if err != nil {
				return err
			}
			if rec != nil {
				fmt.Println(rec.ID())
				os.Exit(3) // dies holding the claim
			}
		}
		return errors.New("claim-crash: nothing to claim")
	case "torn-room":
		return tornWrite(TimelinePath(dir), `{"to":"room:r","type":"chat","from":"branch:r/torn","body":"half an ent`)
	case "torn-branch":
		return tornWrite(BranchInboxPath(dir, soakBranch), `{"to":"branch:r/q","type":"task.assign","bo`)
	}
	return fmt.Errorf("unknown helper %q", args[0])
}

// errNoRun: the soak has no run process, so nothing is forwarded to a
// run inbox (the branch inbox is what it checks).
var errNoRun = errors.New("run:r is not running")

func helperWrite(dir string, n int, tag string) error {
	for i := range n {
		id := fmt.Sprintf("%s-%d", tag, i)
		times := 1
		if i%97 == 0 {
			times = 2
		}
		for k := range times {
			// A lock held past LockWait (a loaded machine) is "busy": the
			// sender retries with the same id, which stores it once.
			var p *Posting
			retriedP, err := busyRetry(func() (err error) {
				p, err = Post(dir, mailbox.Envelope{To: "room:r", Type: "chat.message", From: "branch:r/" + tag, ID: id, Body: i}, errNoRun)
				return err
			})
			if err != nil {
				return err
			}
			var d *Delivery
			retriedD, err := busyRetry(func() (err error) {
				d, err = SendBranch(dir, mailbox.Envelope{To: soakTo, Type: "task.assign", From: "run:r", ID: id, Body: i}, errNoRun)
				return err
			})
			if err != nil {
				return err
			}
			if retriedP || retriedD {
				continue // a retry may find its own first attempt's record
			}
			if dup := k == 1; p.Append.Duplicate != dup || d.Duplicate != dup {
				return fmt.Errorf("%s send %d: room duplicate %v, branch duplicate %v", id, k, p.Append.Duplicate, d.Duplicate)
			}
		}
	}
	return nil
}

// busyRetry runs fn until it does not fail with a lock timeout (at most a
// minute); retried reports whether it had to.
func busyRetry(fn func() error) (retried bool, err error) {
	for deadline := time.Now().Add(time.Minute); ; retried = true {
		err = fn()
		if err == nil || !errors.Is(err, fsutil.ErrLockTimeout) || time.Now().After(deadline) {
			return retried, err
		}
	}
}

func helperClaim(dir, owner, stop string) error {
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	idle := time.Duration(0)
	for {
		var rec mailbox.Record
		_, err := busyRetry(func() (err error) {
			rec, err = ClaimBranch(dir, soakTo, owner, os.Getpid())
			return err
		})
		if err != nil {
			return err
		}
		if rec == nil {
			if _, err := os.Stat(stop); err == nil {
				// The writers are done: one last look, then stop.
				if rec, err = ClaimBranch(dir, soakTo, owner, os.Getpid()); err != nil || rec == nil {
					return err
				}
			} else {
				idle = min(max(2*idle, 100*time.Microsecond), 5*time.Millisecond)
				time.Sleep(idle)
				continue
			}
		}
		idle = 0
		if _, err := busyRetry(func() error {
			return DoneBranch(dir, soakTo, rec.ID(), mailbox.StatusHandled, map[string]any{"by": owner})
		}); err != nil {
			return err
		}
		fmt.Fprintln(w, rec.ID())
	}
}

// tornWrite takes path's lock, writes the start of a line and kills this
// process with SIGKILL, as a writer killed in the middle of an append.
func tornWrite(path, fragment string) error {
	return mailbox.Update(path, func(tx *mailbox.Tx) error {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return err
		}
		f.WriteString(fragment)
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // never reached
	})
}

// helper is a started helper process.
type helper struct {
	cmd    *exec.Cmd
	out    bytes.Buffer
	errOut bytes.Buffer
	done   chan error
}

func startHelper(t *testing.T, ctx context.Context, args ...string) *helper {
	t.Helper()
	h := &helper{cmd: exec.CommandContext(ctx, os.Args[0], args...), done: make(chan error, 1)}
	h.cmd.Env = append(os.Environ(), helperVar+"=1")
	h.cmd.Stdout, h.cmd.Stderr = &h.out, &h.errOut
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.cmd.Process.Kill() })
	go func() { h.done <- h.cmd.Wait() }()
	return h
}

// wait waits for the helper and fails the test if it did not exit with
// code want.
func (h *helper) wait(t *testing.T, want int) {
	t.Helper()
	err := <-h.done
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
	} else if err != nil {
		t.Fatalf("helper %v: %v", h.cmd.Args[1:], err)
	}
	if code != want {
		t.Fatalf("helper %v exited %d, want %d: %s", h.cmd.Args[1:], code, want, h.errOut.Bytes())
	}
}

// TestSoakProcesses: 8 writer processes post 2,000 messages each (500
// under -race) to one room and send as many each to one branch inbox
// while 2 claimer processes drain it and a third claims one message and
// dies. Every room message lands once, in each writer's order, with
// strictly increasing received_at; every branch message is handled
// exactly once and nothing stays claimed.
func TestSoakProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("soak test: 8 writer processes × 2,000 messages")
	}
	// 500 each under the race detector: its instrumentation of the ten
	// processes made 32,000 messages take ~3 minutes on a loaded 2-core
	// machine; 8,000 still interleave every writer and claimer.
	const writers = 8
	n := 2000
	if testproc.Race {
		n = 500
	}
	t.Setenv(EnvRoomMaxMessages, strconv.Itoa(4*writers*n)) // keep every entry to check it
	dir := t.TempDir()
	stop := filepath.Join(t.TempDir(), "stop")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	claimers := []*helper{startHelper(t, ctx, "claim", dir, "c1", stop), startHelper(t, ctx, "claim", dir, "c2", stop)}
	var ws []*helper
	for w := range writers {
		ws = append(ws, startHelper(t, ctx, "write", dir, strconv.Itoa(n), fmt.Sprintf("w%d", w)))
	}
	crasher := startHelper(t, ctx, "claim-crash", dir)
	crasher.wait(t, 3)
	for _, h := range ws {
		h.wait(t, 0)
	}
	os.WriteFile(stop, nil, 0o600)
	for _, h := range claimers {
		h.wait(t, 0)
	}
	t.Logf("%d writers × %d room posts + %d branch messages, 2 claimers: %v", writers, n, n, time.Since(start).Round(time.Millisecond))
	checkSoakRoom(t, dir, writers, n)
	crashed := strings.TrimSpace(crasher.out.String())
	handled := map[string]string{}
	for _, h := range claimers {
		for _, id := range strings.Fields(h.out.String()) {
			if prev, ok := handled[id]; ok {
				t.Fatalf("%s handled twice (%s and %s)", id, prev, h.cmd.Args[3])
			}
			handled[id] = h.cmd.Args[3]
		}
	}
	if len(handled) != writers*n || handled[crashed] == "" {
		t.Fatalf("%d messages handled, want %d (the crashed claim %q by %q)", len(handled), writers*n, crashed, handled[crashed])
	}
	q, _ := BranchInbox(dir, soakBranch)
	if err := q.Compact(); err != nil {
		t.Fatal(err)
	}
	recs, bad := readLines(t, BranchInboxPath(dir, soakBranch))
	for _, r := range recs {
		if r["status"] != mailbox.StatusHandled || r["by"] != r["claimed_by"] {
			t.Fatalf("record left %v by %v: %v", r["status"], r["claimed_by"], r["id"])
		}
	}
	if len(bad) != 0 || len(recs) == 0 || len(recs) > DefaultLimits.BranchRetained {
		t.Fatalf("inbox after the soak: %d records (retained %d), malformed %q", len(recs), DefaultLimits.BranchRetained, bad)
	}
}

// checkSoakRoom checks the timeline after the soak.
func checkSoakRoom(t *testing.T, dir string, writers, n int) {
	t.Helper()
	recs, bad := readLines(t, TimelinePath(dir))
	if len(bad) != 0 {
		t.Fatalf("malformed timeline lines: %q", bad)
	}
	next := map[string]int{}
	var prev time.Time
	joins := 0
	for _, r := range recs {
		e := entryFrom(r)
		if !e.Time().After(prev) {
			t.Fatalf("received_at %s after %s", e.ReceivedAt, prev.Format(TimeFormat))
		}
		prev = e.Time()
		if e.Type == TypeJoin {
			joins++
			continue
		}
		tag := strings.TrimPrefix(e.From, "branch:r/")
		if want := fmt.Sprintf("%s-%d", tag, next[tag]); e.ID != want {
			t.Fatalf("entry %s from %s, want %s", e.ID, tag, want)
		}
		next[tag]++
	}
	for w := range writers {
		if got := next[fmt.Sprintf("w%d", w)]; got != n {
			t.Fatalf("w%d: %d entries, want %d", w, got, n)
		}
	}
	r, _ := LoadRoster(dir)
	if joins != 1 || len(r) != writers+1 {
		t.Fatalf("%d joins, %d members; want the branch's one join and %d members", joins, len(r), writers+1)
	}
}

// TestWriterKilledMidAppend: writers killed while holding the room lock
// and the inbox lock, in the middle of a line, while others write: the
// locks pass on, the fragments stay as malformed lines of their own,
// every other entry is whole.
func TestWriterKilledMidAppend(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const n = 150
	var ws []*helper
	var mu sync.Mutex
	for w := range 3 {
		ws = append(ws, startHelper(t, ctx, "write", dir, strconv.Itoa(n), fmt.Sprintf("w%d", w)))
	}
	for _, mode := range []string{"torn-room", "torn-branch"} {
		mu.Lock()
		startHelper(t, ctx, mode, dir).wait(t, 128+int(syscall.SIGKILL))
		mu.Unlock()
	}
	for _, h := range ws {
		h.wait(t, 0)
	}
	recs, bad := readLines(t, TimelinePath(dir))
	if len(bad) != 1 || !strings.HasPrefix(bad[0], `{"to":"room:r","type":"chat","from":"branch:r/torn"`) {
		t.Fatalf("timeline malformed lines: %q", bad)
	}
	if len(recs) != 3*n+1 { // and the branch's join
		t.Fatalf("%d timeline entries, want %d", len(recs), 3*n+1)
	}
	v, err := BranchMailbox(dir, soakTo, 10*n)
	if err != nil || v.Corrupted != 1 || len(v.Messages) != 3*n {
		t.Fatalf("inbox: %d records, %d corrupted, %v", len(v.Messages), v.Corrupted, err)
	}
	s, _ := Status(dir)
	if s.DiagnosticsCount != 1 || s.MessageCount != 3*n+2 {
		t.Fatalf("status: %+v", s)
	}
}
