package recipes

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
)

// jsonObject is a JSON object that remembers the order of its keys, so a
// file pi-actors rewrites (usage metadata, register_tool updates) keeps the
// layout its author chose. Values are nil, bool, json.Number, string,
// []any or *jsonObject.
type jsonObject struct {
	keys []string
	vals map[string]any
}

func newJSONObject() *jsonObject { return &jsonObject{vals: map[string]any{}} }

// get returns the value of key.
func (o *jsonObject) get(key string) (any, bool) {
	v, ok := o.vals[key]
	return v, ok
}

// set replaces the value of key, keeping its position, or appends it.
func (o *jsonObject) set(key string, v any) {
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = v
}

// del removes key.
func (o *jsonObject) del(key string) {
	if _, ok := o.vals[key]; !ok {
		return
	}
	delete(o.vals, key)
	for i, k := range o.keys {
		if k == key {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			break
		}
	}
}

// decodeOrdered decodes one JSON value, keeping object key order. Numbers
// stay json.Number so their text survives a rewrite. A repeated key keeps
// its first position and its last value, as encoding/json does.
func decodeOrdered(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("unexpected data after the JSON value at offset %d", dec.InputOffset())
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := newJSONObject()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, _ := kt.(string)
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				o.set(key, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return o, nil
		case '[':
			list := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				list = append(list, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return list, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	}
	return tok, nil
}

// marshalOrdered renders v as pretty JSON: two-space indent, no HTML
// escaping, a final newline — the layout of fsutil.MarshalIndent, with
// object keys in their recorded order. Plain maps are written with sorted
// keys.
func marshalOrdered(v any) ([]byte, error) {
	var compact bytes.Buffer
	if err := writeCompact(&compact, v); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, compact.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

func writeCompact(buf *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case *jsonObject:
		buf.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeScalar(buf, k); err != nil {
				return err
			}
			buf.WriteByte(':')
			if err := writeCompact(buf, x.vals[k]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
		return nil
	case []any:
		buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeCompact(buf, e); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
		return nil
	case []string:
		list := make([]any, len(x))
		for i, s := range x {
			list[i] = s
		}
		return writeCompact(buf, list)
	case map[string]any:
		return writeCompact(buf, orderedFrom(x))
	}
	return writeScalar(buf, v)
}

func writeScalar(buf *bytes.Buffer, v any) error {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	buf.Truncate(buf.Len() - 1) // Encode's newline
	return nil
}

// orderedFrom converts a plain map (recursively) into an object with
// sorted keys.
func orderedFrom(m map[string]any) *jsonObject {
	o := newJSONObject()
	for _, k := range sortedObjectKeys(m) {
		o.set(k, toOrdered(m[k]))
	}
	return o
}

// toOrdered converts plain decoded JSON into the ordered form.
func toOrdered(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return orderedFrom(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = toOrdered(e)
		}
		return out
	}
	return v
}

// toPlain converts the ordered form back into plain decoded JSON
// (map[string]any), the form the recipe compiler and the template engine
// take.
func toPlain(v any) any {
	switch x := v.(type) {
	case *jsonObject:
		m := make(map[string]any, len(x.keys))
		for _, k := range x.keys {
			m[k] = toPlain(x.vals[k])
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = toPlain(e)
		}
		return out
	}
	return v
}

func sortedObjectKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
