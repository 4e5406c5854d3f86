package actors

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// keepNewest keeps a log's newest records within the count and the byte
// budget, never drops a malformed line (mailbox would refuse the
// rewrite), and writes nothing when there is nothing to drop.
func TestKeepNewestRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	var b strings.Builder
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&b, "{\"id\":\"%d\"}\n", i)
		if i == 2 {
			b.WriteString("not json\n") // among the records to drop
		}
	}
	os.WriteFile(path, []byte(b.String()), 0o600)
	lines := func() string {
		data, _ := os.ReadFile(path)
		return strings.ReplaceAll(strings.TrimSpace(string(data)), "\n", " ")
	}
	if n, err := keepNewest(path, 20, 1<<20); n != 0 || err != nil {
		t.Fatalf("nothing to drop: dropped %d, %v", n, err)
	}
	if n, err := keepNewest(path, 4, 1<<20); n != 6 || err != nil {
		t.Fatalf("keep 4: dropped %d, %v", n, err)
	}
	if got, want := lines(), `not json {"id":"7"} {"id":"8"} {"id":"9"} {"id":"10"}`; got != want {
		t.Fatalf("keep 4: %s, want %s", got, want)
	}
	// {"id":"10"} and its newline are 12 bytes: a 30-byte budget keeps two.
	if n, err := keepNewest(path, 4, 30); n != 2 || err != nil {
		t.Fatalf("30 bytes: dropped %d, %v", n, err)
	}
	if got, want := lines(), `not json {"id":"9"} {"id":"10"}`; got != want {
		t.Fatalf("30 bytes: %s, want %s", got, want)
	}
}
