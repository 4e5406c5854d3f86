package api

import "fmt"

// Atom is the spec's atom. MoleculeID is null for an orphan atom.
// Changelog is present when asked for (the last N entries, newest first).
// Store is set on everything read through the layered stores.
type Atom struct {
	ID              string           `json:"id"`
	ProjectID       string           `json:"projectId"`
	MoleculeID      *string          `json:"moleculeId"`
	Name            string           `json:"name"`
	Paths           []string         `json:"paths"`
	Knowledge       string           `json:"knowledge"`
	RelatedAtoms    []RelatedAtom    `json:"relatedAtoms"`
	CreatedByTaskID string           `json:"createdByTaskId"`
	LastTaskID      string           `json:"lastTaskId"`
	Version         int              `json:"version"`
	CreatedAt       string           `json:"createdAt"`
	UpdatedAt       string           `json:"updatedAt"`
	Changelog       []ChangelogEntry `json:"changelog,omitzero"`
	Store           string           `json:"store,omitempty"`
}

// Molecule is the spec's molecule; Atoms lists its member atoms on get.
type Molecule struct {
	ID               string            `json:"id"`
	ProjectID        string            `json:"projectId"`
	Name             string            `json:"name"`
	Knowledge        string            `json:"knowledge"`
	RelatedMolecules []RelatedMolecule `json:"relatedMolecules"`
	CreatedByTaskID  string            `json:"createdByTaskId"`
	LastTaskID       string            `json:"lastTaskId"`
	Version          int               `json:"version"`
	CreatedAt        string            `json:"createdAt"`
	UpdatedAt        string            `json:"updatedAt"`
	Changelog        []ChangelogEntry  `json:"changelog,omitzero"`
	Atoms            []Atom            `json:"atoms,omitzero"`
	Store            string            `json:"store,omitempty"`
}

// ChangelogEntry is one immutable changelog entry.
type ChangelogEntry struct {
	ID         string `json:"id"`
	ParentType string `json:"parentType"`
	ParentID   string `json:"parentId"`
	TaskID     string `json:"taskId"`
	Summary    string `json:"summary"`
	CreatedAt  string `json:"createdAt"`
	Store      string `json:"store,omitempty"`
}

// Page is a search result: {"items":[…],"total":N,"limit":L,"offset":O}.
type Page[T any] struct {
	Items  []T `json:"items"`
	Total  int `json:"total"`
	Limit  int `json:"limit"`
	Offset int `json:"offset"`
}

// Context is the context operation's data object.
type Context struct {
	Molecules      []ContextMolecule `json:"molecules"`
	OrphanAtoms    []ContextAtom     `json:"orphanAtoms"`
	UnmatchedPaths []string          `json:"unmatchedPaths"`
}

// ContextMolecule is a molecule with its matched atoms, in a Context.
type ContextMolecule struct {
	ID        string        `json:"id"`
	Name      string        `json:"name"`
	Knowledge string        `json:"knowledge"`
	Atoms     []ContextAtom `json:"atoms"`
	Store     string        `json:"store,omitempty"`
}

// ContextAtom is a matched atom in a Context: MatchedPaths are the
// requested paths its patterns matched, in request order.
type ContextAtom struct {
	ID           string           `json:"id"`
	Name         string           `json:"name"`
	Knowledge    string           `json:"knowledge"`
	MatchedPaths []string         `json:"matchedPaths"`
	RelatedAtoms []RelatedAtom    `json:"relatedAtoms"`
	Changelog    []ChangelogEntry `json:"changelog,omitzero"`
	Store        string           `json:"store,omitempty"`
}

// TaskContextResult is task_context's result.
type TaskContextResult struct {
	GraphContext Context `json:"graphContext"`
}

// Deleted is manage_graph delete's result. OrphanedAtoms are the member
// atoms a molecule delete without cascade kept (now orphans);
// DeletedAtoms the ones a cascade removed.
type Deleted struct {
	EntityType       string   `json:"entityType"`
	ID               string   `json:"id"`
	Deleted          bool     `json:"deleted"`
	Version          int      `json:"version"`
	OrphanedAtoms    []string `json:"orphanedAtoms,omitzero"`
	DeletedAtoms     []string `json:"deletedAtoms,omitzero"`
	DeletedChangelog int      `json:"deletedChangelog"`
	Store            string   `json:"store,omitempty"`
}

// Project is {id, name, root, createdAt}.
type Project struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Root      string `json:"root"`
	CreatedAt string `json:"createdAt"`
	Store     string `json:"store,omitempty"`
}

// Delta is one immutable history record of an atom or molecule. Changes
// maps each changed field to [old, new] (old is null on create, new is
// null on delete). Hash = sha256(canonical state + "|" + ParentHash).
type Delta struct {
	EntityType string            `json:"entityType"`
	EntityID   string            `json:"entityId"`
	Version    int               `json:"version"`
	Op         string            `json:"op"`
	Changes    map[string][2]any `json:"changes"`
	TaskID     string            `json:"taskId"`
	CreatedAt  string            `json:"createdAt"`
	ParentHash string            `json:"parentHash"`
	Hash       string            `json:"hash"`
}

// HistoryResult is history's result: deltas newest first (paged), and the
// reconstructed entity (an *Atom or *Molecule) when a version was asked for.
type HistoryResult struct {
	EntityType string  `json:"entityType"`
	ID         string  `json:"id"`
	Version    int     `json:"version"`
	Deleted    bool    `json:"deleted"`
	Items      []Delta `json:"items"`
	Total      int     `json:"total"`
	Limit      int     `json:"limit"`
	Offset     int     `json:"offset"`
	State      any     `json:"state,omitempty"`
	Store      string  `json:"store,omitempty"`
}

// Break is one place where a hash chain does not verify.
type Break struct {
	EntityType string `json:"entityType"`
	EntityID   string `json:"entityId"`
	Version    int    `json:"version"`
	Reason     string `json:"reason"`
}

// VerifyReport is one store's verification.
type VerifyReport struct {
	Store    string  `json:"store,omitempty"`
	Path     string  `json:"path"`
	OK       bool    `json:"ok"`
	Entities int     `json:"entities"`
	Deltas   int     `json:"deltas"`
	Breaks   []Break `json:"breaks"`
}

// VerifyResult is verify's result; OK is false when any store has a break.
type VerifyResult struct {
	OK     bool           `json:"ok"`
	Stores []VerifyReport `json:"stores"`
}

// InitResult is init's result.
type InitResult struct {
	Path    string  `json:"path"`
	Created bool    `json:"created"`
	Project Project `json:"project"`
}

// Counts are a store's row counts.
type Counts struct {
	Projects  int `json:"projects"`
	Molecules int `json:"molecules"`
	Atoms     int `json:"atoms"`
	Changelog int `json:"changelog"`
	Deltas    int `json:"deltas"`
}

// StoreStatus is one store's status. Projects lists at most MaxLimit.
type StoreStatus struct {
	Store         string    `json:"store,omitempty"`
	Path          string    `json:"path"`
	SchemaVersion int       `json:"schemaVersion"`
	SizeBytes     int64     `json:"sizeBytes"`
	Counts        Counts    `json:"counts"`
	Projects      []Project `json:"projects"`
	// Vectors is the vector graph's state (nil when it was never loaded
	// in this process and the store has no nodes).
	Vectors *VectorStatus `json:"vectors,omitempty"`
}

// StatusResult is status's result.
type StatusResult struct {
	Stores []StoreStatus `json:"stores"`
}

// GraphHints is the spec's advance hint for a run that reached a terminal
// status under a project with atoms.
type GraphHints struct {
	Message          string   `json:"message"`
	SuggestedActions []string `json:"suggestedActions"`
}

// Code is the machine-readable kind of an Error, as the spec names it.
type Code string

// The spec's error codes.
const (
	CodeValidation Code = "VALIDATION_ERROR"    // bad input
	CodeNotFound   Code = "NOT_FOUND"           // a referenced entity does not exist
	CodeConflict   Code = "CONFLICT"            // version mismatch
	CodeInvariant  Code = "INVARIANT_VIOLATION" // cross-project membership, empty paths
)

// Sentinels for errors.Is: an *Error matches the sentinel of its Code.
var (
	ErrValidation = &Error{Code: CodeValidation}
	ErrNotFound   = &Error{Code: CodeNotFound}
	ErrConflict   = &Error{Code: CodeConflict}
	ErrInvariant  = &Error{Code: CodeInvariant}
)

// Error is a domain error of a knowledge operation. Message names the field
// and the fix; Details carries machine-readable context: "field" for the
// parameter at fault and, for CONFLICT, "currentVersion".
type Error struct {
	Code    Code           `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Is matches the sentinel with the same Code (a sentinel has no message).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Code == e.Code
}

// Exit is the sysexits code for the error: 65 (data error) for
// VALIDATION_ERROR and INVARIANT_VIOLATION, 66 (no input) for NOT_FOUND,
// 75 (temporary failure: re-read and retry) for CONFLICT.
func (e *Error) Exit() int {
	switch e.Code {
	case CodeNotFound:
		return 66
	case CodeConflict:
		return 75
	default:
		return 65
	}
}

// Invalid is a VALIDATION_ERROR about field.
func Invalid(field, format string, args ...any) *Error {
	return withField(CodeValidation, field, format, args...)
}

// Invariant is an INVARIANT_VIOLATION about field.
func Invariant(field, format string, args ...any) *Error {
	return withField(CodeInvariant, field, format, args...)
}

// NotFound is a NOT_FOUND for the entity kind ("atom", "molecule",
// "project", "run") with id, referenced by field.
func NotFound(field, kind, id string) *Error {
	e := withField(CodeNotFound, field, "%s %s not found (%s)", kind, id, field)
	e.Details["id"] = id
	return e
}

// Conflict is a CONFLICT: the caller's version is not the current one.
func Conflict(kind, id string, given, current int) *Error {
	return &Error{
		Code: CodeConflict,
		Message: fmt.Sprintf("%s %s is at version %d, not %d: read it again (query_graph operation=get) and retry with version=%d",
			kind, id, current, given, current),
		Details: map[string]any{"field": "version", "currentVersion": current},
	}
}

func withField(code Code, field, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Details: map[string]any{"field": field}}
}
