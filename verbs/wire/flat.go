package wire

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
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
	key       string // "name": as json writes it
	omitEmpty bool
	omitZero  bool
	isZeroer  bool // omitzero asks the field's IsZero method
}

var flatTypes sync.Map // reflect.Type → []flatField, or nil when not flat

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	isZeroerType      = reflect.TypeFor[interface{ IsZero() bool }]()
)

// flatFields lists the fields of struct type t as json.Marshal writes
// them, in order, or nil when t is not flat: when it marshals itself,
// embeds a struct, has a field json would name otherwise than its tag
// says, a ",string" option, or an omitzero field of a pointer or
// interface type with an IsZero method.
func flatFields(t reflect.Type) []flatField {
	if f, ok := flatTypes.Load(t); ok {
		return f.([]flatField)
	}
	f := readFlatFields(t)
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
		f := flatField{index: i, key: `"` + name + `":`}
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
func marshalFlat(v any) (b []byte, ok bool) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return nil, false
	}
	sv := rv.Elem()
	fields := flatFields(sv.Type())
	if fields == nil {
		return nil, false
	}
	b = append(b, '{')
	for _, f := range fields {
		fv := sv.Field(f.index)
		if f.omitEmpty && isEmptyValue(fv) || f.omitZero && isZero(fv, f.isZeroer) {
			continue
		}
		// Through its address, as json.Marshal reaches a field of a
		// struct it was given a pointer to (pointer-receiver
		// MarshalJSON methods count).
		vb, err := json.Marshal(fv.Addr().Interface())
		if err != nil {
			return nil, false
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(b, f.key...)
		b = append(b, vb...)
	}
	return append(b, '}'), true
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
