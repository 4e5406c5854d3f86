package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Ops lists the operation names Decode takes, in a stable order.
var Ops = []string{"query_graph", "manage_graph", "manage_changelog", "project_create",
	"project_list", "history", "verify", "task_context", "init", "status",
	"search", "search_all", "smart_search", "recall", "ingest", "node_add", "node_get", "traverse", "conflicts"}

// New returns an empty request for op, or nil for an unknown op.
func New(op string) Request {
	switch op {
	case "query_graph":
		return &QueryGraph{}
	case "manage_graph":
		return &ManageGraph{}
	case "manage_changelog":
		return &ManageChangelog{}
	case "project_create":
		return &ProjectCreate{}
	case "project_list":
		return &ProjectList{}
	case "history":
		return &History{}
	case "verify":
		return &Verify{}
	case "task_context":
		return &TaskContext{}
	case "init":
		return &Init{}
	case "status":
		return &Status{}
	case "search":
		return &Search{}
	case "search_all":
		return &SearchAll{}
	case "smart_search":
		return &SmartSearch{}
	case "recall":
		return &Recall{}
	case "ingest":
		return &Ingest{}
	case "node_add":
		return &NodeAdd{}
	case "node_get":
		return &NodeGet{}
	case "traverse":
		return &Traverse{}
	case "conflicts":
		return &Conflicts{}
	}
	return nil
}

// Decode parses raw (a JSON object of parameters; empty or null is no
// parameters) into the typed request for op and validates it. Unknown
// parameters and values of the wrong type are a VALIDATION_ERROR naming
// the field. Integers and booleans may also be given as strings ("3",
// "true"), as the CLI's key=value form passes them. The error is always an
// *Error.
func Decode(op string, raw json.RawMessage) (Request, error) {
	req := New(op)
	if req == nil {
		return nil, Invalid("operation", "unknown knowledge operation %q; use one of %s", op, strings.Join(Ops, ", "))
	}
	if err := decodeStrict(raw, req); err != nil {
		return nil, err
	}
	if e := req.Validate(); e != nil {
		return nil, e
	}
	return req, nil
}

// UnmarshalJSON decodes strictly (see Decode); it does not validate.
func (q *QueryGraph) UnmarshalJSON(b []byte) error { return errOrNil(decodeStrict(b, q)) }

// UnmarshalJSON decodes strictly (see Decode); moleculeId null unassigns.
func (m *ManageGraph) UnmarshalJSON(b []byte) error { return errOrNil(decodeStrict(b, m)) }

// UnmarshalJSON decodes strictly (see Decode).
func (m *ManageChangelog) UnmarshalJSON(b []byte) error { return errOrNil(decodeStrict(b, m)) }

// UnmarshalJSON decodes strictly (see Decode).
func (p *ProjectCreate) UnmarshalJSON(b []byte) error { return errOrNil(decodeStrict(b, p)) }

// UnmarshalJSON decodes strictly (see Decode).
func (p *ProjectList) UnmarshalJSON(b []byte) error { return errOrNil(decodeStrict(b, p)) }

// UnmarshalJSON decodes strictly (see Decode).
func (h *History) UnmarshalJSON(b []byte) error { return errOrNil(decodeStrict(b, h)) }

// UnmarshalJSON decodes strictly (see Decode).
func (v *Verify) UnmarshalJSON(b []byte) error { return errOrNil(decodeStrict(b, v)) }

// UnmarshalJSON decodes strictly (see Decode).
func (t *TaskContext) UnmarshalJSON(b []byte) error { return errOrNil(decodeStrict(b, t)) }

// UnmarshalJSON decodes strictly (see Decode).
func (i *Init) UnmarshalJSON(b []byte) error { return errOrNil(decodeStrict(b, i)) }

// UnmarshalJSON decodes strictly (see Decode).
func (s *Status) UnmarshalJSON(b []byte) error { return errOrNil(decodeStrict(b, s)) }

type fieldInfo struct {
	index []int
	typ   reflect.Type
}

var fieldCache sync.Map // reflect.Type → map[string]fieldInfo

func fieldsOf(t reflect.Type) map[string]fieldInfo {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]fieldInfo)
	}
	m := map[string]fieldInfo{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "" || name == "-" {
			continue
		}
		m[name] = fieldInfo{index: f.Index, typ: f.Type}
	}
	fieldCache.Store(t, m)
	return m
}

// decodeStrict decodes a JSON object into the struct v points to, one
// field at a time, so every error names its parameter.
func decodeStrict(data []byte, v Request) *Error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || string(data) == "null" {
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return Invalid("", "%s parameters must be one JSON object of name: value pairs", v.Op())
	}
	rv := reflect.ValueOf(v).Elem()
	fields := fieldsOf(rv.Type())
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		f, ok := fields[k]
		if !ok {
			known := make([]string, 0, len(fields))
			for n := range fields {
				known = append(known, n)
			}
			slices.Sort(known)
			return Invalid(k, "unknown parameter %s for %s; known parameters: %s", k, v.Op(), strings.Join(known, ", "))
		}
		raw := bytes.TrimSpace(obj[k])
		if string(raw) == "null" {
			if m, ok := v.(*ManageGraph); ok && k == "moleculeId" {
				m.moleculeNull = true
			}
			continue
		}
		raw = coerce(raw, f.typ)
		if err := json.Unmarshal(raw, rv.FieldByIndex(f.index).Addr().Interface()); err != nil {
			return Invalid(k, "%s must be %s", k, describe(f.typ))
		}
	}
	return nil
}

// coerce turns a JSON string holding an integer or boolean into the bare
// value when the field wants one (the CLI passes key=value as strings).
func coerce(raw []byte, t reflect.Type) []byte {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if len(raw) == 0 || raw[0] != '"' {
		return raw
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return raw
	}
	s = strings.TrimSpace(s)
	switch t.Kind() {
	case reflect.Int:
		if _, err := strconv.Atoi(s); err == nil {
			return []byte(s)
		}
	case reflect.Bool:
		if b, err := strconv.ParseBool(s); err == nil {
			return []byte(strconv.FormatBool(b))
		}
	}
	return raw
}

func describe(t reflect.Type) string {
	switch t {
	case reflect.TypeFor[Patterns]():
		return `a JSON array of glob patterns (or a string holding one), e.g. ["src/pages/**"]`
	case reflect.TypeFor[PathList]():
		return "comma-separated file paths or a JSON array of strings"
	case reflect.TypeFor[RelatedAtoms]():
		return `a JSON array of {"atomId": …, "reason": …} (or a string holding one)`
	case reflect.TypeFor[RelatedMolecules]():
		return `a JSON array of {"moleculeId": …, "reason": …} (or a string holding one)`
	case reflect.TypeFor[StringList]():
		return "a comma-separated list or a JSON array of strings"
	case reflect.TypeFor[Links]():
		return `a JSON array of {"to": …, "type": …} (or a string holding one)`
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int:
		return "an integer"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	}
	return "a " + t.String()
}

// AsError returns err as an *Error when it is one (or wraps one).
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// errOrNil keeps a nil *Error from becoming a non-nil error.
func errOrNil(e *Error) error {
	if e == nil {
		return nil
	}
	return e
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
