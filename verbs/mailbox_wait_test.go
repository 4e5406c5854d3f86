package verbs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/mailbox"
)

// A claim waiting on a run's directory is woken by a file written and
// closed there (a message appended to the inbox), not by each write of
// the run's output beside it: a run printing 2,000 lines while the claim
// waits costs a handful of claim attempts (the 250 ms poll), not one per
// line.
func TestClaimWaitIgnoresOutputWrites(t *testing.T) {
	dir := t.TempDir()
	log, err := os.Create(filepath.Join(dir, "stdout.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	inbox := filepath.Join(dir, "inbox.jsonl")
	var attempts atomic.Int64
	claim := func() (mailbox.Record, error) {
		attempts.Add(1)
		lines, err := mailbox.Read(inbox)
		if err != nil || len(lines) == 0 {
			return nil, err
		}
		return mailbox.Record(lines[0].Value), nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan mailbox.Record, 1)
	go func() {
		rec, err := claimWait(ctx, claim, []string{dir}, time.Minute)
		if err != nil {
			t.Error(err)
		}
		got <- rec
	}()
	for i := range 2000 {
		fmt.Fprintln(log, "line", i)
		if i%100 == 0 {
			time.Sleep(10 * time.Millisecond) // spread over about 200 ms
		}
	}
	if n := attempts.Load(); n > 10 {
		t.Fatalf("%d claim attempts while the run printed 2,000 lines", n)
	}
	if err := mailbox.Append(inbox, map[string]any{"id": "m1", "type": "x"}); err != nil {
		t.Fatal(err)
	}
	select {
	case rec := <-got:
		if rec == nil || rec["id"] != "m1" {
			t.Fatalf("claimed %v", rec)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the claim did not take the appended message")
	}
}
