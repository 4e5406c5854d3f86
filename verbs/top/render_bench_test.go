package top

import (
	"fmt"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/verbs"
)

// manyRuns is a first frame of n live runs (every tenth with a child).
func manyRuns(n int) *verbs.EventsFrame {
	f := &verbs.EventsFrame{Snapshot: true}
	for i := range n {
		r := verbs.RunRow{Run: fmt.Sprintf("run-%04d", i), Status: "running", Owner: "s1", Command: "sh -c 'while :; do echo tick; sleep 2; done'",
			Pid: 1000 + i, CreatedAt: clock.Add(-time.Duration(i) * time.Second), CPUPercent: 0.1, RSSBytes: 6 << 20,
			LastLine: fmt.Sprintf("tick %d", i), StateDir: fmt.Sprintf("/runs/run-%04d", i)}
		if i%10 == 1 {
			r.Parent = fmt.Sprintf("run-%04d", i-1)
		}
		f.Runs = append(f.Runs, r)
	}
	return f
}

// BenchmarkFrame1000 is one screen update with 1,000 live runs: a frame
// of 50 changed runs applied (the tree rebuilt) and the 80×24 screen
// rendered. It prints frames/s beside the target (≥ 10).
func BenchmarkFrame1000(b *testing.B) {
	m := New(&verbs.Env{AgentDir: b.TempDir()}, 80, 24, true)
	m.now = func() time.Time { return clock }
	m.Apply(manyRuns(1000))
	change := &verbs.EventsFrame{}
	for i := range 50 {
		r := m.rows[fmt.Sprintf("/runs/run-%04d", i*20)]
		change.Runs = append(change.Runs, r)
	}
	b.ResetTimer()
	start := time.Now()
	for i := 0; b.Loop(); i++ {
		for j := range change.Runs {
			change.Runs[j].LastLine = fmt.Sprintf("tick %d", i)
		}
		m.Apply(change)
		_ = m.Render()
	}
	per := time.Since(start) / time.Duration(b.N)
	b.ReportMetric(float64(time.Second)/float64(per), "frames/s")
	b.Logf("1,000 live runs: %s per frame (apply 50 changes + render 80×24) = %.0f frames/s (target >= 10)", per, float64(time.Second)/float64(per))
}
