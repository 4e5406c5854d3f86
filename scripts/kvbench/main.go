// Command kvbench is the Go half of scripts/bench-knowledge-vectors.sh: it
// builds a knowledge store of synthetic nodes across the three domains
// with the local embedder (or reuses one built earlier), reopens it, and
// measures the vector graph's operations in process. Every figure is one
// "key value" line for the script to lay out beside its target.
//
//	kvbench -dir D [-n 100000] [-queries 300] [-captures 200]
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/pi-actors/pi-actors/knowledge"
	"github.com/pi-actors/pi-actors/knowledge/api/vectorop"
	"github.com/pi-actors/pi-actors/knowledge/store"
	"github.com/pi-actors/pi-actors/knowledge/vector"
)

func main() {
	dir := flag.String("dir", "", "directory of the store (kept between runs)")
	n := flag.Int("n", 100000, "nodes: 60% code, 30% history, 10% academic")
	queries := flag.Int("queries", 300, "search_all queries timed")
	captures := flag.Int("captures", 200, "run captures timed")
	prof := flag.String("cpuprofile", "", "write a CPU profile of the timed part")
	flag.Parse()
	if *prof != "" {
		f, err := os.Create(*prof)
		if err != nil {
			fmt.Fprintln(os.Stderr, "kvbench:", err)
			os.Exit(1)
		}
		profile = f
	}
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "usage: kvbench -dir D [-n N] [-queries Q] [-captures C]")
		os.Exit(2)
	}
	if err := run(*dir, *n, *queries, *captures); err != nil {
		fmt.Fprintln(os.Stderr, "kvbench:", err)
		os.Exit(1)
	}
}

var profile *os.File

func out(key string, v any) { fmt.Printf("%s %v\n", key, v) }

func ms(d time.Duration) string { return fmt.Sprintf("%.3f", float64(d.Microseconds())/1000) }

func run(dir string, n, queries, captures int) error {
	ctx := context.Background()
	path := filepath.Join(dir, fmt.Sprintf("bench-%d.db", n))
	gen := newCorpus(n)
	if _, err := os.Stat(path); err != nil {
		if err := build(ctx, path, gen); err != nil {
			return err
		}
	} else {
		out("reused_store", path)
	}
	runtime.GC()
	if profile != nil {
		pprof.StartCPUProfile(profile)
	}
	t0 := time.Now()
	s, err := knowledge.Open(path, knowledge.Options{Layer: "project"})
	if err != nil {
		return err
	}
	defer s.Close()
	if err := s.Vectors().SyncIndexes(ctx); err != nil {
		return err
	}
	out("load_ms", ms(time.Since(t0)))
	if profile != nil {
		pprof.StopCPUProfile()
	}
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	out("heap_mib", fmt.Sprintf("%.1f", float64(m.HeapAlloc)/(1<<20)))
	st, err := s.Status(ctx)
	if err != nil {
		return err
	}
	out("nodes", st.Vectors.Nodes)
	for _, d := range st.Vectors.Domains {
		out("index_"+d.Domain, fmt.Sprintf("%s/%d", d.Index, d.Vectors))
	}
	if err := timeSearches(ctx, s.Vectors(), gen, queries); err != nil {
		return err
	}
	return timeCaptures(ctx, s.Vectors(), captures)
}

// build fills a new store with the corpus and writes its indexes.
func build(ctx context.Context, path string, gen *corpus) error {
	s, err := knowledge.Open(path, knowledge.Options{Layer: "project"})
	if err != nil {
		return err
	}
	defer s.Close()
	t0 := time.Now()
	const batch = 1000
	for i := 0; i < gen.n; i += batch {
		reqs := make([]*vectorop.NodeAdd, 0, batch)
		for j := i; j < min(i+batch, gen.n); j++ {
			reqs = append(reqs, gen.node(j))
		}
		if _, err := s.Vectors().AddNodes(ctx, store.Caller{}, reqs); err != nil {
			return err
		}
	}
	ins := time.Since(t0)
	out("insert_s", fmt.Sprintf("%.1f", ins.Seconds()))
	out("insert_nodes_per_s", fmt.Sprintf("%.0f", float64(gen.n)/ins.Seconds()))
	t1 := time.Now()
	if err := s.Vectors().SyncIndexes(ctx); err != nil {
		return err
	}
	out("index_build_s", fmt.Sprintf("%.1f", time.Since(t1).Seconds()))
	return nil
}

// timeSearches times search_all (the target), one-domain search, and
// queries that every filter rules out.
func timeSearches(ctx context.Context, s *vector.Store, gen *corpus, queries int) error {
	qs := make([]string, queries)
	for i := range qs {
		qs[i] = gen.query(i)
	}
	// The queries the script times through the CLI.
	fmt.Printf("cli_queries %s\n", strings.Join(qs[:min(25, len(qs))], "|"))
	for _, q := range qs[:min(20, len(qs))] { // warm up
		if _, err := s.SearchAll(ctx, &vectorop.SearchAll{Query: q}); err != nil {
			return err
		}
	}
	var all, one, none []time.Duration
	hits := 0
	for i, q := range qs {
		t := time.Now()
		r, err := s.SearchAll(ctx, &vectorop.SearchAll{Query: q})
		if err != nil {
			return err
		}
		all = append(all, time.Since(t))
		for _, d := range r.Results {
			hits += len(d.Hits)
		}
		t = time.Now()
		if _, err := s.Search(ctx, &vectorop.Search{Query: q, Domain: vectorop.AllDomains[i%3]}); err != nil {
			return err
		}
		one = append(one, time.Since(t))
		t = time.Now()
		if _, err := s.SearchAll(ctx, &vectorop.SearchAll{Query: absent(i)}); err != nil {
			return err
		}
		none = append(none, time.Since(t))
	}
	for _, x := range []struct {
		name string
		d    []time.Duration
	}{{"search_all", all}, {"search", one}, {"search_all_filtered", none}} {
		slices.Sort(x.d)
		out(x.name+"_median_ms", ms(x.d[len(x.d)/2]))
		out(x.name+"_p90_ms", ms(x.d[len(x.d)*9/10]))
	}
	out("search_all_hits_per_query", fmt.Sprintf("%.1f", float64(hits)/float64(len(qs))))
	return nil
}

// timeCaptures times CaptureRun on the loaded store.
func timeCaptures(ctx context.Context, s *vector.Store, n int) error {
	var ds []time.Duration
	code := 0
	start := time.Now()
	for i := range n {
		r := vector.RunRecord{RunID: fmt.Sprintf("bench-%d-%d", start.UnixNano(), i), Recipe: "bench-recipe", Status: "exited",
			ExitCode: &code, StartedAt: start, EndedAt: start.Add(time.Second), Template: "go test ./...",
			LastOutput: []string{"ok  github.com/pi-actors/pi-actors/knowledge 2.3s", "PASS"}, Cwd: "/tmp"}
		t := time.Now()
		if err := s.CaptureRun(ctx, r); err != nil {
			return err
		}
		ds = append(ds, time.Since(t))
	}
	if len(ds) == 0 {
		return nil
	}
	slices.Sort(ds)
	out("capture_median_ms", ms(ds[len(ds)/2]))
	out("capture_p90_ms", ms(ds[len(ds)*9/10]))
	return nil
}

// corpus generates deterministic synthetic nodes: pseudo-words drawn
// from a Zipf distribution over a 6000-word vocabulary, so that topics
// overlap like real text.
type corpus struct {
	n     int
	vocab []string
}

func newCorpus(n int) *corpus {
	r := rand.New(rand.NewPCG(1, 2))
	syl := strings.Fields("ka lo mi nu re ta shi po da fe gu hi jo ke li ma ne or pa qu ri so tu va we xi yo za an el in on un ar er ir")
	seen := map[string]bool{}
	c := &corpus{n: n}
	for len(c.vocab) < 6000 {
		var b strings.Builder
		for range 2 + r.IntN(3) {
			b.WriteString(syl[r.IntN(len(syl))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			c.vocab = append(c.vocab, w)
		}
	}
	return c
}

func (c *corpus) words(r *rand.Rand, n int) []string {
	z := rand.NewZipf(r, 1.1, 8, uint64(len(c.vocab)-1))
	out := make([]string, n)
	for i := range out {
		out[i] = c.vocab[z.Uint64()]
	}
	return out
}

var kinds = map[string][]string{
	vectorop.DomainCode:     {"function", "method", "struct"},
	vectorop.DomainHistory:  {"entry", "outcome", "decision"},
	vectorop.DomainAcademic: {"documentation", "paper", "rfc"},
}

// node is the i-th node: domain by i (60/30/10), name and content from
// words seeded by i.
func (c *corpus) node(i int) *vectorop.NodeAdd {
	r := rand.New(rand.NewPCG(uint64(i), 7))
	d := vectorop.DomainCode
	switch {
	case i%10 >= 9:
		d = vectorop.DomainAcademic
	case i%10 >= 6:
		d = vectorop.DomainHistory
	}
	w := c.words(r, 30+r.IntN(50))
	name := fmt.Sprintf("%s%s%d", capital(w[0]), capital(w[1]), i)
	src := map[string]string{vectorop.DomainCode: "code", vectorop.DomainHistory: "history", vectorop.DomainAcademic: "academic"}[d]
	return &vectorop.NodeAdd{Domain: d, Type: kinds[d][i%3], Name: name, Content: strings.Join(w, " "), Source: src, Verified: true}
}

// query is three words of a random node's content.
func (c *corpus) query(i int) string {
	r := rand.New(rand.NewPCG(uint64(i), 99))
	j := r.IntN(c.n)
	rn := rand.New(rand.NewPCG(uint64(j), 7))
	w := c.words(rn, 30+rn.IntN(50))
	k := r.IntN(len(w) - 3)
	return strings.Join(w[k:k+3], " ")
}

// absent is a query of two words no node holds.
func absent(i int) string {
	var b strings.Builder
	b.WriteString("qqzx")
	for ; i > 0; i /= 26 {
		b.WriteByte(byte('a' + i%26))
	}
	return b.String() + " vvwyq"
}

func capital(s string) string { return strings.ToUpper(s[:1]) + s[1:] }
