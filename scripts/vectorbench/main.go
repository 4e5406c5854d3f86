// Command vectorbench is the Go half of scripts/bench-vectors.sh: it writes
// the clustered test data as raw little-endian files, measures
// knowledge/hnsw on them, and measures the BinaryFuse8 topic filters. Every
// figure is printed as one "key value" line for the script to lay out
// beside its target and beside python3-hnswlib.
//
//	vectorbench gen    -dir D -n N -dim DIM -queries Q [-clusters C -latent L -seed S]
//	vectorbench hnsw   -dir D [-ef 16,32 -workers W -reps R]
//	vectorbench filter [-keys 1000000]
//	vectorbench simd   (whether knowledge/hnsw uses its AVX2 kernels)
package main

import (
	"fmt"
	"os"

	"github.com/pi-actors/pi-actors/knowledge/hnsw"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: vectorbench gen|hnsw|filter [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "gen":
		err = runGen(os.Args[2:])
	case "hnsw":
		err = runHNSW(os.Args[2:])
	case "filter":
		err = runFilter(os.Args[2:])
	case "simd":
		fmt.Println(hnsw.SIMD())
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "vectorbench:", err)
		os.Exit(1)
	}
}
