package template

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Values maps placeholder names to JSON values: string, json.Number, bool,
// nil, []any or map[string]any. Decode JSON with UseNumber so numbers keep
// their exact text.
type Values map[string]any

// DecodeJSON decodes data with UseNumber, the form every template value takes.
func DecodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("unexpected data after the JSON value at byte %d: one value only", dec.InputOffset())
	}
	return v, nil
}

// Stringify renders a value the way it is substituted into a word: strings
// as themselves, numbers as their JSON text, booleans as true/false, null as
// the empty string, arrays and objects as compact JSON.
func Stringify(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		if x {
			return "true"
		}
		return "false"
	case float64, int, int64:
		b, _ := json.Marshal(x)
		return string(b)
	default:
		return CompactJSON(x)
	}
}

// CompactJSON marshals v without spaces and without HTML escaping.
func CompactJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return ""
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// Falsy reports whether a value counts as false for `when`, `??` and
// ternaries: missing, null, false, and — after trimming and lowercasing —
// "", "0", "false" and "no".
func Falsy(v any, present bool) bool {
	if !present || v == nil {
		return true
	}
	switch x := v.(type) {
	case bool:
		return !x
	case []any, map[string]any:
		return false
	}
	switch strings.ToLower(strings.TrimSpace(Stringify(v))) {
	case "", "0", "false", "no":
		return true
	}
	return false
}
