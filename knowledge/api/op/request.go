package op

import (
	"reflect"
)

// Request is one typed knowledge operation. Validate checks everything that
// needs no store (required parameters per operation, bounds, glob syntax)
// and normalises values (trims text, lower-cases ids); the store checks
// the rest (existence, versions, projects).
type Request interface {
	// Op is the operation's name as Decode takes it (query_graph, …).
	Op() string
	// Validate returns nil or a VALIDATION_ERROR / INVARIANT_VIOLATION.
	Validate() *Error
}

// Table lists an operation family's requests, in a stable order: each
// entry makes an empty request.
type Table []func() Request

// Names lists the operation names, in table order.
func (t Table) Names() []string {
	out := make([]string, len(t))
	for i, mk := range t {
		out[i] = mk().Op()
	}
	return out
}

// New returns an empty request for name, or nil for an unknown name.
func (t Table) New(name string) Request {
	for _, mk := range t {
		if r := mk(); r.Op() == name {
			return r
		}
	}
	return nil
}

// Store choices for the store parameter.
const (
	StoreProject  = "project"
	StorePersonal = "personal"
)

// Bounds shared by the operation families.
const (
	DefaultLimit  = 20
	MaxLimit      = 100
	MaxName       = 255  // characters
	MaxTaskID     = 255  // characters
	MaxQuery      = 1024 // bytes of a search query
	MaxPatternLen = 512  // characters of a glob pattern
	MaxPathLen    = 4096
)

// Page is a search result: {"items":[…],"total":N,"limit":L,"offset":O}.
type Page[T any] struct {
	Items  []T `json:"items"`
	Total  int `json:"total"`
	Limit  int `json:"limit"`
	Offset int `json:"offset"`
}

// LimitOr returns *p, or def when p is nil.
func LimitOr(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

// BoolOr returns *p, or def when p is nil.
func BoolOr(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}

// StoreOf is a request's store parameter ("project", "personal" or ""
// for both): every operation that can choose a store has a Store field.
func StoreOf(r Request) string {
	v := reflect.ValueOf(r)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return ""
	}
	f := v.FieldByName("Store")
	if !f.IsValid() || f.Kind() != reflect.String {
		return ""
	}
	return f.String()
}

// NonNil is s, or an empty slice for nil: results render [] rather than
// null.
func NonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
