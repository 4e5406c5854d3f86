package embed

import "context"

// Embedder turns texts into vectors of Dim dimensions, one per text, in
// order. ID names the embedder and its version: vectors with different IDs
// are not comparable.
type Embedder interface {
	ID() string
	Dim() int
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

var (
	_ Embedder = (*Local)(nil)
	_ Embedder = (*OpenAI)(nil)
)
