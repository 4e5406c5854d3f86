package wire

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"
)

// A request's parameters are a verb's typed request: a flat struct of
// tagged fields, most of them empty. json.Marshal builds the struct's
// whole field table first (spawn's has 36 fields: a twentieth of a
// spawn's CPU in the CLI, which marshals one request per process);
// marshalFlat writes the same bytes from the fields that are set, each
// marshalled on its own.

// flatField is one field json.Marshal writes.
type flatField struct {
	index     int
	name      string
	key       string // "name": as json writes it
	omitEmpty bool
	omitZero  bool
	isZeroer  bool // omitzero asks the field's IsZero method
}

// flatType is a struct type as marshalFlat and unmarshalFlat see it.
type flatType struct {
	fields []flatField // nil when the type is not flat
	// decodes: json.Unmarshal decodes the type field by field (it has
	// no UnmarshalJSON or UnmarshalText of its own).
	decodes bool
}

var flatTypes sync.Map // reflect.Type → *flatType

var (
	marshalerType       = reflect.TypeFor[json.Marshaler]()
	textMarshalerType   = reflect.TypeFor[encoding.TextMarshaler]()
	isZeroerType        = reflect.TypeFor[interface{ IsZero() bool }]()
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// flatFields lists the fields of struct type t as json.Marshal writes
// them, in order, or nil when t is not flat: when it marshals itself,
// embeds a struct, has a field json would name otherwise than its tag
// says, a ",string" option, or an omitzero field of a pointer or
// interface type with an IsZero method.
func flatFields(t reflect.Type) []flatField { return readFlatType(t).fields }

func readFlatType(t reflect.Type) *flatType {
	if f, ok := flatTypes.Load(t); ok {
		return f.(*flatType)
	}
	pt := reflect.PointerTo(t)
	f := &flatType{fields: readFlatFields(t)}
	f.decodes = f.fields != nil && !pt.Implements(unmarshalerType) && !pt.Implements(textUnmarshalerType)
	flatTypes.Store(t, f)
	return f
}

func readFlatFields(t reflect.Type) []flatField {
	pt := reflect.PointerTo(t)
	if pt.Implements(marshalerType) || pt.Implements(textMarshalerType) {
		return nil
	}
	out := []flatField{}
	seen := map[string]bool{}
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous {
			return nil
		}
		if !sf.IsExported() {
			continue
		}
		tag, hasTag := sf.Tag.Lookup("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if !hasTag || name == "" {
			name = sf.Name
		}
		if !plainName(name) || seen[name] {
			return nil
		}
		seen[name] = true
		f := flatField{index: i, name: name, key: `"` + name + `":`}
		for opts != "" {
			var o string
			o, opts, _ = strings.Cut(opts, ",")
			switch o {
			case "omitempty":
				f.omitEmpty = true
			case "omitzero":
				switch k := sf.Type.Kind(); {
				case (k == reflect.Interface || k == reflect.Pointer) && sf.Type.Implements(isZeroerType):
					return nil
				case reflect.PointerTo(sf.Type).Implements(isZeroerType):
					// Its IsZero (value or pointer receiver) decides,
					// as for json.Marshal.
					f.isZeroer = true
				}
				f.omitZero = true
			default:
				return nil
			}
		}
		out = append(out, f)
	}
	return out
}

// plainName is a key json writes as it is (no escapes) and takes as a
// tag name.
func plainName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return s != ""
}

// marshalFlat is json.Marshal(v) for a pointer to a flat struct (see
// flatFields); ok is false for anything else, and for a value json.Marshal
// refuses (its own error says why).
func marshalFlat(v any) (b []byte, ok bool) { return appendFlat(nil, v, true) }

// MarshalFlat is what a json.Encoder with SetEscapeHTML(escapeHTML)
// writes for v, without its newline, when v is a pointer to a flat struct
// (a verb's typed request or result: tagged fields, nothing embedded, no
// MarshalJSON of its own); ok is false for anything else, and for a value
// json refuses. Without the struct's field table, which json builds once
// per process: a CLI run writes one result.
func MarshalFlat(v any, escapeHTML bool) (b []byte, ok bool) { return appendFlat(nil, v, escapeHTML) }

func appendFlat(b []byte, v any, escapeHTML bool) ([]byte, bool) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return nil, false
	}
	sv := rv.Elem()
	fields := flatFields(sv.Type())
	if fields == nil {
		return nil, false
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(escapeHTML)
	start := len(b)
	b = append(b, '{')
	for _, f := range fields {
		fv := sv.Field(f.index)
		if f.omitEmpty && isEmptyValue(fv) || f.omitZero && isZero(fv, f.isZeroer) {
			continue
		}
		// Through its address, as json reaches a field of a struct it
		// was given a pointer to (pointer-receiver MarshalJSON methods
		// count).
		buf.Reset()
		if err := enc.Encode(fv.Addr().Interface()); err != nil {
			return nil, false
		}
		if len(b) > start+1 {
			b = append(b, ',')
		}
		b = append(b, f.key...)
		b = append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
	}
	return append(b, '}'), true
}

// unmarshalFlat is json.Unmarshal(data, v) for a pointer to a zero flat
// struct that json decodes field by field and a JSON object whose keys
// need no unescaping, each value decoded into its field alone; ok is
// false, and v as it was, for anything else and for a value that does
// not decode (json.Unmarshal then says why).
func unmarshalFlat(data []byte, v any) bool {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return false
	}
	sv := rv.Elem()
	ft := readFlatType(sv.Type())
	// Only into a zero value, which a refusal restores (json merges into
	// the maps of a value that holds some).
	if len(data) > flatDecodeMax || !ft.decodes || !sv.IsZero() || !json.Valid(data) {
		return false
	}
	b := skipSpace(data)
	if len(b) == 0 || b[0] != '{' {
		return false
	}
	restore := func() bool {
		sv.SetZero()
		return false
	}
	b = skipSpace(b[1:])
	for len(b) > 0 && b[0] != '}' {
		if b[0] == ',' {
			b = skipSpace(b[1:])
		}
		key, after, ok := readKey(b)
		if !ok {
			return restore()
		}
		b = skipSpace(skipSpace(after)[1:]) // the ':'
		end := valueEnd(b)
		if end <= 0 {
			return restore()
		}
		f, known := ft.field(key)
		if !known && !asciiKey(key) {
			return restore() // json folds some non-ASCII letters onto ASCII ones
		}
		if known {
			if err := json.Unmarshal(b[:end], sv.Field(f.index).Addr().Interface()); err != nil {
				return restore()
			}
		}
		b = skipSpace(b[end:])
	}
	return true
}

// flatDecodeMax bounds what unmarshalFlat reads: it scans its input
// twice before json does (json.Valid, then each value's end), which a
// large listing would feel more than the field tables it saves.
const flatDecodeMax = 16 << 10

// field is the field json decodes key into: the one of that name, else
// the first whose name equals it but for ASCII case.
func (ft *flatType) field(key string) (flatField, bool) {
	for _, f := range ft.fields {
		if f.name == key {
			return f, true
		}
	}
	for _, f := range ft.fields {
		if asciiKey(key) && strings.EqualFold(f.name, key) {
			return f, true
		}
	}
	return flatField{}, false
}

func asciiKey(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// isZero is encoding/json's test for omitzero of an addressable field.
func isZero(v reflect.Value, isZeroer bool) bool {
	if isZeroer {
		return v.Addr().Interface().(interface{ IsZero() bool }).IsZero()
	}
	return v.IsZero()
}

// isEmptyValue is encoding/json's test for omitempty.
func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}
