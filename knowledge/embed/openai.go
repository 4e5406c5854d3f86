package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// Defaults of OpenAIOptions.
const (
	DefaultBatch   = 64
	DefaultTimeout = 60 * time.Second
	maxResponse    = 256 << 20 // bytes read from one response at most
)

// Errors of the OpenAI embedder (wrapped; HTTP failures are *HTTPError).
var (
	ErrConfig   = errors.New("embedder configuration")
	ErrResponse = errors.New("malformed embeddings response")
	ErrDim      = errors.New("embedding dimension mismatch")
)

// HTTPError is a non-2xx answer from the embeddings endpoint.
type HTTPError struct {
	URL    string
	Status int
	Body   string // the start of the response body
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("embeddings %s: HTTP %d: %s", e.URL, e.Status, e.Body)
}

// OpenAIOptions configures an OpenAI-compatible embedder.
type OpenAIOptions struct {
	// URL is the server's base URL ("http://localhost:11434", ".../v1")
	// or the full embeddings URL (".../v1/embeddings").
	URL    string
	Model  string
	APIKey string // sent as "Authorization: Bearer …" when set
	// Dim is the expected dimension; 0 learns it from the first response.
	Dim     int
	Batch   int           // texts per request; default 64
	Timeout time.Duration // per request; default 60s
	Client  *http.Client  // default: a client without its own timeout
}

// OpenAI is an Embedder backed by an OpenAI-compatible HTTP endpoint.
type OpenAI struct {
	endpoint string
	id       string
	o        OpenAIOptions
	dim      atomic.Int64
}

// NewOpenAI validates o and returns the embedder. It makes no request.
func NewOpenAI(o OpenAIOptions) (*OpenAI, error) {
	if strings.TrimSpace(o.Model) == "" {
		return nil, fmt.Errorf("%w: model is empty (set [knowledge.embedder] model)", ErrConfig)
	}
	endpoint, host, err := embeddingsURL(o.URL)
	if err != nil {
		return nil, err
	}
	if o.Dim < 0 {
		return nil, fmt.Errorf("%w: dim %d is negative", ErrConfig, o.Dim)
	}
	if o.Batch <= 0 {
		o.Batch = DefaultBatch
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Client == nil {
		o.Client = &http.Client{}
	}
	e := &OpenAI{endpoint: endpoint, id: "openai:" + o.Model + "@" + host, o: o}
	e.dim.Store(int64(o.Dim))
	return e, nil
}

// embeddingsURL resolves a base or full URL to the embeddings endpoint.
func embeddingsURL(raw string) (endpoint, host string, err error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", "", fmt.Errorf("%w: url %q is not an http(s) URL (e.g. http://localhost:11434)", ErrConfig, raw)
	}
	p := strings.TrimRight(u.Path, "/")
	switch {
	case strings.HasSuffix(p, "/embeddings"):
	case strings.HasSuffix(p, "/v1"):
		p += "/embeddings"
	default:
		p += "/v1/embeddings"
	}
	u.Path = p
	return u.String(), u.Host, nil
}

// ID returns "openai:<model>@<host>".
func (e *OpenAI) ID() string { return e.id }

// Dim returns the configured dimension, or the learned one (0 before the
// first successful response when none was configured).
func (e *OpenAI) Dim() int { return int(e.dim.Load()) }

// Endpoint returns the resolved embeddings URL.
func (e *OpenAI) Endpoint() string { return e.endpoint }

// Embed embeds texts in batches, one request at a time; on any error it
// returns no vectors.
func (e *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += e.o.Batch {
		batch := texts[start:min(start+e.o.Batch, len(texts))]
		vecs, err := e.post(ctx, batch)
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

type embeddingsRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

type embeddingsResponse struct {
	Data []struct {
		Index     *int      `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

// post sends one batch and returns its vectors in input order.
func (e *OpenAI) post(ctx context.Context, batch []string) ([][]float32, error) {
	body, err := json.Marshal(embeddingsRequest{Model: e.o.Model, Input: batch})
	if err != nil {
		return nil, fmt.Errorf("embeddings %s: encode request: %w", e.endpoint, err)
	}
	ctx, cancel := context.WithTimeout(ctx, e.o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("embeddings %s: %w", e.endpoint, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if e.o.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+e.o.APIKey)
	}
	resp, err := e.o.Client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("embeddings %s: %w", e.endpoint, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return nil, fmt.Errorf("embeddings %s: read response: %w", e.endpoint, err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, &HTTPError{URL: e.endpoint, Status: resp.StatusCode, Body: snippet(raw)}
	}
	var r embeddingsResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("embeddings %s: %w: %v (body starts %q)", e.endpoint, ErrResponse, err, snippet(raw))
	}
	return e.order(r, len(batch))
}

// order checks the response against the batch and returns its vectors in
// input order (by data[i].index when the server sends it).
func (e *OpenAI) order(r embeddingsResponse, n int) ([][]float32, error) {
	if len(r.Data) != n {
		return nil, fmt.Errorf("embeddings %s: %w: %d embeddings for %d inputs", e.endpoint, ErrResponse, len(r.Data), n)
	}
	out := make([][]float32, n)
	for i, d := range r.Data {
		j := i
		if d.Index != nil {
			j = *d.Index
		}
		if j < 0 || j >= n || out[j] != nil {
			return nil, fmt.Errorf("embeddings %s: %w: bad or repeated index %d", e.endpoint, ErrResponse, j)
		}
		if len(d.Embedding) == 0 {
			return nil, fmt.Errorf("embeddings %s: %w: empty embedding %d", e.endpoint, ErrResponse, j)
		}
		for _, f := range d.Embedding {
			if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
				return nil, fmt.Errorf("embeddings %s: %w: embedding %d holds NaN or Inf", e.endpoint, ErrResponse, j)
			}
		}
		want := int(e.dim.Load())
		if want == 0 && e.dim.CompareAndSwap(0, int64(len(d.Embedding))) {
			want = len(d.Embedding)
		} else if want == 0 {
			want = int(e.dim.Load())
		}
		if len(d.Embedding) != want {
			return nil, fmt.Errorf("embeddings %s: %w: got %d dimensions, want %d", e.endpoint, ErrDim, len(d.Embedding), want)
		}
		out[j] = d.Embedding
	}
	return out, nil
}

// snippet is the start of a body, for error messages.
func snippet(b []byte) string {
	const limit = 200
	s := strings.TrimSpace(string(b))
	if len(s) > limit {
		s = s[:limit] + "…"
	}
	return s
}
