package mailbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Finishing a message records an error of at most MaxDoneErrorBytes: a
// longer one is refused (field error, its size and the limit) before
// anything is written, in a branch queue and in a run inbox alike.
func TestDoneErrorBounded(t *testing.T) {
	big := map[string]any{"error": strings.Repeat("e", MaxDoneErrorBytes+1)}
	check := func(what, path string, done func(meta map[string]any) error) {
		t.Helper()
		before, _ := os.ReadFile(path)
		err := done(big)
		var ee *EnvelopeError
		if !errors.As(err, &ee) || ee.Field != "error" || ee.Bytes != MaxDoneErrorBytes+1 || ee.Limit != MaxDoneErrorBytes || !errors.Is(err, ErrInvalid) {
			t.Fatalf("%s: done with a large error: %v", what, err)
		}
		if after, _ := os.ReadFile(path); string(after) != string(before) {
			t.Fatalf("%s: the refused done wrote %d bytes", what, len(after)-len(before))
		}
		if err := done(map[string]any{"error": strings.Repeat("e", MaxDoneErrorBytes)}); err != nil {
			t.Fatalf("%s: done with a 4 KiB error: %v", what, err)
		}
	}
	q := newTestQueue(t)
	rec, _, err := q.Append(job(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Claim("w", 0); err != nil {
		t.Fatal(err)
	}
	check("queue", q.Path, func(meta map[string]any) error { return q.Done(rec.ID(), StatusFailed, meta) })

	in := NewInbox(filepath.Join(t.TempDir(), "inbox.jsonl"))
	r, _, err := in.Append(Envelope{To: "run:r", Type: "t", ID: "m1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.Claim("w"); err != nil {
		t.Fatal(err)
	}
	check("inbox", in.Path, func(meta map[string]any) error { return in.Done(r.ID(), StatusFailed, meta) })
}
