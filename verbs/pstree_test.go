package verbs

import (
	"slices"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/runs"
)

// TestTreeOrder: child runs follow their parent (a workflow's nodes under
// the workflow), in the order given; a run whose parent is not listed, or
// a parent cycle, keeps its place.
func TestTreeOrder(t *testing.T) {
	info := func(run, parent string) *runs.Info {
		return &runs.Info{Meta: &runs.Meta{Run: run, Parent: parent}}
	}
	list := []*runs.Info{info("wf-b", "wf"), info("other", ""), info("wf", ""), info("wf-a", "wf"), info("deep", "wf-a"),
		info("orphan", "gone"), info("x", "y"), info("y", "x")}
	var got []string
	for _, in := range treeOrder(list) {
		got = append(got, in.Meta.Run)
	}
	if want := []string{"other", "wf", "wf-b", "wf-a", "deep", "orphan", "x", "y"}; !slices.Equal(got, want) {
		t.Errorf("treeOrder = %v; want %v", got, want)
	}
	// The nodes of an earlier workflow of the same id (started before
	// it) are not its children.
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(in *runs.Info, d time.Duration) *runs.Info { in.Meta.CreatedAt = t0.Add(d); return in }
	list = []*runs.Info{at(info("old-a", "wf"), 0), at(info("wf", ""), time.Minute), at(info("new-a", "wf"), 2*time.Minute)}
	got = nil
	for _, in := range treeOrder(list) {
		got = append(got, in.Meta.Run)
	}
	if want := []string{"old-a", "wf", "new-a"}; !slices.Equal(got, want) {
		t.Errorf("treeOrder with an earlier instance's node = %v; want %v", got, want)
	}
	rows := []RunRow{{Run: "wf"}, {Run: "wf-a", Parent: "wf"}, {Run: "deep", Parent: "wf-a"}, {Run: "orphan", Parent: "gone"}}
	if got, want := treeIDs(rows), []string{"wf", "└ wf-a", "  └ deep", "orphan"}; !slices.Equal(got, want) {
		t.Errorf("treeIDs = %q; want %q", got, want)
	}
	rows = []RunRow{{Run: "wf", CreatedAt: t0.Add(time.Minute)}, {Run: "old-a", Parent: "wf", CreatedAt: t0}, {Run: "new-a", Parent: "wf", CreatedAt: t0.Add(2 * time.Minute)}}
	if got, want := treeIDs(rows), []string{"wf", "old-a", "└ new-a"}; !slices.Equal(got, want) {
		t.Errorf("treeIDs with an earlier instance's node = %q; want %q", got, want)
	}
}
