package mailbox

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/internal/testproc"
)

// helperVar selects a helper mode in the test binary: when set, TestMain
// runs runHelper(os.Args[1:]) instead of the tests, so concurrency tests
// use real OS processes.
const helperVar = "PI_ACTORS_MAILBOX_HELPER"

// gateVar names a file helpers wait for, so they all start at once.
const gateVar = "PI_ACTORS_MAILBOX_GATE"

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

// runHelper modes:
//
//	append PATH N TAG   append N records {tag, i, pad}: even i through
//	                    Append (odd batches of 2), odd i through Inbox.Append
//	claim PATH OWNER    claim and mark handled until the inbox is empty,
//	                    printing each claimed id
//	send PATH N TAG     send envelopes with ids id-0 … id-(N-1), printing
//	                    "new" or "dup" for each
func runHelper(args []string) error {
	if len(args) < 3 {
		return fmt.Errorf("usage: append PATH N TAG | claim PATH OWNER | send PATH N TAG")
	}
	// Start together: wait until the test opens the gate.
	if gate := os.Getenv(gateVar); gate != "" {
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Microsecond) {
			if _, err := os.Stat(gate); err == nil {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("gate %s never opened", gate)
			}
		}
	}
	switch args[0] {
	case "append":
		n, _ := strconv.Atoi(args[2])
		in := NewInbox(args[1])
		for i := 0; i < n; i++ {
			pad := strings.Repeat("x", (i*7919)%9000) // up to ~9 KB, past any page size
			rec := map[string]any{"tag": args[3], "i": i, "pad": pad}
			var err error
			if i%2 == 0 {
				if i%4 == 0 && i+1 < n {
					// A batch: two lines in one write; i+1 goes through the inbox.
					err = Append(args[1], rec, map[string]any{"tag": args[3], "batch": i})
				} else {
					err = Append(args[1], rec)
				}
			} else {
				_, _, err = in.Append(rec)
			}
			if err != nil {
				return err
			}
		}
		return nil
	case "send":
		n, _ := strconv.Atoi(args[2])
		in := NewInbox(args[1])
		w := bufio.NewWriter(os.Stdout)
		defer w.Flush()
		for i := range n {
			_, dup, err := in.Append(Envelope{To: "run:x", Type: "job", Body: args[3], ID: fmt.Sprintf("id-%d", i)})
			if err != nil {
				return err
			}
			fmt.Fprintln(w, map[bool]string{false: "new", true: "dup"}[dup])
		}
		return nil
	case "claim":
		in := NewInbox(args[1])
		w := bufio.NewWriter(os.Stdout)
		defer w.Flush()
		for {
			rec, err := in.Claim(args[2])
			if err != nil {
				return err
			}
			if rec == nil {
				return nil
			}
			fmt.Fprintln(w, rec.ID())
			if err := in.Done(rec.ID(), StatusHandled, map[string]any{"by": args[2]}); err != nil {
				return err
			}
		}
	}
	return fmt.Errorf("unknown helper %q", args[0])
}

// startHelpers runs procs helper processes, released together once all
// have started, and returns their stdouts.
func startHelpers(t *testing.T, procs int, args func(i int) []string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out := make([]string, procs)
	gate := filepath.Join(t.TempDir(), "gate")
	var wg sync.WaitGroup
	for p := range procs {
		cmd := exec.CommandContext(ctx, os.Args[0], args(p)...)
		cmd.Env = append(os.Environ(), helperVar+"=1", gateVar+"="+gate)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := cmd.Wait(); err != nil {
				t.Errorf("helper %d: %v\n%s", p, err, stderr.Bytes())
			}
			out[p] = stdout.String()
		}()
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	return out
}

// TestConcurrentAppendsFromProcesses: 12 processes append at once, mixing
// single lines, two-line batches and inbox appends of up to 9 KB; every
// line lands whole, none is lost, each process's order is kept.
func TestConcurrentAppendsFromProcesses(t *testing.T) {
	const procs, n = 12, 120
	path := filepath.Join(t.TempDir(), "inbox.jsonl")
	startHelpers(t, procs, func(p int) []string {
		return []string{"append", path, strconv.Itoa(n), fmt.Sprintf("p%02d", p)}
	})
	lines, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	next := map[string]int{}
	batches := 0
	for _, l := range lines {
		if l.Err != nil || l.Partial {
			t.Fatalf("line %d is damaged: %v %.80s", l.N, l.Err, l.Raw)
		}
		tag := l.Value["tag"].(string)
		if _, ok := l.Value["batch"]; ok {
			batches++
			continue
		}
		i, _ := strconv.Atoi(fmt.Sprint(l.Value["i"]))
		if i != next[tag] {
			t.Fatalf("%s: record %d after %d", tag, i, next[tag]-1)
		}
		if pad := l.Value["pad"].(string); len(pad) != (i*7919)%9000 {
			t.Fatalf("%s/%d: pad of %d bytes", tag, i, len(pad))
		}
		if i%2 == 1 && Record(l.Value).Status() != StatusQueued {
			t.Fatalf("%s/%d: inbox record without status", tag, i)
		}
		next[tag]++
	}
	for p := range procs {
		if tag := fmt.Sprintf("p%02d", p); next[tag] != n {
			t.Errorf("%s: %d records, want %d", tag, next[tag], n)
		}
	}
	if batches != procs*n/4 {
		t.Errorf("%d batch lines, want %d", batches, procs*n/4)
	}
}

// TestConcurrentClaimsFromProcesses: several processes drain one inbox;
// every record is handed out exactly once and the malformed lines
// survive every rewrite.
func TestConcurrentClaimsFromProcesses(t *testing.T) {
	const procs, n = 6, 90
	in := newTestInbox(t)
	os.WriteFile(in.Path, []byte("first garbage\n"), 0o600)
	want := map[string]bool{}
	for i := range n {
		rec, _, err := in.Append(Envelope{To: "run:x", Type: "job", Body: i})
		if err != nil {
			t.Fatal(err)
		}
		want[rec.ID()] = true
		if i == n/2 {
			Append(in.Path, map[string]any{"type": "legacy-without-id"})
			f, _ := os.OpenFile(in.Path, os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString("{\"torn\":") // the next append closes it off
			f.Close()
		}
	}
	outs := startHelpers(t, procs, func(p int) []string {
		return []string{"claim", in.Path, fmt.Sprintf("w%d", p)}
	})
	seen := map[string]string{}
	for p, out := range outs {
		t.Logf("w%d claimed %d", p, len(strings.Fields(out)))
		for _, id := range strings.Fields(out) {
			if prev, ok := seen[id]; ok {
				t.Fatalf("record %s handed to w%s and w%d", id, prev, p)
			}
			seen[id] = strconv.Itoa(p)
		}
	}
	if len(seen) != n+1 {
		t.Fatalf("%d records claimed, want %d", len(seen), n+1)
	}
	for id := range want {
		if seen[id] == "" {
			t.Fatalf("record %s never claimed", id)
		}
	}
	lines, _ := Read(in.Path)
	var bad []string
	for _, l := range lines {
		if l.Err != nil {
			bad = append(bad, string(l.Raw))
			continue
		}
		if r := Record(l.Value); r.Status() != StatusHandled || r["by"] != r["claimed_by"] {
			t.Fatalf("record not handled by its claimant: %v", r)
		}
	}
	if strings.Join(bad, "|") != `first garbage|{"torn":` {
		t.Fatalf("malformed lines: %q", bad)
	}
}

// TestConcurrentRetriesFromProcesses: processes retry the same sends at
// once; each id is stored exactly once and exactly one sender sees it new.
func TestConcurrentRetriesFromProcesses(t *testing.T) {
	const procs, n = 6, 200
	path := filepath.Join(t.TempDir(), "inbox.jsonl")
	outs := startHelpers(t, procs, func(p int) []string {
		return []string{"send", path, strconv.Itoa(n), fmt.Sprintf("p%d", p)}
	})
	fresh := 0
	for _, out := range outs {
		fresh += strings.Count(out, "new")
	}
	lines, _ := Read(path)
	ids := map[string]int{}
	for _, l := range lines {
		ids[Record(l.Value).ID()]++
	}
	if fresh != n || len(lines) != n || len(ids) != n {
		t.Fatalf("%d sends reported new, %d lines, %d distinct ids; want %d each", fresh, len(lines), len(ids), n)
	}
}
