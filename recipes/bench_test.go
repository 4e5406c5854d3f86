package recipes

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/pi-actors/pi-actors/recipes/template"
)

// writeUserRecipes fills <agent>/recipes with n small, realistic recipes:
// plain leaves, typed args, sequences, parallel fans, and every fifth one
// importing another user recipe or a packaged one.
func writeUserRecipes(b *testing.B, agent string, n int) {
	b.Helper()
	root := UserRoot(agent)
	for i := 0; i < n; i++ {
		var body string
		switch i % 5 {
		case 0:
			body = fmt.Sprintf(`{"description": "Leaf %d", "args": ["file:path", "lines:int=20"], "template": "tail -n {lines} {file}"}`, i)
		case 1:
			body = fmt.Sprintf(`{"description": "Sequence %d", "args": "repo:path=.", "defaults": {"n": 5}, "template": ["git -C {repo} log --oneline -n {n}", "sort", "head -n 3"]}`, i)
		case 2:
			body = fmt.Sprintf(`{"description": "Fan %d", "args": ["items:array"], "template": {"parallel": true, "repeat": "{items.length}", "label": "item {index}", "template": "echo {items[index]}"}}`, i)
		case 3:
			body = fmt.Sprintf(`{"description": "Import user %d", "imports": {"prev": "r%04d", "tail": {"from": "utility-jsonl-tail", "defaults": {"lines": 5}}}, "template": [{"name": "prev"}, {"name": "tail", "values": {"file": "log.jsonl"}}]}`, i, i-1)
		case 4:
			body = fmt.Sprintf(`{"description": "Ask %d", "imports": {"p": "subagent-prompt"}, "mailbox": {"accepts": ["control.kill"]}, "template": {"name": "p", "defaults": {"model": "m%d", "prompt": "Task {topic}"}}}`, i, i)
		}
		writeFile(b, filepath.Join(root, fmt.Sprintf("r%04d.json", i)), body)
	}
}

// BenchmarkDiscover1000: cold discovery (no in-process cache) of 1,000 user
// recipes plus the packaged library. Target: under 50 ms.
func BenchmarkDiscover1000(b *testing.B) {
	agent := b.TempDir()
	writeUserRecipes(b, agent, 1000)
	if g, err := Discover(agent); err != nil || len(g.Active) < 1000 {
		b.Fatalf("setup: %v (%d active)", err, len(g.Active))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		g, err := Discover(agent)
		if err != nil {
			b.Fatal(err)
		}
		if g.Active["r0999"] == nil {
			b.Fatal("r0999 missing")
		}
	}
	ms := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / 1e6
	b.ReportMetric(ms, "ms/op")
	b.ReportMetric(ms/50, "ratio_to_50ms_target")
}

// BenchmarkImportChain32: resolving a 32-deep import chain (r0 → r31) and
// parsing the graph. Target: under 5 ms.
func BenchmarkImportChain32(b *testing.B) {
	dir := b.TempDir()
	entry := writeChain(b, dir, 31)
	r, err := Load(entry)
	if err != nil {
		b.Fatal(err)
	}
	rv := &Resolver{AgentDir: b.TempDir(), Home: b.TempDir()}
	if res, err := rv.Resolve(r); err != nil || len(res.Records) != 32 {
		b.Fatalf("setup: %v", err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := rv.Resolve(r)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := template.Parse(res.Graph); err != nil {
			b.Fatal(err)
		}
	}
	ms := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / 1e6
	b.ReportMetric(ms, "ms/op")
	b.ReportMetric(ms/5, "ratio_to_5ms_target")
}
