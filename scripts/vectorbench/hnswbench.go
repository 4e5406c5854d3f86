package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pi-actors/pi-actors/knowledge/hnsw"
)

func runHNSW(args []string) error {
	fs := flag.NewFlagSet("hnsw", flag.ContinueOnError)
	dir := fs.String("dir", "", "data directory (from gen)")
	efList := fs.String("ef", "16,32", "search beam widths")
	workers := fs.Int("workers", runtime.NumCPU(), "goroutines for the parallel build")
	reps := fs.Int("reps", 3, "passes over the queries per QPS figure (the best is kept)")
	load := fs.String("load", "", "skip the builds: search an index file written by an earlier run")
	cpuprof := fs.String("cpuprofile", "", "write a CPU profile of the builds and searches to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	d, err := loadDataset(*dir)
	if err != nil {
		return err
	}
	if *cpuprof != "" {
		stop, err := startProfile(*cpuprof)
		if err != nil {
			return err
		}
		defer stop()
	}
	if *load != "" {
		return searchFile(*load, d, *efList, *reps)
	}
	ids := make([]uint64, d.n)
	for i := range ids {
		ids[i] = uint64(i)
	}

	x := hnsw.New(d.dim, hnsw.Options{})
	start := time.Now()
	if err := x.AddBatch(ids, d.base, 1); err != nil {
		return err
	}
	fmt.Printf("build_1 %.3f\n", time.Since(start).Seconds())

	if *workers > 1 {
		y := hnsw.New(d.dim, hnsw.Options{})
		start = time.Now()
		if err := y.AddBatch(ids, d.base, *workers); err != nil {
			return err
		}
		fmt.Printf("build_par %.3f\nbuild_workers %d\n", time.Since(start).Seconds(), *workers)
		for _, ef := range parseInts(*efList) {
			fmt.Printf("recall_par_ef%d %.4f\n", ef, recallAt(y, d, ef))
		}
		y = nil
	}

	searchFigures(x, d, *efList, *reps)
	return persistFigures(x, d, *dir)
}

// searchFigures prints recall@k and QPS at every beam width of efList.
func searchFigures(x *hnsw.Index, d *dataset, efList string, reps int) {
	for _, ef := range parseInts(efList) {
		fmt.Printf("recall_ef%d %.4f\n", ef, recallAt(x, d, ef))
		wall, cpu := qps(x, d, ef, reps)
		fmt.Printf("qps_ef%d %.0f\nqps_cpu_ef%d %.0f\n", ef, wall, ef, cpu)
	}
}

// searchFile prints the search figures of an index read from path.
func searchFile(path string, d *dataset, efList string, reps int) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	x, err := hnsw.Read(f)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	searchFigures(x, d, efList, reps)
	return nil
}

func startProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

func parseInts(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if v, err := strconv.Atoi(strings.TrimSpace(f)); err == nil {
			out = append(out, v)
		}
	}
	return out
}

// recallAt is the mean fraction of the exact top k found at beam width ef.
func recallAt(x *hnsw.Index, d *dataset, ef int) float64 {
	hit := 0
	for i := range d.nq {
		got := x.Search(d.queries[i*d.dim:(i+1)*d.dim], d.k, ef)
		want := d.gt[i*d.k : (i+1)*d.k]
		for _, r := range got {
			if slices.Contains(want, uint32(r.ID)) {
				hit++
			}
		}
	}
	return float64(hit) / float64(d.nq*d.k)
}

// qps runs all queries reps times on this goroutine, locked to its thread,
// and returns the best pass's queries per second by wall-clock time and by
// the thread's CPU time (which time spent descheduled by other processes
// on a shared machine does not inflate).
func qps(x *hnsw.Index, d *dataset, ef, reps int) (wall, cpu float64) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for range reps {
		start, cstart := time.Now(), threadCPU()
		for i := range d.nq {
			x.Search(d.queries[i*d.dim:(i+1)*d.dim], d.k, ef)
		}
		wall = max(wall, float64(d.nq)/time.Since(start).Seconds())
		cpu = max(cpu, float64(d.nq)/(threadCPU()-cstart).Seconds())
	}
	return wall, cpu
}

func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// persistFigures writes the index, loads it back (best of three loads,
// from the page cache) and measures the loaded index's heap.
func persistFigures(x *hnsw.Index, d *dataset, dir string) error {
	path := filepath.Join(dir, "index.hnsw")
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	start := time.Now()
	size, err := x.WriteTo(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	fmt.Printf("save %.4f\nfile_bytes %d\n", time.Since(start).Seconds(), size)
	raw := float64(d.n * d.dim * 4)
	st := x.Stats()
	fmt.Printf("mem_stats_ratio %.3f\n", float64(st.VectorBytes+st.GraphBytes)/raw)

	best := time.Duration(1 << 62)
	var y *hnsw.Index
	for range 3 {
		y = nil
		runtime.GC()
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		data, err := os.Open(path)
		if err != nil {
			return err
		}
		start := time.Now()
		y, err = hnsw.Read(data)
		el := time.Since(start)
		data.Close()
		if err != nil {
			return err
		}
		best = min(best, el)
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		if after.HeapAlloc > before.HeapAlloc {
			fmt.Printf("mem_heap_ratio %.3f\n", float64(after.HeapAlloc-before.HeapAlloc)/raw)
		}
	}
	fmt.Printf("load %.4f\n", best.Seconds())
	if got := y.Search(d.queries[:d.dim], d.k, 32); len(got) == 0 {
		return fmt.Errorf("loaded index finds nothing")
	}
	return nil
}
