package dirwatch_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pi-actors/pi-actors/internal/dirwatch"
)

func newWatcher(t *testing.T) *dirwatch.Watcher {
	t.Helper()
	w, err := dirwatch.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// next is the next event, or fails after a while.
func next(t *testing.T, w *dirwatch.Watcher) dirwatch.Event {
	t.Helper()
	select {
	case ev := <-w.Events():
		return ev
	case err := <-w.Errors():
		t.Fatalf("error instead of an event: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("no event")
	}
	return dirwatch.Event{}
}

// none checks that no event is pending: a marker file written and closed
// after the writes under test must be the next event.
func none(t *testing.T, w *dirwatch.Watcher, dir string) {
	t.Helper()
	marker := filepath.Join(dir, "marker-"+strconv.FormatInt(time.Now().UnixNano(), 10))
	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, w); ev.Path != marker {
		t.Fatalf("event %s %#x before the marker", ev.Path, ev.Mask)
	}
}

func TestWrittenLeavesOutWritesOfAnOpenFile(t *testing.T) {
	dir := t.TempDir()
	w := newWatcher(t)
	if err := w.Add(dir, dirwatch.Written); err != nil {
		t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(dir, "stdout.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	for i := range 100 {
		fmt.Fprintln(log, "line", i)
	}
	none(t, w, dir)

	// A file written and closed, and one renamed in: one event each.
	out := filepath.Join(dir, "outbox.jsonl")
	if err := os.WriteFile(out, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, w); ev.Path != out || ev.Mask&unix.IN_CLOSE_WRITE == 0 {
		t.Fatalf("got %s %#x, want close-write of %s", ev.Path, ev.Mask, out)
	}
	tmp := filepath.Join(t.TempDir(), "result.json")
	os.WriteFile(tmp, []byte("{}"), 0o600)
	res := filepath.Join(dir, "result.json")
	if err := os.Rename(tmp, res); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, w); ev.Path != res || ev.Mask&unix.IN_MOVED_TO == 0 {
		t.Fatalf("got %s %#x, want moved-to of %s", ev.Path, ev.Mask, res)
	}

	// Asking for Modified: each write is an event; back to Written: none.
	if err := w.Add(dir, dirwatch.Modified); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(log, "seen")
	if ev := next(t, w); ev.Path != log.Name() || ev.Mask&unix.IN_MODIFY == 0 {
		t.Fatalf("got %s %#x, want modify of %s", ev.Path, ev.Mask, log.Name())
	}
	if err := w.Add(dir, dirwatch.Written); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(log, "unseen")
	none(t, w, dir)
}

func TestRemoveAndGone(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	w := newWatcher(t)
	for _, d := range []string{a, b} {
		if err := w.Add(d, dirwatch.Written); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Remove(a); err != nil {
		t.Fatal(err)
	}
	if err := w.Remove(a); err != nil {
		t.Fatalf("second remove: %v", err)
	}
	os.WriteFile(filepath.Join(a, "x"), nil, 0o600)
	none(t, w, b)

	// A watched directory removed: its watch ends with it, and removing
	// it afterwards is no error.
	if err := os.RemoveAll(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Remove(b); err != nil {
		t.Fatalf("remove after the directory went: %v", err)
	}
	if err := w.Add(filepath.Join(a, "missing"), dirwatch.Written); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("watching a missing dir: %v", err)
	}
}

func TestCloseEndsTheStreams(t *testing.T) {
	w, err := dirwatch.New()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	w.Add(dir, dirwatch.Written)
	os.WriteFile(filepath.Join(dir, "x"), nil, 0o600) // pending, never read
	time.Sleep(10 * time.Millisecond)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(5 * time.Second)
	for open := true; open; {
		select {
		case _, open = <-w.Events():
		case <-deadline:
			t.Fatal("Events still open after Close")
		}
	}
	if err := w.Add(dir, dirwatch.Written); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("Add after Close: %v", err)
	}
	w.Close() // twice is fine
}

func TestOverflow(t *testing.T) {
	b, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events")
	if err != nil {
		t.Skipf("no inotify limits: %v", err)
	}
	limit, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if limit <= 0 || limit > 100_000 {
		t.Skipf("max_queued_events %d: too many files to overflow it in a test", limit)
	}
	dir := t.TempDir()
	w := newWatcher(t)
	w.Add(dir, dirwatch.Written)
	// Distinct names do not merge; nobody reads while they queue (the
	// watcher's reader holds one read's worth, at most 4,096 events,
	// blocked on handing over the first).
	for i := range limit + 4200 {
		if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(i)), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.After(30 * time.Second)
	for {
		select {
		case <-w.Events():
		case err := <-w.Errors():
			if !errors.Is(err, dirwatch.ErrOverflow) {
				t.Fatalf("error %v, want ErrOverflow", err)
			}
			return
		case <-deadline:
			t.Fatal("no overflow reported")
		}
	}
}
