package graph

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/knowledge/api/graphop"
	"github.com/pi-actors/pi-actors/knowledge/store"
)

// Benchmarks print their figure beside the target:
//
//	go test -run '^$' -bench . -benchtime 1x ./knowledge
//
// The store fixture (10,000 atoms, 5 patterns each) is built once per
// benchmark binary and shared.

const benchAtoms = 10_000

var (
	fixtureOnce sync.Once
	fixturePath string
	fixtureProj string
	fixtureErr  error
)

func benchPatterns(i int) graphop.Patterns {
	return graphop.Patterns{
		fmt.Sprintf("src/m%d/**", i), fmt.Sprintf("src/m%d/*.ts", i), fmt.Sprintf("lib/m%d/*.go", i),
		fmt.Sprintf("docs/m%d/**/*.md", i), fmt.Sprintf("test/m%d/**", i),
	}
}

var benchWords = strings.Fields("webhook handler gateway locale registry checkout payment retry backoff event bus stream cache token session ledger invoice refund")

// createAtoms creates n atoms in a new store at path, one call each.
func createAtoms(path string, n int) (string, error) {
	s, closeDB, err := openFile(path)
	if err != nil {
		return "", err
	}
	defer closeDB()
	ctx := context.Background()
	p, err := s.CreateProject(ctx, store.Caller{}, &graphop.ProjectCreate{Name: "bench", Root: filepath.Dir(path)})
	if err != nil {
		return "", err
	}
	c := store.Caller{RunID: "bench"}
	for i := range n {
		name := fmt.Sprintf("atom %05d %s", i, benchWords[i%len(benchWords)])
		k := fmt.Sprintf("%s %s number%d integrates with %s", benchWords[i%7], benchWords[(i/7)%len(benchWords)], i, benchWords[(i/3)%len(benchWords)])
		req := &graphop.ManageGraph{Operation: "create", EntityType: "atom", ProjectID: p.ID, Name: &name, Paths: benchPatterns(i), Knowledge: &k}
		if e := req.Validate(); e != nil {
			return "", e
		}
		if _, err := s.ManageGraph(ctx, c, req); err != nil {
			return "", err
		}
	}
	return p.ID, nil
}

func fixture(b *testing.B) (string, string) {
	fixtureOnce.Do(func() {
		dir, err := os.MkdirTemp("", "knowledge-bench-")
		if err != nil {
			fixtureErr = err
			return
		}
		fixturePath = filepath.Join(dir, "k.db")
		fixtureProj, fixtureErr = createAtoms(fixturePath, benchAtoms)
	})
	if fixtureErr != nil {
		b.Fatal(fixtureErr)
	}
	return fixturePath, fixtureProj
}

func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

func report(b *testing.B, what string, got, target time.Duration) {
	b.ReportMetric(float64(got)/float64(time.Millisecond), "ms")
	b.Logf("%s: %v (target ≤ %v, %.2f of target)", what, got.Round(time.Microsecond), target, float64(got)/float64(target))
}

func BenchmarkCreate10kAtoms(b *testing.B) {
	var total time.Duration
	n := 0
	for b.Loop() {
		path := filepath.Join(b.TempDir(), "k.db")
		start := time.Now()
		if _, err := createAtoms(path, benchAtoms); err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
		n++
	}
	report(b, "create 10,000 atoms (5 patterns each, one call each)", total/time.Duration(n), 2*time.Second)
}

// BenchmarkCreate10kAtomsBatched creates the same 10,000 atoms in
// batches of 1,000 (Store.Batch: one transaction per batch), and in one
// batch of 10,000 (what `manage_graph -` with 10,000 requests does).
func BenchmarkCreate10kAtomsBatched(b *testing.B) {
	b.Run("1000", func(b *testing.B) { benchCreateBatched(b, 1000) })
	b.Run("10000", func(b *testing.B) { benchCreateBatched(b, 10000) })
}

func benchCreateBatched(b *testing.B, size int) {
	var total time.Duration
	n := 0
	ctx := context.Background()
	for b.Loop() {
		s, closeDB, err := openFile(filepath.Join(b.TempDir(), "k.db"))
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		p, err := s.CreateProject(ctx, store.Caller{}, &graphop.ProjectCreate{Name: "bench", Root: "/bench"})
		if err != nil {
			b.Fatal(err)
		}
		for lo := 0; lo < benchAtoms; lo += size {
			var reqs []*graphop.ManageGraph
			for i := lo; i < lo+size; i++ {
				name, k := fmt.Sprintf("atom %05d", i), fmt.Sprintf("%s number%d", benchWords[i%len(benchWords)], i)
				reqs = append(reqs, &graphop.ManageGraph{Operation: "create", EntityType: "atom", ProjectID: p.ID, Name: &name, Paths: benchPatterns(i), Knowledge: &k})
			}
			if _, err := s.Batch(ctx, store.Caller{RunID: "bench"}, reqs); err != nil {
				b.Fatal(err)
			}
		}
		total += time.Since(start)
		n++
		closeDB()
	}
	report(b, fmt.Sprintf("create 10,000 atoms (5 patterns each) in batches of %d", size), total/time.Duration(n), 2*time.Second)
}

func benchPaths(n int) []string {
	r := rand.New(rand.NewPCG(1, 2))
	out := make([]string, n)
	for i := range out {
		m := r.IntN(benchAtoms)
		switch i % 5 {
		case 0:
			out[i] = fmt.Sprintf("src/m%d/handler.ts", m)
		case 1:
			out[i] = fmt.Sprintf("lib/m%d/gateway.go", m)
		case 2:
			out[i] = fmt.Sprintf("docs/m%d/guide/intro.md", m)
		case 3:
			out[i] = fmt.Sprintf("src/m%d/deep/nested/file.tsx", m)
		default:
			out[i] = fmt.Sprintf("other/unmatched%d.txt", m)
		}
	}
	return out
}

func BenchmarkContext1000Paths(b *testing.B) {
	path, pid := fixture(b)
	s, closeDB, err := openFile(path)
	if err != nil {
		b.Fatal(err)
	}
	defer closeDB()
	paths := benchPaths(1000)
	ctx := context.Background()
	start := time.Now()
	if _, err := s.Context(ctx, store.Caller{}, pid, paths, true, 5); err != nil {
		b.Fatal(err)
	}
	first := time.Since(start)
	var ds []time.Duration
	for b.Loop() {
		for range 10 {
			t0 := time.Now()
			res, err := s.Context(ctx, store.Caller{}, pid, paths, true, 5)
			if err != nil {
				b.Fatal(err)
			}
			if len(res.OrphanAtoms) == 0 || len(res.UnmatchedPaths) == 0 {
				b.Fatal("no matches")
			}
			ds = append(ds, time.Since(t0))
		}
	}
	b.Logf("context first call (builds the match index for 50,000 patterns): %v", first.Round(time.Microsecond))
	report(b, "context, 1,000 paths against 10,000 atoms x 5 patterns, median in-process (CLI target 50 ms)", median(ds), 50*time.Millisecond)
}

func BenchmarkSearchFTS10k(b *testing.B) {
	path, pid := fixture(b)
	s, closeDB, err := openFile(path)
	if err != nil {
		b.Fatal(err)
	}
	defer closeDB()
	ctx := context.Background()
	var ds []time.Duration
	i := 0
	for b.Loop() {
		for range 50 {
			q := &graphop.QueryGraph{Operation: "search", EntityType: "atom", ProjectID: pid, Query: benchWords[i%len(benchWords)] + " " + benchWords[(i+3)%len(benchWords)]}
			i++
			t0 := time.Now()
			v, err := s.QueryGraph(ctx, store.Caller{}, q)
			if err != nil {
				b.Fatal(err)
			}
			ds = append(ds, time.Since(t0))
			_ = v
		}
	}
	report(b, "text search (FTS5, two words, page of 20) over 10,000 atoms, median", median(ds), 5*time.Millisecond)
}

func BenchmarkOpen(b *testing.B) {
	path, _ := fixture(b)
	var ds []time.Duration
	for b.Loop() {
		t0 := time.Now()
		s, closeDB, err := openFile(path)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Counts(context.Background()); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(t0))
		closeDB()
	}
	report(b, "open a 10,000-atom store (header check, migrations check, first query), median", median(ds), 20*time.Millisecond)
}
