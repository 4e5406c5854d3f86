package graphop

import "github.com/pi-actors/pi-actors/knowledge/api/op"

// Patterns is an atom's glob patterns. It decodes from a JSON array of
// strings or from a string holding one (the spec's "JSON array of glob
// patterns" text parameter). Omitted is nil; an empty array is non-nil.
type Patterns []string

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

// RelatedMolecules decodes from a JSON array or a string holding one.
type RelatedMolecules []RelatedMolecule

// UnmarshalJSON accepts ["a/**"] or "[\"a/**\"]".
func (p *Patterns) UnmarshalJSON(data []byte) error { return op.DecodeList(data, p) }

// UnmarshalJSON accepts [{"atomId":…,"reason":…}] or the same as a string.
func (r *RelatedAtoms) UnmarshalJSON(data []byte) error { return op.DecodeList(data, r) }

// UnmarshalJSON accepts [{"moleculeId":…,"reason":…}] or the same as a string.
func (r *RelatedMolecules) UnmarshalJSON(data []byte) error { return op.DecodeList(data, r) }

// Shape is what Patterns take.
func (Patterns) Shape() string {
	return `a JSON array of glob patterns (or a string holding one), e.g. ["src/pages/**"]`
}

// Shape is what RelatedAtoms take.
func (RelatedAtoms) Shape() string {
	return `a JSON array of {"atomId": …, "reason": …} (or a string holding one)`
}

// Shape is what RelatedMolecules take.
func (RelatedMolecules) Shape() string {
	return `a JSON array of {"moleculeId": …, "reason": …} (or a string holding one)`
}
