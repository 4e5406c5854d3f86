package actors

import (
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/mailbox"
)

// queueFollowups writes n follow-ups to a session's queue as enqueue does
// (without waking watchers: no actor system here).
func queueFollowups(tb testing.TB, k *Kernel, session string, n int) {
	tb.Helper()
	q := mailbox.NewInbox(k.sessionFile(session))
	for i := range n {
		f := Followup{ID: fmt.Sprintf("f-%05d", i), Kind: "transition", Run: fmt.Sprintf("r%d", i), Status: "done", TS: time.Now().UTC()}
		if _, _, err := q.Append(map[string]any{"id": f.ID, "type": "run.followup", "body": f}); err != nil {
			tb.Fatal(err)
		}
	}
}

func bareKernel(tb testing.TB) *Kernel {
	return &Kernel{tmp: filepath.Join(tb.TempDir(), "tmp"), log: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

func TestDrainTakesEveryFollowupOnceInOrder(t *testing.T) {
	k := bareKernel(t)
	queueFollowups(t, k, "s", 1000)
	got := k.drain("s")
	if len(got) != 1000 {
		t.Fatalf("drained %d follow-ups, want 1000", len(got))
	}
	for i, f := range got {
		if want := fmt.Sprintf("f-%05d", i); f.ID != want {
			t.Fatalf("follow-up %d is %s, want %s", i, f.ID, want)
		}
	}
	if again := k.drain("s"); len(again) != 0 {
		t.Fatalf("a second drain took %d follow-ups again", len(again))
	}
	// The queue keeps only the newest delivered records.
	recs, _, err := mailbox.NewInbox(k.sessionFile("s")).List(5000)
	if err != nil || len(recs) != 1000 {
		t.Fatalf("queue holds %d records (%v), want 1000", len(recs), err)
	}
}

func TestTakeClaimsABatchAndRedeliversUnfinished(t *testing.T) {
	k := bareKernel(t)
	queueFollowups(t, k, "s", 10)
	first, more := k.take("s", 4)
	if len(first) != 4 || first[0].ID != "f-00000" || first[3].ID != "f-00003" || more != 6 {
		t.Fatalf("take 4 = %v (%d more queued, want 6)", first, more)
	}
	k.delivered("s", first[0].ID, first[1].ID)
	// f-00002 and f-00003 stay claimed (a watcher that went away): the
	// next reader gets the queued ones now, the claimed ones after
	// redeliverAfter.
	rest := k.drain("s")
	if len(rest) != 6 || rest[0].ID != "f-00004" {
		t.Fatalf("drain after a batch = %v", rest)
	}
}

// BenchmarkDrainFollowups1000: one drain of a session queue holding 1,000
// follow-ups (issue #20: ≤ 50 ms; it was quadratic — a rewrite with fsync
// per follow-up). scripts/bench-runs.sh prints it.
func BenchmarkDrainFollowups1000(b *testing.B) {
	k := bareKernel(b)
	var total time.Duration
	for i := range b.N {
		s := fmt.Sprintf("s%d", i)
		queueFollowups(b, k, s, 1000)
		t0 := time.Now()
		if n := len(k.drain(s)); n != 1000 {
			b.Fatalf("drained %d", n)
		}
		total += time.Since(t0)
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/drain")
	b.ReportMetric(0, "ns/op")
}
