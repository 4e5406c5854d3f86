package embed

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// server is a real HTTP server implementing /v1/embeddings: each input's
// embedding is [len(input), dim-1 copies of its index], data sent in
// reverse order with their index fields (as a server may).
type server struct {
	*httptest.Server
	dim      int
	requests atomic.Int32
	maxBatch atomic.Int32
	auth     atomic.Value // last Authorization header
}

func newServer(t *testing.T, dim int, handler http.HandlerFunc) *server {
	s := &server{dim: dim}
	if handler == nil {
		handler = s.embeddings
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/embeddings", handler)
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func (s *server) embeddings(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	s.auth.Store(r.Header.Get("Authorization"))
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model == "" {
		http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
		return
	}
	if n := int32(len(req.Input)); n > s.maxBatch.Load() {
		s.maxBatch.Store(n)
	}
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	var data []item
	for i := len(req.Input) - 1; i >= 0; i-- {
		v := make([]float32, s.dim)
		v[0] = float32(len(req.Input[i]))
		for j := 1; j < s.dim; j++ {
			v[j] = float32(i)
		}
		data = append(data, item{"embedding", i, v})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model})
}

func TestOpenAIEmbed(t *testing.T) {
	s := newServer(t, 5, nil)
	e, err := NewOpenAI(OpenAIOptions{URL: s.URL, Model: "nomic-embed-text", APIKey: "sk-test", Batch: 3})
	if err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(s.URL, "http://")
	if e.ID() != "openai:nomic-embed-text@"+host || e.Dim() != 0 || e.Endpoint() != s.URL+"/v1/embeddings" {
		t.Fatalf("ID %q Dim %d Endpoint %q", e.ID(), e.Dim(), e.Endpoint())
	}
	texts := []string{"a", "bb", "ccc", "dddd", "eeeee", "ffffff", "g"}
	vs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != len(texts) || e.Dim() != 5 {
		t.Fatalf("%d vectors, Dim %d", len(vs), e.Dim())
	}
	for i, v := range vs {
		if int(v[0]) != len(texts[i]) || int(v[1]) != i%3 {
			t.Fatalf("vector %d = %v: out of order", i, v)
		}
	}
	if s.requests.Load() != 3 || s.maxBatch.Load() != 3 {
		t.Fatalf("%d requests, largest batch %d; want 3 and 3", s.requests.Load(), s.maxBatch.Load())
	}
	if a := s.auth.Load(); a != "Bearer sk-test" {
		t.Fatalf("Authorization %q", a)
	}
	if vs, err := e.Embed(context.Background(), nil); err != nil || len(vs) != 0 {
		t.Fatalf("empty input: %v %v", vs, err)
	}
}

func TestOpenAIURLs(t *testing.T) {
	for in, want := range map[string]string{
		"http://localhost:11434":                  "http://localhost:11434/v1/embeddings",
		"http://localhost:11434/":                 "http://localhost:11434/v1/embeddings",
		"http://localhost:8080/v1":                "http://localhost:8080/v1/embeddings",
		"https://api.example.com/v1/embeddings":   "https://api.example.com/v1/embeddings",
		"https://proxy.example.com/openai/v1/":    "https://proxy.example.com/openai/v1/embeddings",
		"https://proxy.example.com/x/embeddings/": "https://proxy.example.com/x/embeddings",
	} {
		e, err := NewOpenAI(OpenAIOptions{URL: in, Model: "m"})
		if err != nil || e.Endpoint() != want {
			t.Errorf("%s → %v %v, want %s", in, e, err, want)
		}
	}
	for _, o := range []OpenAIOptions{
		{URL: "localhost:11434", Model: "m"},
		{URL: "ftp://x/v1", Model: "m"},
		{URL: "http://", Model: "m"},
		{URL: "http://localhost:1", Model: " "},
		{URL: "http://localhost:1", Model: "m", Dim: -1},
	} {
		if _, err := NewOpenAI(o); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: %v, want ErrConfig", o, err)
		}
	}
}

func TestOpenAIErrors(t *testing.T) {
	ctx := context.Background()
	t.Run("status", func(t *testing.T) {
		s := newServer(t, 3, func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, `{"error":"model \"x\" not found"}`, http.StatusNotFound)
		})
		e, _ := NewOpenAI(OpenAIOptions{URL: s.URL, Model: "x"})
		_, err := e.Embed(ctx, []string{"a"})
		var he *HTTPError
		if !errors.As(err, &he) || he.Status != 404 || !strings.Contains(err.Error(), s.URL+"/v1/embeddings") || !strings.Contains(err.Error(), "not found") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("malformed", func(t *testing.T) {
		s := newServer(t, 3, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<html>proxy</html>")) })
		e, _ := NewOpenAI(OpenAIOptions{URL: s.URL, Model: "x"})
		if _, err := e.Embed(ctx, []string{"a"}); !errors.Is(err, ErrResponse) || !strings.Contains(err.Error(), s.URL) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("count", func(t *testing.T) {
		s := newServer(t, 3, func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"data":[{"index":0,"embedding":[1,2,3]}]}`))
		})
		e, _ := NewOpenAI(OpenAIOptions{URL: s.URL, Model: "x"})
		if _, err := e.Embed(ctx, []string{"a", "b"}); !errors.Is(err, ErrResponse) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("dim", func(t *testing.T) {
		s := newServer(t, 4, nil)
		e, _ := NewOpenAI(OpenAIOptions{URL: s.URL, Model: "x", Dim: 768})
		if _, err := e.Embed(ctx, []string{"a"}); !errors.Is(err, ErrDim) || e.Dim() != 768 {
			t.Fatalf("got %v, Dim %d", err, e.Dim())
		}
	})
	t.Run("timeout", func(t *testing.T) {
		release := make(chan struct{})
		s := newServer(t, 3, func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		})
		defer close(release)
		e, _ := NewOpenAI(OpenAIOptions{URL: s.URL, Model: "x", Timeout: 50 * time.Millisecond})
		start := time.Now()
		_, err := e.Embed(ctx, []string{"a"})
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), s.URL) {
			t.Fatalf("got %v", err)
		}
		if el := time.Since(start); el > 5*time.Second {
			t.Fatalf("timeout took %v", el)
		}
	})
	t.Run("refused", func(t *testing.T) {
		s := newServer(t, 3, nil)
		url := s.URL
		s.Close()
		e, _ := NewOpenAI(OpenAIOptions{URL: url, Model: "x"})
		if _, err := e.Embed(ctx, []string{"a"}); err == nil || !strings.Contains(err.Error(), url) {
			t.Fatalf("got %v", err)
		}
	})
}
