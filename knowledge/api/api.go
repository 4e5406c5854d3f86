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

// Init creates the project store <repo>/.pi/knowledge.db and its project.
type Init struct {
	Name string `json:"name,omitempty" jsonschema:"project name; default the repository directory's name"`
}

// Status reports stores, projects, counts, schema version and sizes.
type Status struct {
	Store string `json:"store,omitempty" jsonschema:"project or personal; default both"`
}

// Op names.
func (*Init) Op() string   { return "init" }
func (*Status) Op() string { return "status" }

// UnmarshalJSON decodes strictly (see op.Unmarshal).
func (i *Init) UnmarshalJSON(b []byte) error { return op.Unmarshal(b, i) }

// UnmarshalJSON decodes strictly (see op.Unmarshal).
func (s *Status) UnmarshalJSON(b []byte) error { return op.Unmarshal(b, s) }

// Validate checks init parameters.
func (i *Init) Validate() *op.Error {
	if i.Name == "" {
		return nil
	}
	return op.CheckName(&i.Name)
}

// Validate checks status parameters.
func (s *Status) Validate() *op.Error { return op.CheckStore(s.Store) }

// InitResult is init's result.
type InitResult struct {
	Path    string          `json:"path"`
	Created bool            `json:"created"`
	Project graphop.Project `json:"project"`
}

// StoreStatus is one store's status. Projects lists at most op.MaxLimit.
type StoreStatus struct {
	Store         string            `json:"store,omitempty"`
	Path          string            `json:"path"`
	SchemaVersion int               `json:"schemaVersion"`
	SizeBytes     int64             `json:"sizeBytes"`
	Counts        graphop.Counts    `json:"counts"`
	Projects      []graphop.Project `json:"projects"`
	// Vectors is the vector graph's state (nil when it was never loaded
	// in this process and the store has no nodes).
	Vectors *vectorop.VectorStatus `json:"vectors,omitempty"`
}

// StatusResult is status's result.
type StatusResult struct {
	Stores []StoreStatus `json:"stores"`
}

// text renders init, status and errors.
func text(result any) (string, bool) {
	var b strings.Builder
	switch r := result.(type) {
	case *InitResult:
		fmt.Fprintf(&b, "path=%s created=%t project=%s name=%q root=%s\n", r.Path, r.Created, r.Project.ID, r.Project.Name, r.Project.Root)
	case *StatusResult:
		textStatus(&b, r)
	case *op.Error:
		fmt.Fprintf(&b, "error=%s %s\n", r.Code, r.Message)
	default:
		return "", false
	}
	return b.String(), true
}

func textStatus(b *strings.Builder, s *StatusResult) {
	fmt.Fprintf(b, "stores=%d\n", len(s.Stores))
	for _, st := range s.Stores {
		c := st.Counts
		fmt.Fprintf(b, "%s path=%s schema=%d size=%d projects=%d molecules=%d atoms=%d changelog=%d deltas=%d\n",
			op.OrDash(st.Store), st.Path, st.SchemaVersion, st.SizeBytes, c.Projects, c.Molecules, c.Atoms, c.Changelog, c.Deltas)
		for i, p := range st.Projects {
			if i == op.TextItems {
				fmt.Fprintf(b, "  … %d more (pi-actors knowledge project list)\n", c.Projects-i)
				break
			}
			fmt.Fprintf(b, "  project %s %q root=%s\n", p.ID, p.Name, p.Root)
		}
		if st.Vectors != nil {
			s, _ := vectorop.Text(st.Vectors)
			b.WriteString(s)
		}
	}
}
