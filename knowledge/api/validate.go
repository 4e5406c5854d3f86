package api

import (
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
)

// Validate checks query_graph parameters per operation.
func (q *QueryGraph) Validate() *Error {
	if e := oneOf("operation", q.Operation, "get", "search", "context"); e != nil {
		return e
	}
	op := "operation=" + q.Operation
	if e := checkStore(q.Store); e != nil {
		return e
	}
	if q.Operation != "context" {
		if e := oneOf("entityType", q.EntityType, EntityAtom, EntityMolecule); e != nil {
			return e
		}
	}
	atomSearch := q.Operation == "search" && q.EntityType == EntityAtom
	if e := first(
		notFor("id", q.ID != "", op, q.Operation == "get"),
		notFor("projectId", q.ProjectID != "", op, q.Operation != "get"),
		notFor("paths", q.Paths != nil, op, q.Operation == "context"),
		notFor("query", q.Query != "", op, q.Operation == "search"),
		notFor("moleculeId", q.MoleculeID != "", "operation=search entityType="+q.EntityType, atomSearch),
		notFor("orphansOnly", q.OrphansOnly, "operation=search entityType="+q.EntityType, atomSearch),
		notFor("limit", q.Limit != nil, op, q.Operation == "search"),
		notFor("offset", q.Offset != nil, op, q.Operation == "search"),
		notFor("entityType", q.EntityType != "" && q.EntityType != EntityAtom, op, q.Operation != "context"),
	); e != nil {
		return e
	}
	if e := first(checkID("id", &q.ID, q.Operation == "get"), checkID("projectId", &q.ProjectID, false),
		checkID("moleculeId", &q.MoleculeID, false)); e != nil {
		return e
	}
	if q.MoleculeID != "" && q.OrphansOnly {
		return Invalid("orphansOnly", "orphansOnly=true and moleculeId exclude each other: pass one of them")
	}
	if len(q.Query) > MaxQuery {
		return Invalid("query", "query is %d bytes; at most %d", len(q.Query), MaxQuery)
	}
	q.Query = strings.TrimSpace(q.Query)
	if e := checkPage(q.Limit, q.Offset); e != nil {
		return e
	}
	if e := checkRange("changelogLimit", q.ChangelogLimit, 0, MaxChangelogLimit); e != nil {
		return e
	}
	if q.Operation == "context" {
		return checkContextPaths(q.Paths)
	}
	return nil
}

func checkContextPaths(paths PathList) *Error {
	if len(paths) == 0 {
		return Invalid("paths", "paths is required for operation=context: comma-separated file paths, e.g. paths=src/a.ts,src/b.ts")
	}
	if len(paths) > MaxContextPaths {
		return Invalid("paths", "%d paths given; at most %d per call: split the list", len(paths), MaxContextPaths)
	}
	for _, p := range paths {
		if len(p) > MaxPathLen {
			return Invalid("paths", "path %.40q… is %d bytes; at most %d", p, len(p), MaxPathLen)
		}
	}
	return nil
}

// Validate checks manage_graph parameters per operation and entity type.
func (m *ManageGraph) Validate() *Error {
	if e := first(oneOf("operation", m.Operation, "create", "update", "delete"),
		oneOf("entityType", m.EntityType, EntityAtom, EntityMolecule), checkStore(m.Store)); e != nil {
		return e
	}
	op, et := "operation="+m.Operation, "entityType="+m.EntityType
	create, update, del := m.Operation == "create", m.Operation == "update", m.Operation == "delete"
	atom := m.EntityType == EntityAtom
	if e := first(
		notFor("id", m.ID != "", op, !create),
		notFor("version", m.Version != nil, op, !create),
		notFor("projectId", m.ProjectID != "", op+" (an entity's project cannot change)", create),
		notFor("name", m.Name != nil, op, !del),
		notFor("knowledge", m.Knowledge != nil, op, !del),
		notFor("knowledgeMode", m.KnowledgeMode != "", op, update),
		notFor("createdByTaskId", m.CreatedByTaskID != "", op, create),
		notFor("lastTaskId", m.LastTaskID != "", op, !create),
		notFor("cascade", m.Cascade, op+" "+et, del && !atom),
		notFor("paths", m.Paths != nil, op+" "+et, atom && !del),
		notFor("moleculeId", m.SetsMolecule(), op+" "+et, atom && !del),
		notFor("relatedAtoms", m.RelatedAtoms != nil, op+" "+et, atom && !del),
		notFor("relatedMolecules", m.RelatedMolecules != nil, op+" "+et, !atom && !del),
	); e != nil {
		return e
	}
	if e := first(checkID("id", &m.ID, !create), checkID("projectId", &m.ProjectID, false),
		checkTaskID("createdByTaskId", m.CreatedByTaskID), checkTaskID("lastTaskId", m.LastTaskID)); e != nil {
		return e
	}
	if m.MoleculeID != nil && *m.MoleculeID != "" {
		if e := checkID("moleculeId", m.MoleculeID, false); e != nil {
			return e
		}
	}
	if !create {
		if m.Version == nil {
			return Invalid("version", "version is required for %s: pass the version you read (query_graph operation=get)", op)
		}
		if *m.Version < 1 {
			return Invalid("version", "version must be 1 or more (versions start at 1), not %d", *m.Version)
		}
	}
	if del {
		return nil
	}
	return m.validateFields(create, atom)
}

func (m *ManageGraph) validateFields(create, atom bool) *Error {
	if create && m.Name == nil {
		return Invalid("name", "name is required for operation=create: 1-255 characters")
	}
	if e := first(checkName(m.Name), checkKnowledge(m.Knowledge)); e != nil {
		return e
	}
	if e := oneOf("knowledgeMode", m.KnowledgeMode, "", "overwrite", "append"); e != nil {
		return e
	}
	if m.KnowledgeMode == "append" && (m.Knowledge == nil || *m.Knowledge == "") {
		return Invalid("knowledge", "knowledgeMode=append needs knowledge: the text to append (non-empty after trimming)")
	}
	if create && atom && m.Paths == nil {
		return Invalid("paths", `paths is required to create an atom: a JSON array of glob patterns, e.g. ["src/pages/checkout/**"]`)
	}
	if e := ValidatePatterns(m.Paths); e != nil {
		return e
	}
	if e := checkRelatedAtoms(m.RelatedAtoms); e != nil {
		return e
	}
	if e := checkRelatedMolecules(m.RelatedMolecules); e != nil {
		return e
	}
	if !create && m.Name == nil && m.Knowledge == nil && m.Paths == nil && !m.SetsMolecule() &&
		m.RelatedAtoms == nil && m.RelatedMolecules == nil {
		return Invalid("", "nothing to update: pass at least one of name, knowledge, %s", map[bool]string{
			true: "paths, moleculeId, relatedAtoms", false: "relatedMolecules"}[atom])
	}
	return nil
}

// ValidatePatterns checks an atom's glob patterns (nil is "not given" and
// passes): at least one (INVARIANT_VIOLATION otherwise), at most 20 of at
// most 512 characters, each relative, without "..", valid glob syntax.
func ValidatePatterns(p Patterns) *Error {
	if p == nil {
		return nil
	}
	if len(p) == 0 {
		return Invariant("paths", "paths must not be empty: an atom without path patterns has no boundary; give at least one glob")
	}
	if len(p) > MaxPatterns {
		return Invalid("paths", "%d patterns given; at most %d per atom: use ** to cover directories", len(p), MaxPatterns)
	}
	for i, pat := range p {
		p[i] = strings.TrimSpace(pat)
		pat = p[i]
		switch {
		case pat == "":
			return Invalid("paths", "pattern %d is empty", i+1)
		case utf8.RuneCountInString(pat) > MaxPatternLen:
			return Invalid("paths", "pattern %d is %d characters; at most %d", i+1, utf8.RuneCountInString(pat), MaxPatternLen)
		case strings.HasPrefix(pat, "/") || strings.HasPrefix(pat, `\`) || (len(pat) > 1 && pat[1] == ':'):
			return Invalid("paths", "pattern %q is absolute: patterns are relative to the project root, e.g. %q", pat, strings.TrimLeft(pat, `/\`))
		case hasDotDot(pat):
			return Invalid("paths", "pattern %q contains a .. segment: patterns stay inside the project root", pat)
		case !doublestar.ValidatePattern(pat):
			return Invalid("paths", "pattern %q is not a valid glob (unclosed [ or {, or a trailing \\)", pat)
		}
	}
	return nil
}

func hasDotDot(pat string) bool {
	for _, seg := range strings.FieldsFunc(pat, func(r rune) bool { return r == '/' || r == '\\' }) {
		if seg == ".." {
			return true
		}
	}
	return false
}

func checkRelatedAtoms(r RelatedAtoms) *Error {
	if len(r) > MaxRelated {
		return Invalid("relatedAtoms", "%d entries; at most %d", len(r), MaxRelated)
	}
	for i := range r {
		r[i].Name = ""
		if e := checkRelated("relatedAtoms", i, &r[i].AtomID, "atomId", &r[i].Reason); e != nil {
			return e
		}
	}
	return nil
}

func checkRelatedMolecules(r RelatedMolecules) *Error {
	if len(r) > MaxRelated {
		return Invalid("relatedMolecules", "%d entries; at most %d", len(r), MaxRelated)
	}
	for i := range r {
		if e := checkRelated("relatedMolecules", i, &r[i].MoleculeID, "moleculeId", &r[i].Reason); e != nil {
			return e
		}
	}
	return nil
}

func checkRelated(field string, i int, id *string, idName string, reason *string) *Error {
	*id = strings.ToLower(strings.TrimSpace(*id))
	if !IsID(*id) {
		return Invalid(field, "%s entry %d: %s must be an entity id (a UUID), got %q", field, i+1, idName, *id)
	}
	*reason = strings.TrimSpace(*reason)
	if n := utf8.RuneCountInString(*reason); n > MaxReason {
		return Invalid(field, "%s entry %d: reason is %d characters; at most %d", field, i+1, n, MaxReason)
	}
	return nil
}
