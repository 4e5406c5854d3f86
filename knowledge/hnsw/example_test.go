package hnsw_test

import (
	"bytes"
	"fmt"

	"github.com/pi-actors/pi-actors/knowledge/hnsw"
)

func Example() {
	x := hnsw.New(3, hnsw.Options{Metric: hnsw.L2})
	_ = x.Add(1, []float32{0, 0, 0})
	_ = x.Add(2, []float32{1, 0, 0})
	_ = x.Add(3, []float32{5, 5, 5})
	for _, r := range x.Search([]float32{0.9, 0, 0}, 2, 0) {
		fmt.Printf("%d %.2f\n", r.ID, r.Distance)
	}
	// Only odd ids:
	fmt.Println(x.SearchFilter([]float32{0.9, 0, 0}, 1, 0, func(id uint64) bool { return id%2 == 1 })[0].ID)

	var buf bytes.Buffer
	_, _ = x.WriteTo(&buf)
	y, err := hnsw.Read(&buf)
	fmt.Println(y.Len(), err)
	// Output:
	// 2 0.01
	// 1 0.81
	// 1
	// 3 <nil>
}
