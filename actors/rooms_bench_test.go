package actors_test

import (
	"testing"
	"time"
)

// BenchmarkMessageBatch sends batches of 1,000 messages through the
// kernel (the socket, the route, the files) to a live run's inbox, its
// room and one of its branches, and reports messages/s beside the 5,000/s
// target of issue 11.
func BenchmarkMessageBatch(b *testing.B) {
	k := startTB(b)
	k.spawn("s1", "bench", "sleep-forever", nil)
	const n = 1000
	for _, route := range []struct{ name, to, from string }{
		{"run", "run:bench", ""}, {"room", "room:bench", "run:bench"}, {"branch", "branch:bench/w", ""},
	} {
		b.Run(route.name, func(b *testing.B) {
			items := make([]map[string]any, n)
			for i := range items {
				items[i] = map[string]any{"to": route.to, "type": "task.bench", "body": i}
				if route.from != "" {
					items[i]["from"] = route.from
				}
			}
			start := time.Now()
			for range b.N {
				resp := k.call("message", "s1", nil, items...)
				if resp.Error != nil || len(resp.Results) != n || resp.Results[n-1].Error != nil {
					b.Fatalf("batch: %+v", resp.Error)
				}
			}
			rate := float64(b.N*n) / time.Since(start).Seconds()
			b.ReportMetric(rate, "msgs/s")
			b.Logf("%s: %.0f messages/s (target ≥ 5000: ratio %.2f)", route.name, rate, rate/5000)
		})
	}
	k.call("message", "s1", map[string]any{"to": "run:bench", "type": "control.kill"})
}
