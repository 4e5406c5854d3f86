package graphop

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
// DeletedAtoms the ones a cascade removed; Unrelated the entities whose
// relatedAtoms or relatedMolecules named a deleted one (it was dropped
// from the list, a new version each).
type Deleted struct {
	EntityType       string   `json:"entityType"`
	ID               string   `json:"id"`
	Deleted          bool     `json:"deleted"`
	Version          int      `json:"version"`
	OrphanedAtoms    []string `json:"orphanedAtoms,omitzero"`
	Unrelated        []string `json:"unrelated,omitzero"`
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

// GraphHints is the spec's advance hint for a run that reached a terminal
// status under a project with atoms.
type GraphHints struct {
	Message          string   `json:"message"`
	SuggestedActions []string `json:"suggestedActions"`
}

// Counts are a store's row counts.
type Counts struct {
	Projects  int `json:"projects"`
	Molecules int `json:"molecules"`
	Atoms     int `json:"atoms"`
	Changelog int `json:"changelog"`
	Deltas    int `json:"deltas"`
}
