package graphop

import (
	"github.com/pi-actors/pi-actors/knowledge/api/op"
)

// Entity types.
const (
	EntityAtom     = "atom"
	EntityMolecule = "molecule"
)

// Defaults and bounds of the spec (and of this implementation where the
// spec names none).
const (
	DefaultChangelogLimit = 5
	MaxChangelogLimit     = 100
	MaxPatterns           = 20
	MaxKnowledge          = 32 << 10 // bytes, after trimming
	MaxSummary            = 4 << 10  // bytes
	MaxRelated            = 50
	MaxReason             = 1024 // characters of one related entry's reason
	MaxContextPaths       = 5000
	MaxTaskText           = 1 << 20 // bytes of task_context text or file
)

// Requests makes the knowledge graph's requests, in their fixed order.
var Requests = op.Table{
	func() op.Request { return new(QueryGraph) },
	func() op.Request { return new(ManageGraph) },
	func() op.Request { return new(ManageChangelog) },
	func() op.Request { return new(ProjectCreate) },
	func() op.Request { return new(ProjectList) },
	func() op.Request { return new(History) },
	func() op.Request { return new(Verify) },
	func() op.Request { return new(TaskContext) },
}

// QueryGraph is query_graph: all reads (get, search, context).
type QueryGraph struct {
	Operation        string      `json:"operation" jsonschema:"get (one atom or molecule by id, with changelog; a molecule also lists its atoms), search (filtered list), or context (atoms whose path patterns match the given file paths, walked up to molecules)"`
	EntityType       string      `json:"entityType,omitempty" jsonschema:"atom or molecule; required for get and search"`
	ID               string      `json:"id,omitempty" jsonschema:"entity id; required for get"`
	ProjectID        string      `json:"projectId,omitempty" jsonschema:"project to scope search and context to; may be omitted when the cwd lies under exactly one project root"`
	Paths            op.PathList `json:"paths,omitempty" jsonschema:"comma-separated file paths (or a JSON array) to match against atom patterns; required for context"`
	Query            string      `json:"query,omitempty" jsonschema:"text search on name and knowledge (search)"`
	MoleculeID       string      `json:"moleculeId,omitempty" jsonschema:"filter atoms by molecule (search)"`
	OrphansOnly      bool        `json:"orphansOnly,omitempty" jsonschema:"only atoms without a molecule (search)"`
	IncludeChangelog *bool       `json:"includeChangelog,omitempty" jsonschema:"include the last changelogLimit changelog entries inline; default true for get and context, false for search"`
	ChangelogLimit   *int        `json:"changelogLimit,omitempty" jsonschema:"how many changelog entries to include inline; default 5, at most 100"`
	Limit            *int        `json:"limit,omitempty" jsonschema:"search page size; default 20, at most 100"`
	Offset           *int        `json:"offset,omitempty" jsonschema:"search page offset; default 0"`
	Store            string      `json:"store,omitempty" jsonschema:"read only this store: project or personal; default both, project first"`
}

// ManageGraph is manage_graph: all writes (create, update, delete).
type ManageGraph struct {
	Operation        string           `json:"operation" jsonschema:"create, update or delete"`
	EntityType       string           `json:"entityType" jsonschema:"atom or molecule"`
	ID               string           `json:"id,omitempty" jsonschema:"entity id; required for update and delete"`
	Version          *int             `json:"version,omitempty" jsonschema:"the version you read (optimistic locking); required for update and delete"`
	ProjectID        string           `json:"projectId,omitempty" jsonschema:"project of a new entity (create); may be omitted when the cwd lies under exactly one project root"`
	Name             *string          `json:"name,omitempty" jsonschema:"display name, 1-255 characters; required for create"`
	Paths            Patterns         `json:"paths,omitempty" jsonschema:"atom only: JSON array of relative glob patterns (at most 20, 512 characters each; * within a segment, ** across segments); required for create"`
	Knowledge        *string          `json:"knowledge,omitempty" jsonschema:"the knowledge text, at most 32 KB after trimming"`
	KnowledgeMode    string           `json:"knowledgeMode,omitempty" jsonschema:"update only: overwrite (default) replaces knowledge; append adds a separator line with timestamp and task id, then the text"`
	MoleculeID       *string          `json:"moleculeId,omitempty" jsonschema:"atom only: assign or reassign the atom to a molecule of the same project; null or empty removes it from its molecule"`
	RelatedAtoms     RelatedAtoms     `json:"relatedAtoms,omitempty" jsonschema:"atom only: JSON array of {atomId, reason}, at most 50, each an atom of the same project"`
	RelatedMolecules RelatedMolecules `json:"relatedMolecules,omitempty" jsonschema:"molecule only: JSON array of {moleculeId, reason}, at most 50, each a molecule of the same project"`
	CreatedByTaskID  string           `json:"createdByTaskId,omitempty" jsonschema:"create: task that triggered the creation (any id up to 255 characters; run:<id> must name a run); default the calling run"`
	LastTaskID       string           `json:"lastTaskId,omitempty" jsonschema:"update and delete: task performing the change; default the calling run"`
	Cascade          bool             `json:"cascade,omitempty" jsonschema:"delete molecule: true deletes its atoms too; false (default) keeps them as orphan atoms"`
	Store            string           `json:"store,omitempty" jsonschema:"write to this store: project or personal; default the project store when one is found (update and delete: the store that holds the id)"`

	// moleculeNull is set by decoding when moleculeId was given as JSON
	// null (unassign); Go callers set MoleculeID to "" instead.
	moleculeNull bool
}

// ManageChangelog is manage_changelog: append an entry or page through them.
type ManageChangelog struct {
	Operation  string `json:"operation" jsonschema:"append or search"`
	ParentType string `json:"parentType" jsonschema:"atom or molecule"`
	ParentID   string `json:"parentId" jsonschema:"id of the entity the changelog belongs to"`
	TaskID     string `json:"taskId,omitempty" jsonschema:"append: task the entry records (any id up to 255 characters; run:<id> must name a run); default the calling run"`
	Summary    string `json:"summary,omitempty" jsonschema:"append: what changed and why, 1 byte to 4 KB"`
	Limit      *int   `json:"limit,omitempty" jsonschema:"search page size; default 20, at most 100"`
	Offset     *int   `json:"offset,omitempty" jsonschema:"search page offset; default 0"`
	Store      string `json:"store,omitempty" jsonschema:"project or personal; default the store that holds parentId"`
}

// ProjectCreate creates a project: {id, name, root, createdAt}.
type ProjectCreate struct {
	Name  string `json:"name" jsonschema:"project name, 1-255 characters"`
	Root  string `json:"root,omitempty" jsonschema:"project root directory (absolute, or relative to the cwd); default the cwd. A cwd under exactly one root selects that project when projectId is omitted"`
	Store string `json:"store,omitempty" jsonschema:"project or personal; default the project store when one is found"`
}

// ProjectList lists projects.
type ProjectList struct {
	Limit  *int   `json:"limit,omitempty" jsonschema:"page size; default 20, at most 100"`
	Offset *int   `json:"offset,omitempty" jsonschema:"page offset; default 0"`
	Store  string `json:"store,omitempty" jsonschema:"project or personal; default both"`
}

// History lists an atom's or molecule's hash-chained deltas, newest first,
// and reconstructs one version when Version is set.
type History struct {
	ID      string `json:"id" jsonschema:"atom or molecule id (deleted entities keep their history)"`
	Version *int   `json:"version,omitempty" jsonschema:"reconstruct this version of the entity"`
	Limit   *int   `json:"limit,omitempty" jsonschema:"page size; default 20, at most 100"`
	Offset  *int   `json:"offset,omitempty" jsonschema:"page offset; default 0"`
	Store   string `json:"store,omitempty" jsonschema:"project or personal; default the store that holds the id"`
}

// Verify recomputes every hash chain and reports breaks.
type Verify struct {
	Store string `json:"store,omitempty" jsonschema:"project or personal; default both"`
}

// TaskContext reads a task's "Context Files" section and runs context.
type TaskContext struct {
	File             string `json:"file,omitempty" jsonschema:"task file (markdown) to read; relative to the cwd"`
	Text             string `json:"text,omitempty" jsonschema:"task text, instead of file"`
	ProjectID        string `json:"projectId,omitempty" jsonschema:"project to match in; default the one whose root holds the cwd"`
	IncludeChangelog *bool  `json:"includeChangelog,omitempty" jsonschema:"include the last changelogLimit changelog entries of each atom; default true"`
	ChangelogLimit   *int   `json:"changelogLimit,omitempty" jsonschema:"how many changelog entries per atom; default 5"`
	Store            string `json:"store,omitempty" jsonschema:"project or personal; default both"`
}

// Op names.
func (*QueryGraph) Op() string      { return "query_graph" }
func (*ManageGraph) Op() string     { return "manage_graph" }
func (*ManageChangelog) Op() string { return "manage_changelog" }
func (*ProjectCreate) Op() string   { return "project_create" }
func (*ProjectList) Op() string     { return "project_list" }
func (*History) Op() string         { return "history" }
func (*Verify) Op() string          { return "verify" }
func (*TaskContext) Op() string     { return "task_context" }

// UnmarshalJSON decodes strictly (see op.Unmarshal).
func (q *QueryGraph) UnmarshalJSON(b []byte) error { return op.Unmarshal(b, q) }

// UnmarshalJSON decodes strictly (see op.Unmarshal); moleculeId null unassigns.
func (m *ManageGraph) UnmarshalJSON(b []byte) error { return op.Unmarshal(b, m) }

// UnmarshalJSON decodes strictly (see op.Unmarshal).
func (m *ManageChangelog) UnmarshalJSON(b []byte) error { return op.Unmarshal(b, m) }

// UnmarshalJSON decodes strictly (see op.Unmarshal).
func (p *ProjectCreate) UnmarshalJSON(b []byte) error { return op.Unmarshal(b, p) }

// UnmarshalJSON decodes strictly (see op.Unmarshal).
func (p *ProjectList) UnmarshalJSON(b []byte) error { return op.Unmarshal(b, p) }

// UnmarshalJSON decodes strictly (see op.Unmarshal).
func (h *History) UnmarshalJSON(b []byte) error { return op.Unmarshal(b, h) }

// UnmarshalJSON decodes strictly (see op.Unmarshal).
func (v *Verify) UnmarshalJSON(b []byte) error { return op.Unmarshal(b, v) }

// UnmarshalJSON decodes strictly (see op.Unmarshal).
func (t *TaskContext) UnmarshalJSON(b []byte) error { return op.Unmarshal(b, t) }

// NullParam records moleculeId given as JSON null (unassign).
func (m *ManageGraph) NullParam(name string) {
	if name == "moleculeId" {
		m.moleculeNull = true
	}
}

// Unassign reports whether the request removes the atom from its molecule
// (moleculeId given as null or "").
func (m *ManageGraph) Unassign() bool {
	return m.moleculeNull || (m.MoleculeID != nil && *m.MoleculeID == "")
}

// SetsMolecule reports whether moleculeId was given at all (a value, null
// or "").
func (m *ManageGraph) SetsMolecule() bool { return m.moleculeNull || m.MoleculeID != nil }

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
