package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/pi-actors/pi-actors/knowledge/api/op"
)

// TimeLayout is every stored time: UTC, milliseconds, fixed width (so text
// order is time order), as JavaScript's toISOString writes it.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// Now is the current time as stored.
func Now() string { return time.Now().UTC().Format(TimeLayout) }

// NewID is a new entity or node id: a random UUID.
func NewID() string { return uuid.NewString() }

// Querier is what reads need: the read pool (*sql.DB) or a transaction.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Scanner is a row: *sql.Row or *sql.Rows.
type Scanner interface{ Scan(dest ...any) error }

// Canonical is the canonical JSON of v: object keys sorted, no
// insignificant whitespace, no HTML escaping.
func Canonical(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // decoded JSON values always encode
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// In is "(?, ?, …)" for ids and the ids as arguments (ids must not be
// empty).
func In(ids []string) (string, []any) {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return "(?" + strings.Repeat(", ?", len(ids)-1) + ")", args
}

// InChunks runs fn over the distinct ids in groups small enough for one
// IN (…): in is the placeholder list, args the ids of the group.
func InChunks(ids []string, fn func(in string, args []any) error) error {
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	for start := 0; start < len(ids); start += 500 {
		in, args := In(ids[start:min(start+500, len(ids))])
		if err := fn(in, args); err != nil {
			return err
		}
	}
	return nil
}

// Exists is nil when table has a row with id, else a NOT_FOUND for the
// entity kind ("project", "atom", "node", …) naming field.
func Exists(ctx context.Context, q Querier, table, kind, field, id string) error {
	var one int
	err := q.QueryRowContext(ctx, "SELECT 1 FROM "+table+" WHERE id = ?", id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return op.NotFound(field, kind, id)
	}
	if err != nil {
		return fmt.Errorf("read %s %s: %w", kind, id, err)
	}
	return nil
}
