package embed_test

import (
	"context"
	"fmt"

	"github.com/pi-actors/pi-actors/knowledge/embed"
)

func Example() {
	var e embed.Embedder = embed.NewLocal()
	vs, _ := e.Embed(context.Background(), []string{"retry with backoff", "retryWithBackoff()"})
	var cos float32
	for i := range vs[0] {
		cos += vs[0][i] * vs[1][i]
	}
	fmt.Println(e.ID(), e.Dim(), cos > 0.5)
	// Output: local-hash-384-v1 384 true
}
