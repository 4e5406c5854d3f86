package embed

import (
	"context"
	"hash/fnv"
	"math"
	"slices"
	"testing"
)

func cos(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s // both unit length
}

func TestLocalBasics(t *testing.T) {
	var e Embedder = NewLocal()
	if e.ID() != "local-hash-384-v1" || e.Dim() != 384 {
		t.Fatalf("ID %q Dim %d", e.ID(), e.Dim())
	}
	texts := []string{"retry with exponential backoff", "", "!!! ---", "東京 タワー"}
	vs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(vs), len(texts))
	}
	for i, v := range vs {
		if len(v) != 384 {
			t.Fatalf("vector %d has %d dims", i, len(v))
		}
		var n float64
		for _, f := range v {
			n += float64(f) * float64(f)
		}
		wantZero := texts[i] == "" || texts[i] == "!!! ---"
		if wantZero && n != 0 || !wantZero && math.Abs(n-1) > 1e-5 {
			t.Errorf("text %q: squared norm %v", texts[i], n)
		}
	}
	again, _ := e.Embed(context.Background(), texts[:1])
	if !slices.Equal(again[0], vs[0]) {
		t.Fatal("not deterministic")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Embed(ctx, texts); err == nil {
		t.Fatal("Embed ignored a cancelled context")
	}
}

// TestLocalGolden pins the v1 output: if this fails, the algorithm changed
// and LocalID must change with it.
func TestLocalGolden(t *testing.T) {
	v := NewLocal().Vector("func (x *Index) SearchFilter(q []float32) — retry backoff")
	h := fnv.New64a()
	for _, f := range v {
		h.Write([]byte{byte(math.Float32bits(f) >> 24), byte(math.Float32bits(f) >> 16), byte(math.Float32bits(f) >> 8), byte(math.Float32bits(f))})
	}
	const want uint64 = 0xa040518954c30219
	if got := h.Sum64(); got != want {
		t.Fatalf("local-hash-384-v1 golden hash %#x, want %#x", got, want)
	}
}

// TestLocalSimilarity checks what the embedder is for: lexical overlap,
// identifiers split into words, and typos score above unrelated text.
func TestLocalSimilarity(t *testing.T) {
	e := NewLocal()
	cases := []struct{ query, near, far string }{
		{"retry with backoff", "func retryWithBackoff(ctx context.Context)", "render the sidebar template in dark mode"},
		{"parse http request", "parseHTTPRequest reads the request line", "kernel socket permission check"},
		{"recieve mesage", "receive message from the inbox", "compute the checksum of a file"},
		{"supervisor restart policy", "the run supervisor applies the restart policy", "vectors stored as float32 blobs"},
	}
	for _, c := range cases {
		q, n, f := e.Vector(c.query), e.Vector(c.near), e.Vector(c.far)
		sn, sf := cos(q, n), cos(q, f)
		t.Logf("%q: near %.3f far %.3f", c.query, sn, sf)
		if sn <= sf+0.1 {
			t.Errorf("%q: near %.3f not clearly above far %.3f", c.query, sn, sf)
		}
	}
}

func TestSplitWords(t *testing.T) {
	var got []string
	for _, w := range splitWords("parseHTTP2Request snake_case Ünïcode") {
		got = append(got, string(w))
	}
	want := []string{"parse", "http", "2", "request", "snake", "case", "ünïcode"}
	if !slices.Equal(got, want) {
		t.Fatalf("splitWords = %q, want %q", got, want)
	}
}

func BenchmarkLocal(b *testing.B) {
	e := NewLocal()
	text := "func (x *Index) SearchFilter(q []float32, k, ef int, keep func(id uint64) bool) []Result — retry with exponential backoff and jitter"
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		e.Vector(text)
	}
}
