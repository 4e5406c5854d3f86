package api

import (
	"strings"
	"unicode/utf8"
)

// Validate checks manage_changelog parameters.
func (m *ManageChangelog) Validate() *Error {
	if e := first(oneOf("operation", m.Operation, "append", "search"),
		oneOf("parentType", m.ParentType, EntityAtom, EntityMolecule), checkStore(m.Store),
		checkID("parentId", &m.ParentID, true)); e != nil {
		return e
	}
	op := "operation=" + m.Operation
	appendOp := m.Operation == "append"
	if e := first(
		notFor("taskId", m.TaskID != "", op, appendOp),
		notFor("summary", m.Summary != "", op, appendOp),
		notFor("limit", m.Limit != nil, op, !appendOp),
		notFor("offset", m.Offset != nil, op, !appendOp),
		checkTaskID("taskId", m.TaskID),
		checkPage(m.Limit, m.Offset),
	); e != nil {
		return e
	}
	if !appendOp {
		return nil
	}
	m.Summary = strings.TrimSpace(m.Summary)
	if m.Summary == "" {
		return Invalid("summary", "summary is required for operation=append: what changed and why (non-empty)")
	}
	if len(m.Summary) > MaxSummary {
		return Invalid("summary", "summary is %d bytes; at most %d: keep the entry short and put details in the knowledge field", len(m.Summary), MaxSummary)
	}
	return nil
}

// Validate checks project_create parameters.
func (p *ProjectCreate) Validate() *Error {
	if p.Name == "" {
		return Invalid("name", "name is required: the project's name, 1-255 characters")
	}
	if e := first(checkName(&p.Name), checkStore(p.Store)); e != nil {
		return e
	}
	if strings.ContainsRune(p.Root, 0) {
		return Invalid("root", "root contains a NUL byte")
	}
	return nil
}

// Validate checks project_list parameters.
func (p *ProjectList) Validate() *Error {
	return first(checkPage(p.Limit, p.Offset), checkStore(p.Store))
}

// Validate checks history parameters.
func (h *History) Validate() *Error {
	return first(checkID("id", &h.ID, true), checkRange("version", h.Version, 1, 1<<31-1),
		checkPage(h.Limit, h.Offset), checkStore(h.Store))
}

// Validate checks verify parameters.
func (v *Verify) Validate() *Error { return checkStore(v.Store) }

// Validate checks status parameters.
func (s *Status) Validate() *Error { return checkStore(s.Store) }

// Validate checks init parameters.
func (i *Init) Validate() *Error {
	if i.Name == "" {
		return nil
	}
	return checkName(&i.Name)
}

// Validate checks task_context parameters.
func (t *TaskContext) Validate() *Error {
	if (t.File == "") == (t.Text == "") {
		return Invalid("file", "pass exactly one of file (a task markdown file) or text (the task's text)")
	}
	if len(t.Text) > MaxTaskText {
		return Invalid("text", "text is %d bytes; at most %d", len(t.Text), MaxTaskText)
	}
	return first(checkID("projectId", &t.ProjectID, false),
		checkRange("changelogLimit", t.ChangelogLimit, 0, MaxChangelogLimit), checkStore(t.Store))
}

// IsID reports whether s is an entity id: a UUID in canonical lower-case
// form (8-4-4-4-12 hex digits).
func IsID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				return false
			}
		}
	}
	return true
}

// checkID lower-cases and checks an entity id; "" passes unless required.
func checkID(field string, p *string, required bool) *Error {
	*p = strings.ToLower(strings.TrimSpace(*p))
	if *p == "" {
		if required {
			return Invalid(field, "%s is required: an entity id (a UUID)", field)
		}
		return nil
	}
	if !IsID(*p) {
		return Invalid(field, "%s must be an entity id (a UUID like 0b9e…-…), got %q", field, *p)
	}
	return nil
}

// CheckTaskID checks a task id: empty (not given) or 1-255 characters
// without control characters. Whether a run:<id> exists is the store's
// check.
func CheckTaskID(field, id string) *Error { return checkTaskID(field, id) }

func checkTaskID(field, id string) *Error {
	if id == "" {
		return nil
	}
	if n := utf8.RuneCountInString(id); n > MaxTaskID {
		return Invalid(field, "%s is %d characters; at most %d", field, n, MaxTaskID)
	}
	if strings.TrimSpace(id) != id || strings.ContainsFunc(id, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return Invalid(field, "%s %q has surrounding spaces or control characters", field, id)
	}
	if rest, ok := strings.CutPrefix(id, "run:"); ok && rest == "" {
		return Invalid(field, "%s run: needs a run id after the colon (run:<id>)", field)
	}
	return nil
}

func checkName(p *string) *Error {
	if p == nil {
		return nil
	}
	*p = strings.TrimSpace(*p)
	if *p == "" {
		return Invalid("name", "name must not be empty: 1-255 characters")
	}
	if n := utf8.RuneCountInString(*p); n > MaxName {
		return Invalid("name", "name is %d characters; at most %d", n, MaxName)
	}
	return nil
}

func checkKnowledge(p *string) *Error {
	if p == nil {
		return nil
	}
	*p = strings.TrimSpace(*p)
	if len(*p) > MaxKnowledge {
		return Invalid("knowledge", "knowledge is %d bytes after trimming; at most %d (32 KB): condense it or split the area into more atoms", len(*p), MaxKnowledge)
	}
	return nil
}

func checkStore(s string) *Error {
	return oneOf("store", s, "", StoreProject, StorePersonal)
}

func checkPage(limit, offset *int) *Error {
	return first(checkRange("limit", limit, 1, MaxLimit), checkRange("offset", offset, 0, 1<<31-1))
}

func checkRange(field string, p *int, lo, hi int) *Error {
	if p != nil && (*p < lo || *p > hi) {
		return Invalid(field, "%s must be between %d and %d, not %d", field, lo, hi, *p)
	}
	return nil
}

func oneOf(field, v string, allowed ...string) *Error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	shown := make([]string, 0, len(allowed))
	for _, a := range allowed {
		if a != "" {
			shown = append(shown, a)
		}
	}
	if v == "" {
		return Invalid(field, "%s is required: one of %s", field, strings.Join(shown, ", "))
	}
	return Invalid(field, "%s must be one of %s, not %q", field, strings.Join(shown, ", "), v)
}

// notFor is an error when a parameter is present where it does not apply.
func notFor(field string, present bool, where string, applies bool) *Error {
	if present && !applies {
		return Invalid(field, "%s does not apply to %s: leave it out", field, where)
	}
	return nil
}

func first(errs ...*Error) *Error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
