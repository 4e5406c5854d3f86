package op

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

// shaped is a parameter type that says what shape of value it takes: a
// value of another shape is the VALIDATION_ERROR "<field> must be
// <Shape>".
type shaped interface{ Shape() string }

// nullAware is a request that learns which parameters were given as JSON
// null (Unmarshal skips them otherwise).
type nullAware interface{ NullParam(name string) }

// errShape is a parameter value of the wrong JSON shape; Unmarshal turns
// it into a VALIDATION_ERROR naming the field.
var errShape = errors.New("wrong shape")

// Unmarshal decodes a JSON object of parameters (empty or null is no
// parameters) into the request r points to, one field at a time, so
// every error names its parameter: unknown parameters and values of the
// wrong type are a VALIDATION_ERROR. Integers and booleans may also be
// given as strings ("3", "true"). It does not validate. The error is nil
// or an *Error.
func Unmarshal(data []byte, r Request) error {
	if e := unmarshal(data, r); e != nil {
		return e
	}
	return nil
}

func unmarshal(data []byte, v Request) *Error {
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
			e := Invalid(k, "unknown parameter %s for %s; known parameters: %s", k, v.Op(), strings.Join(known, ", "))
			e.Details["reason"] = ReasonUnknownParameter
			return e
		}
		raw := bytes.TrimSpace(obj[k])
		if string(raw) == "null" {
			if n, ok := v.(nullAware); ok {
				n.NullParam(k)
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
	if s, ok := reflect.Zero(t).Interface().(shaped); ok {
		return s.Shape()
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

// DecodeList decodes a JSON array, or a JSON string whose content is a
// JSON array, into dst strictly (unknown keys in objects are errors).
// Omitted stays nil; an empty array is non-nil.
func DecodeList[S ~[]E, E any](data []byte, dst *S) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		data = []byte(strings.TrimSpace(s))
	}
	if len(data) == 0 || data[0] != '[' {
		return errShape
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var out []E // not S: S's own UnmarshalJSON calls DecodeList
	if err := dec.Decode(&out); err != nil {
		return errShape
	}
	if dec.More() {
		return errShape
	}
	if out == nil {
		out = []E{}
	}
	*dst = S(out)
	return nil
}

// PathList is a list of file paths: a comma-separated string or a JSON
// array of strings. Entries are trimmed and empty entries dropped.
type PathList []string

// Shape is what a PathList takes.
func (PathList) Shape() string { return "comma-separated file paths or a JSON array of strings" }

// UnmarshalJSON accepts "a.ts, b/c.ts" or ["a.ts","b/c.ts"].
func (p *PathList) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	var parts []string
	switch {
	case len(data) > 0 && data[0] == '"':
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		if t := strings.TrimSpace(s); strings.HasPrefix(t, "[") {
			if err := json.Unmarshal([]byte(t), &parts); err != nil {
				return errShape
			}
		} else {
			parts = strings.Split(s, ",")
		}
	case len(data) > 0 && data[0] == '[':
		if err := json.Unmarshal(data, &parts); err != nil {
			return errShape
		}
	case string(data) == "null":
		*p = nil
		return nil
	default:
		return errShape
	}
	out := PathList{}
	for _, s := range parts {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	*p = out
	return nil
}

// StringList is a list parameter given as a JSON array or as a
// comma-separated string ("code,history"). Entries are trimmed and empty
// ones dropped.
type StringList []string

// Shape is what a StringList takes.
func (StringList) Shape() string { return "a comma-separated list or a JSON array of strings" }

// UnmarshalJSON accepts "a,b" or ["a","b"].
func (l *StringList) UnmarshalJSON(data []byte) error {
	var p PathList
	if err := p.UnmarshalJSON(data); err != nil {
		return err
	}
	if p == nil {
		*l = nil
		return nil
	}
	*l = StringList(p)
	return nil
}
