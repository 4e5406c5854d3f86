package actors

import (
	"os"
	"strconv"
	"testing"

	"github.com/pi-actors/pi-actors/runs"
)

// The sampler's allocation-free /proc/<pid>/stat reader agrees with
// runs.Stat on every process of the machine.
func TestUsageStatMatchesRunsStat(t *testing.T) {
	u := newUsageSampler()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		// A running process's RSS may change between the two reads: a
		// parse error shows in every attempt, a change in few.
		var got procStat
		var want runs.ProcStat
		agree, gone := false, false
		for range 5 {
			var ok bool
			got, ok = u.stat(pid)
			want, err = runs.Stat(pid)
			if !ok || err != nil || want.State == "Z" {
				gone = true // gone between the two reads, or a zombie
				break
			}
			// CPU ticks only grow between the two reads.
			if agree = got.sid == want.Sid && got.rss == want.RSS && got.cpu <= want.CPU; agree {
				break
			}
		}
		if gone {
			continue
		}
		n++
		if !agree {
			t.Errorf("pid %d: sampler %+v, runs.Stat %+v", pid, got, want)
		}
	}
	if n == 0 {
		t.Fatal("no process compared")
	}
	if _, ok := u.stat(1 << 30); ok {
		t.Error("a pid that does not exist was read")
	}
}
