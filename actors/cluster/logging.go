package cluster

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// quietHandler passes the engine's warnings and errors to the kernel log,
// each distinct message at most once a minute: an unreachable peer makes
// the automanaged provider log a failed health check every second.
type quietHandler struct {
	next slog.Handler
	mu   *sync.Mutex
	seen map[string]time.Time
}

func newQuietHandler(next slog.Handler) *quietHandler {
	return &quietHandler{next: next, mu: new(sync.Mutex), seen: map[string]time.Time{}}
}

func (h *quietHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && h.next.Enabled(ctx, l)
}

func (h *quietHandler) Handle(ctx context.Context, r slog.Record) error {
	h.mu.Lock()
	last, ok := h.seen[r.Message]
	if ok && r.Time.Sub(last) < time.Minute {
		h.mu.Unlock()
		return nil
	}
	if len(h.seen) > 1000 {
		clear(h.seen)
	}
	h.seen[r.Message] = r.Time
	h.mu.Unlock()
	return h.next.Handle(ctx, r)
}

func (h *quietHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &quietHandler{next: h.next.WithAttrs(as), mu: h.mu, seen: h.seen}
}

func (h *quietHandler) WithGroup(name string) slog.Handler {
	return &quietHandler{next: h.next.WithGroup(name), mu: h.mu, seen: h.seen}
}
