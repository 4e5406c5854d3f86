package graphop

import (
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/pi-actors/pi-actors/knowledge/api/op"
)

// Validate checks query_graph parameters per operation.
func (q *QueryGraph) Validate() *op.Error {
	if e := op.OneOf("operation", q.Operation, "get", "search", "context"); e != nil {
		return e
	}
	where := "operation=" + q.Operation
	if e := op.CheckStore(q.Store); e != nil {
		return e
	}
	if q.Operation != "context" {
		if e := op.OneOf("entityType", q.EntityType, EntityAtom, EntityMolecule); e != nil {
			return e
		}
	}
	atomSearch := q.Operation == "search" && q.EntityType == EntityAtom
	if e := op.First(
		op.NotFor("id", q.ID != "", where, q.Operation == "get"),
		op.NotFor("projectId", q.ProjectID != "", where, q.Operation != "get"),
		op.NotFor("paths", q.Paths != nil, where, q.Operation == "context"),
		op.NotFor("query", q.Query != "", where, q.Operation == "search"),
		op.NotFor("moleculeId", q.MoleculeID != "", "operation=search entityType="+q.EntityType, atomSearch),
		op.NotFor("orphansOnly", q.OrphansOnly, "operation=search entityType="+q.EntityType, atomSearch),
		op.NotFor("limit", q.Limit != nil, where, q.Operation == "search"),
		op.NotFor("offset", q.Offset != nil, where, q.Operation == "search"),
		op.NotFor("entityType", q.EntityType != "" && q.EntityType != EntityAtom, where, q.Operation != "context"),
	); e != nil {
		return e
	}
	if e := op.First(op.CheckID("id", &q.ID, q.Operation == "get"), op.CheckID("projectId", &q.ProjectID, false),
		op.CheckID("moleculeId", &q.MoleculeID, false)); e != nil {
		return e
	}
	if q.MoleculeID != "" && q.OrphansOnly {
		return op.Invalid("orphansOnly", "orphansOnly=true and moleculeId exclude each other: pass one of them")
	}
	if len(q.Query) > op.MaxQuery {
		return op.Invalid("query", "query is %d bytes; at most %d", len(q.Query), op.MaxQuery)
	}
	q.Query = strings.TrimSpace(q.Query)
	if e := op.CheckPage(q.Limit, q.Offset); e != nil {
		return e
	}
	if e := op.CheckRange("changelogLimit", q.ChangelogLimit, 0, MaxChangelogLimit); e != nil {
		return e
	}
	if q.Operation == "context" {
		return checkContextPaths(q.Paths)
	}
	return nil
}

func checkContextPaths(paths op.PathList) *op.Error {
	if len(paths) == 0 {
		return op.Invalid("paths", "paths is required for operation=context: comma-separated file paths, e.g. paths=src/a.ts,src/b.ts")
	}
	if len(paths) > MaxContextPaths {
		return op.Invalid("paths", "%d paths given; at most %d per call: split the list", len(paths), MaxContextPaths)
	}
	for _, p := range paths {
		if len(p) > op.MaxPathLen {
			return op.Invalid("paths", "path %.40q… is %d bytes; at most %d", p, len(p), op.MaxPathLen)
		}
	}
	return nil
}

// Validate checks manage_graph parameters per operation and entity type.
func (m *ManageGraph) Validate() *op.Error {
	if e := op.First(op.OneOf("operation", m.Operation, "create", "update", "delete"),
		op.OneOf("entityType", m.EntityType, EntityAtom, EntityMolecule), op.CheckStore(m.Store)); e != nil {
		return e
	}
	where, et := "operation="+m.Operation, "entityType="+m.EntityType
	create, update, del := m.Operation == "create", m.Operation == "update", m.Operation == "delete"
	atom := m.EntityType == EntityAtom
	if e := op.First(
		op.NotFor("id", m.ID != "", where, !create),
		op.NotFor("version", m.Version != nil, where, !create),
		op.NotFor("projectId", m.ProjectID != "", where+" (an entity's project cannot change)", create),
		op.NotFor("name", m.Name != nil, where, !del),
		op.NotFor("knowledge", m.Knowledge != nil, where, !del),
		op.NotFor("knowledgeMode", m.KnowledgeMode != "", where, update),
		op.NotFor("createdByTaskId", m.CreatedByTaskID != "", where, create),
		op.NotFor("lastTaskId", m.LastTaskID != "", where, !create),
		op.NotFor("cascade", m.Cascade, where+" "+et, del && !atom),
		op.NotFor("paths", m.Paths != nil, where+" "+et, atom && !del),
		op.NotFor("moleculeId", m.SetsMolecule(), where+" "+et, atom && !del),
		op.NotFor("relatedAtoms", m.RelatedAtoms != nil, where+" "+et, atom && !del),
		op.NotFor("relatedMolecules", m.RelatedMolecules != nil, where+" "+et, !atom && !del),
	); e != nil {
		return e
	}
	if e := op.First(op.CheckID("id", &m.ID, !create), op.CheckID("projectId", &m.ProjectID, false),
		op.CheckTaskID("createdByTaskId", m.CreatedByTaskID), op.CheckTaskID("lastTaskId", m.LastTaskID)); e != nil {
		return e
	}
	if m.MoleculeID != nil && *m.MoleculeID != "" {
		if e := op.CheckID("moleculeId", m.MoleculeID, false); e != nil {
			return e
		}
	}
	if !create {
		if m.Version == nil {
			return op.Invalid("version", "version is required for %s: pass the version you read (query_graph operation=get)", where)
		}
		if *m.Version < 1 {
			return op.Invalid("version", "version must be 1 or more (versions start at 1), not %d", *m.Version)
		}
	}
	if del {
		return nil
	}
	return m.validateFields(create, atom)
}

func (m *ManageGraph) validateFields(create, atom bool) *op.Error {
	if create && m.Name == nil {
		return op.Invalid("name", "name is required for operation=create: 1-255 characters")
	}
	if e := op.First(op.CheckName(m.Name), checkKnowledge(m.Knowledge)); e != nil {
		return e
	}
	if e := op.OneOf("knowledgeMode", m.KnowledgeMode, "", "overwrite", "append"); e != nil {
		return e
	}
	if m.KnowledgeMode == "append" && (m.Knowledge == nil || *m.Knowledge == "") {
		return op.Invalid("knowledge", "knowledgeMode=append needs knowledge: the text to append (non-empty after trimming)")
	}
	if create && atom && m.Paths == nil {
		return op.Invalid("paths", `paths is required to create an atom: a JSON array of glob patterns, e.g. ["src/pages/checkout/**"]`)
	}
	if e := validatePatterns(m.Paths); e != nil {
		return e
	}
	// An input relatedAtoms entry's name is output only: dropped.
	if e := checkRelated("relatedAtoms", "atomId", m.RelatedAtoms, func(r *RelatedAtom) (*string, *string) {
		r.Name = ""
		return &r.AtomID, &r.Reason
	}); e != nil {
		return e
	}
	if e := checkRelated("relatedMolecules", "moleculeId", m.RelatedMolecules, func(r *RelatedMolecule) (*string, *string) {
		return &r.MoleculeID, &r.Reason
	}); e != nil {
		return e
	}
	if !create && m.Name == nil && m.Knowledge == nil && m.Paths == nil && !m.SetsMolecule() &&
		m.RelatedAtoms == nil && m.RelatedMolecules == nil {
		return op.Invalid("", "nothing to update: pass at least one of name, knowledge, %s", map[bool]string{
			true: "paths, moleculeId, relatedAtoms", false: "relatedMolecules"}[atom])
	}
	return nil
}

// validatePatterns checks an atom's glob patterns (nil is "not given" and
// passes): at least one (INVARIANT_VIOLATION otherwise), at most 20 of at
// most 512 characters, each relative, without "..", valid glob syntax.
func validatePatterns(p Patterns) *op.Error {
	if p == nil {
		return nil
	}
	if len(p) == 0 {
		return op.Invariant("paths", "paths must not be empty: an atom without path patterns has no boundary; give at least one glob")
	}
	if len(p) > MaxPatterns {
		return op.Invalid("paths", "%d patterns given; at most %d per atom: use ** to cover directories", len(p), MaxPatterns)
	}
	for i, pat := range p {
		p[i] = dotless(strings.TrimSpace(pat))
		pat = p[i]
		switch {
		case pat == "":
			return op.Invalid("paths", "pattern %d is empty", i+1)
		case utf8.RuneCountInString(pat) > op.MaxPatternLen:
			return op.Invalid("paths", "pattern %d is %d characters; at most %d", i+1, utf8.RuneCountInString(pat), op.MaxPatternLen)
		case strings.HasPrefix(pat, "/") || strings.HasPrefix(pat, `\`) || (len(pat) > 1 && pat[1] == ':'):
			return op.Invalid("paths", "pattern %q is absolute: patterns are relative to the project root, e.g. %q", pat, strings.TrimLeft(pat, `/\`))
		case hasDotDot(pat):
			return op.Invalid("paths", "pattern %q contains a .. segment: patterns stay inside the project root", pat)
		case !doublestar.ValidatePattern(pat):
			return op.Invalid("paths", "pattern %q is not a valid glob (unclosed [ or {, or a trailing \\)", pat)
		}
	}
	return nil
}

// dotless drops a pattern's "." segments (./src/** is src/**): the paths
// it is matched against are cleaned, so ./src/** matched nothing.
func dotless(pat string) string {
	for strings.HasPrefix(pat, "./") {
		pat = strings.TrimLeft(pat[2:], "/")
	}
	for strings.Contains(pat, "/./") {
		pat = strings.ReplaceAll(pat, "/./", "/")
	}
	return pat
}

func hasDotDot(pat string) bool {
	for _, seg := range strings.FieldsFunc(pat, func(r rune) bool { return r == '/' || r == '\\' }) {
		if seg == ".." {
			return true
		}
	}
	return false
}

// checkRelated checks a related array (at most MaxRelated entries; ids
// UUIDs, lower-cased; reasons trimmed, at most MaxReason characters).
// entry points at an entry's id and reason; idName names the id field.
func checkRelated[E any](field, idName string, r []E, entry func(*E) (id, reason *string)) *op.Error {
	if len(r) > MaxRelated {
		return op.Invalid(field, "%d entries; at most %d", len(r), MaxRelated)
	}
	for i := range r {
		id, reason := entry(&r[i])
		*id = strings.ToLower(strings.TrimSpace(*id))
		if !op.IsID(*id) {
			return op.Invalid(field, "%s entry %d: %s must be an entity id (a UUID), got %q", field, i+1, idName, *id)
		}
		*reason = strings.TrimSpace(*reason)
		if n := utf8.RuneCountInString(*reason); n > MaxReason {
			return op.Invalid(field, "%s entry %d: reason is %d characters; at most %d", field, i+1, n, MaxReason)
		}
	}
	return nil
}

// Validate checks manage_changelog parameters.
func (m *ManageChangelog) Validate() *op.Error {
	if e := op.First(op.OneOf("operation", m.Operation, "append", "search"),
		op.OneOf("parentType", m.ParentType, EntityAtom, EntityMolecule), op.CheckStore(m.Store),
		op.CheckID("parentId", &m.ParentID, true)); e != nil {
		return e
	}
	where := "operation=" + m.Operation
	appendOp := m.Operation == "append"
	if e := op.First(
		op.NotFor("taskId", m.TaskID != "", where, appendOp),
		op.NotFor("summary", m.Summary != "", where, appendOp),
		op.NotFor("limit", m.Limit != nil, where, !appendOp),
		op.NotFor("offset", m.Offset != nil, where, !appendOp),
		op.CheckTaskID("taskId", m.TaskID),
		op.CheckPage(m.Limit, m.Offset),
	); e != nil {
		return e
	}
	if !appendOp {
		return nil
	}
	m.Summary = strings.TrimSpace(m.Summary)
	if m.Summary == "" {
		return op.Invalid("summary", "summary is required for operation=append: what changed and why (non-empty)")
	}
	if len(m.Summary) > MaxSummary {
		return op.Invalid("summary", "summary is %d bytes; at most %d: keep the entry short and put details in the knowledge field", len(m.Summary), MaxSummary)
	}
	return nil
}

// Validate checks project_create parameters.
func (p *ProjectCreate) Validate() *op.Error {
	if p.Name == "" {
		return op.Invalid("name", "name is required: the project's name, 1-255 characters")
	}
	if e := op.First(op.CheckName(&p.Name), op.CheckStore(p.Store)); e != nil {
		return e
	}
	if strings.ContainsRune(p.Root, 0) {
		return op.Invalid("root", "root contains a NUL byte")
	}
	return nil
}

// Validate checks project_list parameters.
func (p *ProjectList) Validate() *op.Error {
	return op.First(op.CheckPage(p.Limit, p.Offset), op.CheckStore(p.Store))
}

// Validate checks history parameters.
func (h *History) Validate() *op.Error {
	return op.First(op.CheckID("id", &h.ID, true), op.CheckRange("version", h.Version, 1, 1<<31-1),
		op.CheckPage(h.Limit, h.Offset), op.CheckStore(h.Store))
}

// Validate checks verify parameters.
func (v *Verify) Validate() *op.Error { return op.CheckStore(v.Store) }

// Validate checks task_context parameters.
func (t *TaskContext) Validate() *op.Error {
	if (t.File == "") == (t.Text == "") {
		return op.Invalid("file", "pass exactly one of file (a task markdown file) or text (the task's text)")
	}
	if len(t.Text) > MaxTaskText {
		return op.Invalid("text", "text is %d bytes; at most %d", len(t.Text), MaxTaskText)
	}
	return op.First(op.CheckID("projectId", &t.ProjectID, false),
		op.CheckRange("changelogLimit", t.ChangelogLimit, 0, MaxChangelogLimit), op.CheckStore(t.Store))
}

func checkKnowledge(p *string) *op.Error {
	if p == nil {
		return nil
	}
	*p = strings.TrimSpace(*p)
	if len(*p) > MaxKnowledge {
		return op.Invalid("knowledge", "knowledge is %d bytes after trimming; at most %d (32 KB): condense it or split the area into more atoms", len(*p), MaxKnowledge)
	}
	return nil
}
