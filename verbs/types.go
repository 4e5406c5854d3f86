package verbs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// The lenient value types below accept what the CLI's key=value form gives
// (strings) as well as what JSON clients send (numbers, booleans), so one
// request struct serves every front door.

// Int is an integer given as a JSON number or a numeric string; "" and
// null leave it unset (0).
type Int int

// UnmarshalJSON accepts 80, "80", "" and null.
func (n *Int) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return nil
	}
	s := string(b)
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		s = strings.TrimSpace(s)
		if s == "" {
			*n = 0
			return nil
		}
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("expected an integer, got %s", b)
	}
	*n = Int(v)
	return nil
}

// Bool is a boolean given as JSON true/false or as one of the strings
// true/false/yes/no/1/0 ("" and null are false).
type Bool bool

// UnmarshalJSON accepts true, "true", "yes", "1" and their opposites.
func (v *Bool) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch string(b) {
	case "true":
		*v = true
		return nil
	case "false", "null":
		*v = false
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("expected true or false, got %s", b)
	}
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "yes", "1":
		*v = true
	case "false", "no", "0", "":
		*v = false
	default:
		return fmt.Errorf("expected true or false, got %s", b)
	}
	return nil
}

// Text is a string that may be given as a JSON number or boolean too (an
// envelope's summary, correlation_id, reply_to).
type Text string

// UnmarshalJSON accepts a string, number or boolean.
func (t *Text) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = Text(s)
		return nil
	}
	if len(b) > 0 && (b[0] == '{' || b[0] == '[') {
		return fmt.Errorf("expected a string, got %s", kindOf(b))
	}
	*t = Text(b)
	return nil
}

// Value is any JSON value, remembering whether it was given at all (a
// given null differs from an absent value: register_tool template:=null
// deletes a tool).
type Value struct {
	V   any
	Set bool
}

// UnmarshalJSON keeps any value, null included.
func (v *Value) UnmarshalJSON(b []byte) error {
	v.Set = true
	if string(bytes.TrimSpace(b)) == "null" {
		v.V = nil
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(&v.V)
}

// MarshalJSON writes the value (null when unset).
func (v Value) MarshalJSON() ([]byte, error) { return json.Marshal(v.V) }

// IsZero makes an unset Value omitted under omitzero.
func (v Value) IsZero() bool { return !v.Set }

func kindOf(b []byte) string {
	switch {
	case len(b) == 0:
		return "nothing"
	case b[0] == '{':
		return "an object"
	case b[0] == '[':
		return "an array"
	case b[0] == '"':
		return "a string"
	case b[0] == 't' || b[0] == 'f':
		return "a boolean"
	case b[0] == 'n':
		return "null"
	}
	return "a number"
}

// The loose types carry any JSON value (like Value) but document the type
// a client should send; the verb checks the value itself, with its own
// messages (register_tool).
type (
	// LooseString is documented as a string.
	LooseString struct{ Value }
	// LooseObject is documented as an object.
	LooseObject struct{ Value }
	// LooseBool is documented as a boolean.
	LooseBool struct{ Value }
)

// LooseInt is documented as an integer; the verb checks the value itself.
type LooseInt struct{ Value }
