package actors

import (
	"testing"

	"github.com/pi-actors/pi-actors/runs"
)

// A spawn's live-run slot is handed over when its run is counted live:
// the run is never counted twice, so a concurrent spawn of the same
// session gets the slots that are free (a batch once started 8 of 10).
func TestLiveSlotHandedOverOnce(t *testing.T) {
	k := bareKernel(t)
	k.live = map[string]*liveRun{}
	k.cfg.Settings.Runs.MaxLivePerSession = 2
	slot, err := k.reserveLive("s")
	if err != nil {
		t.Fatal(err)
	}
	k.addLive(&liveRun{id: "a", owner: "s", dir: runs.Dir("/x/a")}, slot)
	count := func() int {
		k.mu.Lock()
		defer k.mu.Unlock()
		return k.liveCountLocked("s")
	}
	if n := count(); n != 1 {
		t.Fatalf("one live run counts %d before its spawn returns", n)
	}
	k.releaseLive(slot) // the spawn's deferred release: a no-op now
	if n := count(); n != 1 {
		t.Fatalf("one live run counts %d", n)
	}
	second, err := k.reserveLive("s")
	if err != nil {
		t.Fatalf("the second of 2 slots refused: %v", err)
	}
	if _, err := k.reserveLive("s"); err == nil {
		t.Fatal("a third spawn got a slot with a limit of 2")
	}
	k.releaseLive(second)
	k.releaseLive(second)
	if _, err := k.reserveLive("s"); err != nil {
		t.Fatalf("a released slot is not free again: %v", err)
	}
	if slot, err := k.reserveLive(""); slot != nil || err != nil {
		t.Fatalf("no session: slot %v err %v, want none", slot, err)
	}
}
