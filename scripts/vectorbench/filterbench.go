package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/pi-actors/pi-actors/knowledge/filter"
)

// runFilter measures one BinaryFuse8 Set over n random keys: build time,
// bits per key, MayContain time per lookup (best of five passes over 1M
// probes in random order, absent and present keys) and the false-positive
// rate.
func runFilter(args []string) error {
	fs := flag.NewFlagSet("filter", flag.ContinueOnError)
	n := fs.Int("keys", 1_000_000, "keys in the filter")
	if err := fs.Parse(args); err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(42, 1))
	keys := make([]uint64, *n)
	for i := range keys {
		keys[i] = r.Uint64()
	}
	absent := make([]uint64, 1_000_000)
	for i := range absent {
		absent[i] = r.Uint64()
	}
	present := make([]uint64, len(absent))
	for i := range present {
		present[i] = keys[r.IntN(len(keys))]
	}
	var s filter.Set
	start := time.Now()
	if err := s.Rebuild(keys); err != nil {
		return err
	}
	fmt.Printf("filter_build %.4f\n", time.Since(start).Seconds())
	st := s.Stats()
	fmt.Printf("filter_keys %d\nfilter_bits_per_key %.3f\n", st.Keys, st.BitsPerKey)
	fp := 0
	for _, k := range absent {
		if s.MayContain(k) {
			fp++
		}
	}
	fmt.Printf("filter_fp_rate %.5f\n", float64(fp)/float64(len(absent)))
	fmt.Printf("filter_lookup_absent_ns %.2f\n", lookupNS(&s, absent))
	fmt.Printf("filter_lookup_present_ns %.2f\n", lookupNS(&s, present))
	return nil
}

var sink int

func lookupNS(s *filter.Set, probes []uint64) float64 {
	best := time.Duration(1 << 62)
	for range 5 {
		hits := 0
		start := time.Now()
		for _, k := range probes {
			if s.MayContain(k) {
				hits++
			}
		}
		best = min(best, time.Since(start))
		sink += hits
	}
	return float64(best.Nanoseconds()) / float64(len(probes))
}
