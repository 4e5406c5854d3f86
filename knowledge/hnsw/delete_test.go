package hnsw

import (
	"math/rand/v2"
	"sync"
	"testing"
)

func TestDelete(t *testing.T) {
	const dim, n = 48, 4000
	data := clustered(n, dim, 40, 40, 6, 1)
	queries := clustered(200, dim, 40, 40, 6, 2)
	x := build(t, dim, data, Options{})
	before := recall(x, queries, 10, 32, nil)

	r := rand.New(rand.NewPCG(9, 9))
	deleted := map[uint64]bool{}
	for _, i := range r.Perm(n)[:n*3/10] {
		id := 1000 + uint64(i)
		if !x.Delete(id) {
			t.Fatalf("Delete(%d) = false", id)
		}
		deleted[id] = true
	}
	for id := range deleted {
		if x.Delete(id) {
			t.Fatalf("second Delete(%d) = true", id)
		}
		if x.Contains(id) {
			t.Fatalf("Contains(%d) after delete", id)
		}
		break
	}
	if x.Len() != n-len(deleted) {
		t.Fatalf("Len = %d, want %d", x.Len(), n-len(deleted))
	}
	for i := range 200 {
		for _, res := range x.Search(queries[i*dim:(i+1)*dim], 20, 64) {
			if deleted[res.ID] {
				t.Fatalf("deleted id %d returned", res.ID)
			}
		}
	}
	after := recall(x, queries, 10, 32, nil)
	t.Logf("recall@10 ef=32: %.4f before, %.4f after deleting 30%%", before, after)
	if after < 0.95 {
		t.Fatalf("recall@10 at ef=32 after deleting 30%% = %.4f, want ≥ 0.95", after)
	}

	// A deleted id can come back, under a new slot.
	for id := range deleted {
		v := data[(id-1000)*dim : (id-1000+1)*dim]
		if err := x.Add(id, v); err != nil {
			t.Fatal(err)
		}
		if res := x.Search(v, 1, 0); len(res) != 1 || res[0].ID != id {
			t.Fatalf("re-added %d: search finds %v", id, res)
		}
		break
	}
}

func TestDeleteEverything(t *testing.T) {
	const dim = 8
	data := clustered(300, dim, 3, 4, 7, 1)
	x := build(t, dim, data, Options{M: 4})
	for i := range 300 {
		x.Delete(1000 + uint64(i))
	}
	if x.Len() != 0 || x.Search(data[:dim], 5, 0) != nil {
		t.Fatal("index not empty after deleting everything")
	}
	// Adding again after everything died starts a fresh graph.
	if err := x.AddBatch(seqIDs(100, 1), data[:100*dim], 2); err != nil {
		t.Fatal(err)
	}
	if r := recall(x, data[100*dim:150*dim], 5, 32, nil); r < 0.95 {
		t.Fatalf("recall after refill %.3f", r)
	}
	for i := 0; i < 100; i++ {
		x.Delete(uint64(1 + i))
	}
	if err := x.Add(7, data[:dim]); err != nil {
		t.Fatal(err)
	}
	if r := x.Search(data[dim:2*dim], 3, 0); len(r) != 1 || r[0].ID != 7 {
		t.Fatalf("single survivor: %v", r)
	}
}

func TestSearchFilter(t *testing.T) {
	const dim, n = 64, 4000
	data := clustered(n, dim, 30, 48, 8, 1)
	queries := clustered(100, dim, 30, 48, 8, 2)
	x := build(t, dim, data, Options{})
	for _, mod := range []uint64{2, 10, 100} {
		keep := func(id uint64) bool { return id%mod == 0 }
		for i := range 100 {
			for _, r := range x.SearchFilter(queries[i*dim:(i+1)*dim], 10, 32, keep) {
				if !keep(r.ID) {
					t.Fatalf("filter 1/%d: id %d returned", mod, r.ID)
				}
			}
		}
		r := recall(x, queries, 10, 32, keep)
		t.Logf("filter keeping 1/%d: recall@10 ef=32 %.4f", mod, r)
		if r < 0.95 {
			t.Errorf("filter keeping 1/%d: recall@10 at ef=32 = %.4f, want ≥ 0.95", mod, r)
		}
	}
	// A filter that keeps nothing gives nothing, one that keeps a single
	// far-away id finds it.
	if r := x.SearchFilter(queries[:dim], 10, 32, func(uint64) bool { return false }); len(r) != 0 {
		t.Fatalf("keep-nothing filter returned %v", r)
	}
	if r := x.SearchFilter(queries[:dim], 10, 32, func(id uint64) bool { return id == 1000+n-1 }); len(r) != 1 || r[0].ID != 1000+n-1 {
		t.Fatalf("keep-one filter returned %v", r)
	}
}

func TestConcurrentSearchDuringAdd(t *testing.T) {
	const dim, n = 16, 1500
	data := clustered(n, dim, 10, 8, 10, 1)
	x := New(dim, Options{M: 8, EfConstruction: 64})
	if err := x.AddBatch(seqIDs(200, 0), data[:200*dim], 2); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				q := data[((i*7+g)%n)*dim:][:dim]
				res := x.Search(q, 5, 0)
				if len(res) == 0 {
					t.Error("empty result while adding")
					return
				}
				x.SearchFilter(q, 5, 0, func(id uint64) bool { return id%2 == 0 })
				_ = x.Len()
			}
		}()
	}
	for i := 200; i < n; i++ {
		if err := x.Add(uint64(i), data[i*dim:(i+1)*dim]); err != nil {
			t.Fatal(err)
		}
		if i%5 == 0 {
			x.Delete(uint64(i - 100))
		}
	}
	if err := x.AddBatch(seqIDs(100, 1_000_000), data[:100*dim], 2); err != nil {
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()
}
