package swarm

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/runs"
)

// An actor's event file keeps its newest lines once past eventLimit: an
// idle worker's claims grew its journal for ever.
func TestEventFileIsBounded(t *testing.T) {
	defer func(n int64) { eventLimit = n }(eventLimit)
	eventLimit = 4096
	a := &actor{dir: runs.Dir(t.TempDir()), clock: time.Now}
	for i := range 500 {
		a.event(JournalFile, map[string]any{"event": "lock.waiting", "n": i})
	}
	data, err := os.ReadFile(a.dir.Path(JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 4096 {
		t.Fatalf("journal is %d bytes, want at most 4096", len(data))
	}
	if !strings.HasSuffix(string(data), "}\n") || !strings.Contains(string(data), `"n":499`) {
		t.Fatalf("the newest line is missing or the file is torn:\n%s", data[max(0, len(data)-200):])
	}
}
