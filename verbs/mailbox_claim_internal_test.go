package verbs

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/internal/fsutil"
	"github.com/pi-actors/pi-actors/mailbox"
)

// A claim that meets an inbox lock held past mailbox.LockWait tries again
// while its wait lasts (a busy inbox, not a broken one); past the wait,
// or with any other error, it reports the error.
func TestClaimWaitRetriesABusyLock(t *testing.T) {
	busy := fmt.Errorf("lock /x: %w after 5s", fsutil.ErrLockTimeout)
	want := mailbox.Record{"id": "m1"}
	calls := 0
	rec, err := claimWait(context.Background(), func() (mailbox.Record, error) {
		calls++
		if calls < 3 {
			return nil, busy
		}
		return want, nil
	}, nil, time.Second)
	if err != nil || rec["id"] != "m1" || calls != 3 {
		t.Fatalf("claim after two busy locks: %v %v after %d tries", rec, err, calls)
	}
	calls = 0
	if _, err := claimWait(context.Background(), func() (mailbox.Record, error) { calls++; return nil, busy }, nil, 0); err == nil || calls != 1 {
		t.Errorf("busy with no wait left: %v after %d tries, want the error after one", err, calls)
	}
	other := fmt.Errorf("read inbox: permission denied")
	calls = 0
	if _, err := claimWait(context.Background(), func() (mailbox.Record, error) { calls++; return nil, other }, nil, time.Second); err != other || calls != 1 {
		t.Errorf("another error: %v after %d tries", err, calls)
	}
}
