package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/pi-actors/pi-actors/knowledge/hnsw"
	"github.com/pi-actors/pi-actors/knowledge/hnsw/hnswtest"
)

// The data set in a directory: base.f32 (n×dim float32), query.f32
// (q×dim), gt.u32 (q×k ids of the exact cosine nearest neighbours, nearest
// first) and meta.txt ("n dim q k").
const gtK = 10

func runGen(args []string) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	dir := fs.String("dir", "", "output directory")
	n := fs.Int("n", 100000, "base vectors")
	dim := fs.Int("dim", 128, "dimensions")
	nq := fs.Int("queries", 1000, "query vectors")
	nc := fs.Int("clusters", 100, "clusters")
	latent := fs.Int("latent", 16, "latent directions per cluster")
	seed := fs.Uint64("seed", 1, "seed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		return fmt.Errorf("gen: -dir is required")
	}
	base := clustered(*n, *dim, *nc, *latent, *seed, 1)
	queries := clustered(*nq, *dim, *nc, *latent, *seed, 2)
	gt := groundTruth(base, queries, *dim)
	if err := writeF32(filepath.Join(*dir, "base.f32"), base); err != nil {
		return err
	}
	if err := writeF32(filepath.Join(*dir, "query.f32"), queries); err != nil {
		return err
	}
	if err := writeRaw(filepath.Join(*dir, "gt.u32"), gt); err != nil {
		return err
	}
	meta := fmt.Sprintf("%d %d %d %d\n", *n, *dim, *nq, gtK)
	return os.WriteFile(filepath.Join(*dir, "meta.txt"), []byte(meta), 0o644)
}

// clustered is the shared generator (package hnswtest).
func clustered(n, dim, nc, latent int, seed, draw uint64) []float32 {
	return hnswtest.Clustered(n, dim, nc, latent, seed, draw)
}

// groundTruth is the exact cosine top gtK of every query, as base row
// numbers, computed by a full scan (an hnsw.Index's SearchExact) on all
// CPUs.
func groundTruth(base, queries []float32, dim int) []uint32 {
	n, nq := len(base)/dim, len(queries)/dim
	ids := make([]uint64, n)
	for i := range ids {
		ids[i] = uint64(i)
	}
	// Insert without a graph: SearchExact only needs the vectors, so a
	// tiny beam keeps this fast.
	x := hnsw.New(dim, hnsw.Options{M: 2, EfConstruction: 2})
	if err := x.AddBatch(ids, base, 0); err != nil {
		panic(err)
	}
	gt := make([]uint32, nq*gtK)
	var wg sync.WaitGroup
	next := make(chan int, nq)
	for i := range nq {
		next <- i
	}
	close(next)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				for j, r := range x.SearchExact(queries[i*dim:(i+1)*dim], gtK, nil) {
					gt[i*gtK+j] = uint32(r.ID)
				}
			}
		}()
	}
	wg.Wait()
	return gt
}

func writeF32(path string, v []float32) error { return writeRaw(path, v) }

func writeRaw[T float32 | uint32](path string, v []T) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := binary.Write(f, binary.LittleEndian, v); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

func readRaw[T float32 | uint32](path string, n int) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	v := make([]T, n)
	if err := binary.Read(f, binary.LittleEndian, v); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return v, nil
}

type dataset struct {
	n, dim, nq, k int
	base, queries []float32
	gt            []uint32
}

func loadDataset(dir string) (*dataset, error) {
	meta, err := os.ReadFile(filepath.Join(dir, "meta.txt"))
	if err != nil {
		return nil, err
	}
	d := &dataset{}
	if _, err := fmt.Sscan(string(meta), &d.n, &d.dim, &d.nq, &d.k); err != nil {
		return nil, fmt.Errorf("meta.txt: %w", err)
	}
	if d.base, err = readRaw[float32](filepath.Join(dir, "base.f32"), d.n*d.dim); err != nil {
		return nil, err
	}
	if d.queries, err = readRaw[float32](filepath.Join(dir, "query.f32"), d.nq*d.dim); err != nil {
		return nil, err
	}
	if d.gt, err = readRaw[uint32](filepath.Join(dir, "gt.u32"), d.nq*d.k); err != nil {
		return nil, err
	}
	return d, nil
}
