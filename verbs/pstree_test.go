package verbs

import (
	"slices"
	"testing"

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
	rows := []RunRow{{Run: "wf"}, {Run: "wf-a", Parent: "wf"}, {Run: "deep", Parent: "wf-a"}, {Run: "orphan", Parent: "gone"}}
	if got, want := treeIDs(rows), []string{"wf", "└ wf-a", "  └ deep", "orphan"}; !slices.Equal(got, want) {
		t.Errorf("treeIDs = %q; want %q", got, want)
	}
}
