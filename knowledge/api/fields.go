package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
)

// errShape is a parameter value of the wrong JSON shape; Decode turns it
// into a VALIDATION_ERROR naming the field.
var errShape = errors.New("wrong shape")

// Patterns is an atom's glob patterns. It decodes from a JSON array of
// strings or from a string holding one (the spec's "JSON array of glob
// patterns" text parameter). Omitted is nil; an empty array is non-nil.
type Patterns []string

// UnmarshalJSON accepts ["a/**"] or "[\"a/**\"]".
func (p *Patterns) UnmarshalJSON(data []byte) error {
	var out []string
	if err := decodeArrayOrString(data, &out); err != nil {
		return err
	}
	if out == nil {
		out = []string{}
	}
	*p = out
	return nil
}

// PathList is the context operation's file paths: a comma-separated string
// (the spec's form) or a JSON array of strings. Entries are trimmed and
// empty entries dropped.
type PathList []string

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

// RelatedAtom is one entry of an atom's relatedAtoms: {atomId, reason}.
// Name is filled in on output by the context operation (the related
// atom's current name) and ignored on input.
type RelatedAtom struct {
	AtomID string `json:"atomId" jsonschema:"id of the related atom"`
	Name   string `json:"name,omitempty" jsonschema:"the related atom's name (output only)"`
	Reason string `json:"reason" jsonschema:"how the two atoms relate"`
}

// RelatedMolecule is one entry of a molecule's relatedMolecules.
type RelatedMolecule struct {
	MoleculeID string `json:"moleculeId" jsonschema:"id of the related molecule"`
	Reason     string `json:"reason" jsonschema:"how the two molecules relate"`
}

// RelatedAtoms decodes from a JSON array or a string holding one.
// Omitted is nil; an empty array is non-nil.
type RelatedAtoms []RelatedAtom

// UnmarshalJSON accepts [{"atomId":…,"reason":…}] or the same as a string.
func (r *RelatedAtoms) UnmarshalJSON(data []byte) error {
	var out []RelatedAtom
	if err := decodeArrayOrString(data, &out); err != nil {
		return err
	}
	if out == nil {
		out = []RelatedAtom{}
	}
	*r = out
	return nil
}

// RelatedMolecules decodes from a JSON array or a string holding one.
type RelatedMolecules []RelatedMolecule

// UnmarshalJSON accepts [{"moleculeId":…,"reason":…}] or the same as a string.
func (r *RelatedMolecules) UnmarshalJSON(data []byte) error {
	var out []RelatedMolecule
	if err := decodeArrayOrString(data, &out); err != nil {
		return err
	}
	if out == nil {
		out = []RelatedMolecule{}
	}
	*r = out
	return nil
}

// decodeArrayOrString decodes a JSON array, or a JSON string whose content
// is a JSON array, strictly (unknown keys in objects are errors).
func decodeArrayOrString(data []byte, v any) error {
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
	if err := dec.Decode(v); err != nil {
		return errShape
	}
	if dec.More() {
		return errShape
	}
	return nil
}
