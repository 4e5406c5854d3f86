package api

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/pi-actors/pi-actors/knowledge/api/graphop"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/api/vectorop"
)

// requests makes every knowledge request: the knowledge graph's, then
// init and status (both stores), then the vector graph's.
var requests = slices.Concat(graphop.Requests, op.Table{
	func() op.Request { return new(Init) },
	func() op.Request { return new(Status) },
}, vectorop.Requests)

// Ops lists the operation names Decode takes, in a stable order.
var Ops = requests.Names()

// New returns an empty request for name, or nil for an unknown name.
func New(name string) op.Request { return requests.New(name) }

// Decode parses raw (a JSON object of parameters; empty or null is no
// parameters) into the typed request for name and validates it (see
// op.Unmarshal). The error is always an *op.Error.
func Decode(name string, raw json.RawMessage) (op.Request, error) {
	req := New(name)
	if req == nil {
		return nil, op.Invalid("operation", "unknown knowledge operation %q; use one of %s", name, strings.Join(Ops, ", "))
	}
	if err := op.Unmarshal(raw, req); err != nil {
		return nil, err
	}
	if e := req.Validate(); e != nil {
		return nil, e
	}
	return req, nil
}

// Text renders any knowledge result (or *op.Error) compactly for the CLI:
// a first line of key=value facts, then a bounded detail that says where
// the rest is (--json, or a narrower query). Unknown values render as
// their Go form.
func Text(result any) string {
	for _, text := range []func(any) (string, bool){graphop.Text, vectorop.Text, text} {
		if s, ok := text(result); ok {
			return s
		}
	}
	return fmt.Sprintf("%v\n", result)
}
