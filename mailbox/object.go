package mailbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/pi-actors/pi-actors/internal/fsutil"
)

// object is a JSON object that keeps its key order and the exact bytes of
// every value, so patching one field of a stored record (its status, say)
// leaves the rest of the line byte for byte as it was.
type object []member

type member struct {
	key string
	val json.RawMessage
}

// parseObject splits a JSON object into its members. Anything else
// (another JSON value, trailing data) is an error.
func parseObject(raw []byte) (object, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errNotObject
	}
	var o object
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, err
		}
		o = append(o, member{key, val})
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errTrailing
	}
	return o, nil
}

var (
	errNotObject = errors.New("not a JSON object")
	errTrailing  = errors.New("trailing data after the JSON object")
)

// set replaces key's value (dropping duplicate keys) or appends it.
func (o *object) set(key string, v any) error {
	raw, err := marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", key, err)
	}
	found := false
	out := (*o)[:0]
	for _, m := range *o {
		if m.key == key {
			if found {
				continue
			}
			found = true
			m.val = raw
		}
		out = append(out, m)
	}
	if !found {
		out = append(out, member{key, raw})
	}
	*o = out
	return nil
}

// bytes encodes the object on one line.
func (o object) bytes() []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := marshal(m.key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.val)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// marshal encodes v as compact JSON without HTML escaping (message bodies
// are shown to agents; "<" must stay "<") and without a newline.
func marshal(v any) ([]byte, error) { return fsutil.MarshalCompact(v) }

// decodeObject decodes one JSON object with numbers kept as json.Number.
func decodeObject(raw []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errTrailing
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errNotObject
	}
	return m, nil
}
