package actors_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/internal/fsutil"
	"github.com/pi-actors/pi-actors/internal/testproc"
	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/rooms"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// claimerEnv makes the test binary a branch-inbox claimer (see init):
// PA_ROOMS_CLAIMER=<state dir>|<branch address>|<owner>|<stop file>|<mode>.
const claimerEnv = "PA_ROOMS_CLAIMER"

// init turns the test binary into a claimer process when claimerEnv is
// set: mode "drain" claims and finishes messages (printing each id) until
// the stop file exists and the inbox is empty; mode "crash" claims one
// message, prints its id and dies without finishing it.
func init() {
	spec := os.Getenv(claimerEnv)
	if spec == "" {
		return
	}
	f := strings.Split(spec, "|")
	dir, addr, owner, stop, mode := f[0], f[1], f[2], f[3], f[4]
	out := bufio.NewWriter(os.Stdout)
	// An idle claimer backs off (1 ms doubling to 32 ms, back to 1 ms at
	// the next message): polling every 2 ms took as much CPU as the kernel
	// under -race, on the same two cores.
	idle := time.Millisecond
	for {
		rec, err := rooms.ClaimBranch(dir, addr, owner, os.Getpid())
		if errors.Is(err, fsutil.ErrLockTimeout) {
			// A busy inbox (eight writers and three claimers on two
			// cores under -race): a worker tries again, as `mailbox
			// claim wait=` does.
			continue
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "claim:", err)
			os.Exit(1)
		}
		if rec == nil {
			if _, err := os.Stat(stop); err == nil {
				if rec, _ = rooms.ClaimBranch(dir, addr, owner, os.Getpid()); rec == nil {
					out.Flush()
					os.Exit(0)
				}
			} else {
				time.Sleep(idle)
				idle = min(2*idle, 32*time.Millisecond)
				continue
			}
		}
		idle = time.Millisecond
		fmt.Fprintln(out, rec.ID())
		if mode == "crash" {
			out.Flush()
			os.Exit(3)
		}
		err = rooms.DoneBranch(dir, addr, rec.ID(), mailbox.StatusHandled, map[string]any{"by": owner})
		for errors.Is(err, fsutil.ErrLockTimeout) {
			err = rooms.DoneBranch(dir, addr, rec.ID(), mailbox.StatusHandled, map[string]any{"by": owner})
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "done:", err)
			os.Exit(1)
		}
	}
}

// TestRoomsThroughKernel: 8 writer processes (the CLI's batch form) each
// send 2,000 messages (500 under -race, see soakMessages) to one room and
// as many to one branch inbox through
// the kernel, while 2 claimer processes drain the branch inbox, a third
// claims one message and dies, and a watcher follows the room. Every room
// message lands once, in each writer's order, and reaches the watcher
// once, in order; every branch message is handled exactly once; nothing
// stays claimed after its claimer exited.
func TestRoomsThroughKernel(t *testing.T) {
	if testing.Short() {
		t.Skip("soak test: 8 writer processes × 2 × 2,000 messages through the kernel (500 under -race)")
	}
	const writers = 8
	n := soakMessages()
	t.Setenv(rooms.EnvRoomMaxMessages, fmt.Sprint(4*writers*n))
	k := startTB(t)
	k.spawn("s1", "soak", "sleep-forever", nil)
	dir := filepath.Join(k.agent, "tmp", "pi-actors", "runs", "soak")
	stop := filepath.Join(t.TempDir(), "stop")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	watched := make(chan []rooms.Entry, 1)
	follow := watchRoom(t, k.agent, "room:soak")
	go func() { watched <- follow(writers * n) }()

	claimer := func(owner, mode string) (*exec.Cmd, *bytes.Buffer) {
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), claimerEnv+"="+strings.Join([]string{dir, "branch:soak/w", owner, stop, mode}, "|"))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, &out
	}
	c1, out1 := claimer("c1", "drain")
	c2, out2 := claimer("c2", "drain")
	crash, crashOut := claimer("c3", "crash")

	start := time.Now()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var in bytes.Buffer
			enc := json.NewEncoder(&in)
			for i := range n {
				enc.Encode(map[string]any{"to": "room:soak", "type": "chat.message", "from": fmt.Sprintf("branch:soak/w%d", w), "id": fmt.Sprintf("w%d-%d", w, i), "body": i})
				enc.Encode(map[string]any{"to": "branch:soak/w", "type": "task.assign", "id": fmt.Sprintf("b%d-%d", w, i), "body": i})
			}
			cmd := exec.CommandContext(ctx, piActors, "message", "-")
			cmd.Env = append(os.Environ(), "PI_CODING_AGENT_DIR="+k.agent, "PI_ACTORS_SESSION=s1")
			cmd.Stdin = &in
			if out, err := cmd.CombinedOutput(); err != nil || bytes.Count(out, []byte("message=sent")) != 2*n {
				t.Errorf("writer %d: %v: %d sent; %.300s", w, err, bytes.Count(out, []byte("message=sent")), out)
			}
		}()
	}
	wg.Wait()
	crash.Wait()
	os.WriteFile(stop, nil, 0o600)
	for _, c := range []*exec.Cmd{c1, c2} {
		if err := c.Wait(); err != nil {
			t.Fatalf("claimer: %v", err)
		}
	}
	t.Logf("%d writers × (%d room + %d branch messages) through the kernel, 2 claimers: %v", writers, n, n, time.Since(start).Round(time.Millisecond))

	handled := map[string]bool{}
	for _, id := range append(strings.Fields(out1.String()), strings.Fields(out2.String())...) {
		if handled[id] {
			t.Fatalf("%s handled twice", id)
		}
		handled[id] = true
	}
	if crashed := strings.TrimSpace(crashOut.String()); len(handled) != writers*n || !handled[crashed] {
		t.Fatalf("%d branch messages handled, want %d (the crashed claim %q taken over: %v)", len(handled), writers*n, crashed, handled[crashed])
	}
	checkBranchHandled(t, dir)
	checkRoomOrder(t, dir, writers, n)
	select {
	case got := <-watched:
		if len(got) != writers*n {
			t.Fatalf("the watcher saw %d entries, want %d", len(got), writers*n)
		}
	case <-time.After(time.Minute):
		t.Fatal("the watcher did not see every entry")
	}
}

// checkBranchHandled checks that no branch record is left unfinished.
func checkBranchHandled(t *testing.T, dir string) {
	t.Helper()
	v, err := rooms.BranchMailbox(dir, "branch:soak/w", 100000)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range v.Messages {
		if r.Status() != mailbox.StatusHandled {
			t.Fatalf("record %s left %s by %v", r.ID(), r.Status(), r["claimed_by"])
		}
	}
	if v.Corrupted != 0 {
		t.Fatalf("%d malformed inbox lines", v.Corrupted)
	}
}

// checkRoomOrder checks that the timeline has every writer's messages
// once, in its order.
func checkRoomOrder(t *testing.T, dir string, writers, n int) {
	t.Helper()
	v, err := rooms.Messages(dir, 10*writers*n)
	if err != nil {
		t.Fatal(err)
	}
	next := map[string]int{}
	for _, e := range v.Messages {
		if e.Type != "chat.message" {
			continue
		}
		w := strings.TrimPrefix(e.From, "branch:soak/")
		if want := fmt.Sprintf("%s-%d", w, next[w]); e.ID != want {
			t.Fatalf("entry %s from %s, want %s", e.ID, w, want)
		}
		next[w]++
	}
	for w := range writers {
		if got := next[fmt.Sprintf("w%d", w)]; got != n {
			t.Fatalf("w%d: %d room entries, want %d", w, got, n)
		}
	}
}

// watchRoom subscribes to a room through watch_room; the function it
// returns follows it until it has seen want chat.message entries (each
// checked once and in received_at order).
func watchRoom(t *testing.T, agent, target string) func(want int) []rooms.Entry {
	t.Helper()
	c, err := wire.Dial(agent, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	params, _ := json.Marshal(map[string]any{"target": target})
	if err := c.Send(wire.Request{Op: "watch_room", Session: "s1", Params: params}); err != nil {
		t.Fatal(err)
	}
	if resp, err := c.Read(); err != nil || resp.Error != nil || !strings.Contains(string(resp.Result), `"watching"`) {
		t.Fatalf("watch %s: %v %+v", target, err, resp)
	}
	return func(want int) []rooms.Entry {
		var got []rooms.Entry
		var last time.Time
		for len(got) < want {
			resp, err := c.Read()
			if err != nil || resp.Error != nil {
				t.Errorf("watch: %v %+v", err, resp)
				return got
			}
			var e rooms.Entry
			if json.Unmarshal(resp.Result, &e) != nil || e.ReceivedAt == "" {
				continue // a keepalive
			}
			if !e.Time().After(last) {
				t.Errorf("watch: %s after %s", e.ReceivedAt, last)
				return got
			}
			last = e.Time()
			if e.Type == "chat.message" {
				got = append(got, e)
			}
		}
		return got
	}
}

// soakMessages is how many messages each soak writer sends: 2,000, or 500
// under the race detector, which makes the kernel and the claimers (all
// instrumented) several times slower — 32,000 messages took 4 minutes on
// a loaded 2-core machine, past the test's deadline. 8,000 still
// interleave 8 writers and 2 claimers on one room and one inbox.
func soakMessages() int {
	if testproc.Race {
		return 500
	}
	return 2000
}
