package api

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Bounds of the text rendering.
const (
	textItems   = 20  // list entries shown
	textPreview = 160 // characters of knowledge/summary per entry
	textFull    = 2000
)

// Text renders a result compactly for the CLI: a first line of key=value
// facts, then a bounded detail that says where the rest is (--json, or a
// narrower query). Unknown values render as their Go form.
func Text(result any) string {
	var b strings.Builder
	switch r := result.(type) {
	case *Atom:
		textAtom(&b, r, true)
	case *Molecule:
		textMolecule(&b, r)
	case *ChangelogEntry:
		fmt.Fprintf(&b, "changelog=%s parent=%s:%s task=%s created=%s%s\n  %s\n", r.ID, r.ParentType, r.ParentID, r.TaskID, r.CreatedAt, storeFact(r.Store), clip(r.Summary, textFull))
	case *Page[Atom]:
		textPage(&b, r, func(a Atom) string {
			return fmt.Sprintf("%s %q v%d molecule=%s paths=%s%s\n    %s", a.ID, a.Name, a.Version, orNone(a.MoleculeID), strings.Join(a.Paths, ","), storeFact(a.Store), oneLine(a.Knowledge))
		})
	case *Page[Molecule]:
		textPage(&b, r, func(m Molecule) string {
			return fmt.Sprintf("%s %q v%d%s\n    %s", m.ID, m.Name, m.Version, storeFact(m.Store), oneLine(m.Knowledge))
		})
	case *Page[ChangelogEntry]:
		textPage(&b, r, func(c ChangelogEntry) string {
			return fmt.Sprintf("%s task=%s%s  %s", c.CreatedAt, c.TaskID, storeFact(c.Store), oneLine(c.Summary))
		})
	case *Page[Project]:
		textPage(&b, r, func(p Project) string {
			return fmt.Sprintf("%s %q root=%s created=%s%s", p.ID, p.Name, p.Root, p.CreatedAt, storeFact(p.Store))
		})
	case *Context:
		textContext(&b, r)
	case *TaskContextResult:
		b.WriteString("graphContext: ")
		textContext(&b, &r.GraphContext)
	case *Deleted:
		fmt.Fprintf(&b, "deleted=%s id=%s version=%d orphaned_atoms=%d deleted_atoms=%d deleted_changelog=%d%s\n",
			r.EntityType, r.ID, r.Version, len(r.OrphanedAtoms), len(r.DeletedAtoms), r.DeletedChangelog, storeFact(r.Store))
	case *Project:
		fmt.Fprintf(&b, "project=%s name=%q root=%s created=%s%s\n", r.ID, r.Name, r.Root, r.CreatedAt, storeFact(r.Store))
	case *HistoryResult:
		textHistory(&b, r)
	case *VerifyResult:
		textVerify(&b, r)
	case *InitResult:
		fmt.Fprintf(&b, "path=%s created=%t project=%s name=%q root=%s\n", r.Path, r.Created, r.Project.ID, r.Project.Name, r.Project.Root)
	case *StatusResult:
		textStatus(&b, r)
	case *GraphHints:
		fmt.Fprintf(&b, "graphHints: %s\n", r.Message)
		for _, a := range r.SuggestedActions {
			fmt.Fprintf(&b, "  - %s\n", a)
		}
	case *Error:
		fmt.Fprintf(&b, "error=%s %s\n", r.Code, r.Message)
	default:
		if !textVector(&b, r) {
			fmt.Fprintf(&b, "%v\n", r)
		}
	}
	return b.String()
}

func textAtom(b *strings.Builder, a *Atom, full bool) {
	fmt.Fprintf(b, "atom=%s name=%q version=%d project=%s molecule=%s last_task=%s updated=%s%s\n",
		a.ID, a.Name, a.Version, a.ProjectID, orNone(a.MoleculeID), a.LastTaskID, a.UpdatedAt, storeFact(a.Store))
	fmt.Fprintf(b, "paths: %s\n", strings.Join(a.Paths, ", "))
	for _, r := range a.RelatedAtoms {
		fmt.Fprintf(b, "related: %s %s\n", r.AtomID, r.Reason)
	}
	knowledge(b, a.Knowledge, full)
	changelog(b, a.Changelog, "atom", a.ID)
}

func textMolecule(b *strings.Builder, m *Molecule) {
	fmt.Fprintf(b, "molecule=%s name=%q version=%d project=%s atoms=%d last_task=%s updated=%s%s\n",
		m.ID, m.Name, m.Version, m.ProjectID, len(m.Atoms), m.LastTaskID, m.UpdatedAt, storeFact(m.Store))
	for _, r := range m.RelatedMolecules {
		fmt.Fprintf(b, "related: %s %s\n", r.MoleculeID, r.Reason)
	}
	knowledge(b, m.Knowledge, true)
	for i, a := range m.Atoms {
		if i == textItems {
			fmt.Fprintf(b, "… %d more atoms (--json for all)\n", len(m.Atoms)-i)
			break
		}
		fmt.Fprintf(b, "atom %s %q v%d paths=%s\n", a.ID, a.Name, a.Version, strings.Join(a.Paths, ","))
	}
	changelog(b, m.Changelog, "molecule", m.ID)
}

func knowledge(b *strings.Builder, k string, full bool) {
	if k == "" {
		b.WriteString("knowledge: (empty)\n")
		return
	}
	limit := textPreview
	if full {
		limit = textFull
	}
	b.WriteString("knowledge:\n")
	b.WriteString(indent(clip(k, limit)))
	if utf8.RuneCountInString(k) > limit {
		fmt.Fprintf(b, "\n  … %d bytes in all (--json for the whole text)", len(k))
	}
	b.WriteString("\n")
}

func changelog(b *strings.Builder, entries []ChangelogEntry, kind, id string) {
	if entries == nil {
		return
	}
	fmt.Fprintf(b, "changelog (newest first, %d shown; all: manage_changelog operation=search parentType=%s parentId=%s):\n", len(entries), kind, id)
	for _, c := range entries {
		fmt.Fprintf(b, "  %s task=%s  %s\n", c.CreatedAt, c.TaskID, oneLine(c.Summary))
	}
}

func textPage[T any](b *strings.Builder, p *Page[T], line func(T) string) {
	fmt.Fprintf(b, "total=%d limit=%d offset=%d shown=%d\n", p.Total, p.Limit, p.Offset, min(len(p.Items), textItems))
	for i, it := range p.Items {
		if i == textItems {
			fmt.Fprintf(b, "… %d more on this page (--json for all)\n", len(p.Items)-i)
			break
		}
		fmt.Fprintf(b, "  %s\n", line(it))
	}
	if next := p.Offset + len(p.Items); next < p.Total {
		fmt.Fprintf(b, "next page: offset=%d\n", next)
	}
}

func textContext(b *strings.Builder, c *Context) {
	n := 0
	for _, m := range c.Molecules {
		n += len(m.Atoms)
	}
	fmt.Fprintf(b, "molecules=%d atoms=%d orphan_atoms=%d unmatched_paths=%d\n", len(c.Molecules), n, len(c.OrphanAtoms), len(c.UnmatchedPaths))
	shown := 0
	for _, m := range c.Molecules {
		fmt.Fprintf(b, "molecule %s %q%s\n%s\n", m.ID, m.Name, storeFact(m.Store), indent(oneLine(m.Knowledge)))
		for _, a := range m.Atoms {
			if shown++; shown > textItems {
				break
			}
			contextAtom(b, &a, "  ")
		}
	}
	for _, a := range c.OrphanAtoms {
		if shown++; shown > textItems {
			break
		}
		b.WriteString("orphan ")
		contextAtom(b, &a, "")
	}
	if shown > textItems {
		fmt.Fprintf(b, "… %d atoms in all; --json for every atom\n", n+len(c.OrphanAtoms))
	}
	if len(c.UnmatchedPaths) > 0 {
		fmt.Fprintf(b, "unmatched: %s\n", clip(strings.Join(c.UnmatchedPaths, ", "), textFull))
	}
}

func contextAtom(b *strings.Builder, a *ContextAtom, pad string) {
	fmt.Fprintf(b, "%satom %s %q matched=%s%s\n%s  %s\n", pad, a.ID, a.Name, clip(strings.Join(a.MatchedPaths, ","), textPreview), storeFact(a.Store), pad, oneLine(a.Knowledge))
	for _, r := range a.RelatedAtoms {
		fmt.Fprintf(b, "%s  related %s %q: %s\n", pad, r.AtomID, r.Name, r.Reason)
	}
	for _, c := range a.Changelog {
		fmt.Fprintf(b, "%s  %s task=%s %s\n", pad, c.CreatedAt, c.TaskID, oneLine(c.Summary))
	}
}

func textHistory(b *strings.Builder, h *HistoryResult) {
	fmt.Fprintf(b, "history=%s id=%s version=%d deleted=%t total=%d limit=%d offset=%d%s\n", h.EntityType, h.ID, h.Version, h.Deleted, h.Total, h.Limit, h.Offset, storeFact(h.Store))
	for _, d := range h.Items {
		fields := make([]string, 0, len(d.Changes))
		for k := range d.Changes {
			fields = append(fields, k)
		}
		slices.Sort(fields)
		fmt.Fprintf(b, "  v%d %s %s task=%s hash=%.12s changed=%s\n", d.Version, d.Op, d.CreatedAt, d.TaskID, d.Hash, strings.Join(fields, ","))
	}
	if next := h.Offset + len(h.Items); next < h.Total {
		fmt.Fprintf(b, "next page: offset=%d\n", next)
	}
	switch s := h.State.(type) {
	case *Atom:
		b.WriteString("state: ")
		textAtom(b, s, false)
	case *Molecule:
		b.WriteString("state: ")
		textMolecule(b, s)
	}
}

func textVerify(b *strings.Builder, v *VerifyResult) {
	fmt.Fprintf(b, "ok=%t stores=%d\n", v.OK, len(v.Stores))
	for _, s := range v.Stores {
		fmt.Fprintf(b, "  %s ok=%t entities=%d deltas=%d breaks=%d path=%s\n", orDash(s.Store), s.OK, s.Entities, s.Deltas, len(s.Breaks), s.Path)
		for i, br := range s.Breaks {
			if i == textItems {
				fmt.Fprintf(b, "    … %d more breaks (--json for all)\n", len(s.Breaks)-i)
				break
			}
			fmt.Fprintf(b, "    %s %s v%d: %s\n", br.EntityType, br.EntityID, br.Version, br.Reason)
		}
	}
}

func textStatus(b *strings.Builder, s *StatusResult) {
	fmt.Fprintf(b, "stores=%d\n", len(s.Stores))
	for _, st := range s.Stores {
		c := st.Counts
		fmt.Fprintf(b, "%s path=%s schema=%d size=%d projects=%d molecules=%d atoms=%d changelog=%d deltas=%d\n",
			orDash(st.Store), st.Path, st.SchemaVersion, st.SizeBytes, c.Projects, c.Molecules, c.Atoms, c.Changelog, c.Deltas)
		for i, p := range st.Projects {
			if i == textItems {
				fmt.Fprintf(b, "  … %d more (project_list)\n", c.Projects-i)
				break
			}
			fmt.Fprintf(b, "  project %s %q root=%s\n", p.ID, p.Name, p.Root)
		}
		textVectorStatus(b, st.Vectors)
	}
}

func storeFact(s string) string {
	if s == "" {
		return ""
	}
	return " store=" + s
}

func orNone(p *string) string {
	if p == nil {
		return "none"
	}
	return *p
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// clip shortens s to n characters, marking the cut with "…".
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

func oneLine(s string) string {
	return clip(strings.Join(strings.Fields(s), " "), textPreview)
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}
