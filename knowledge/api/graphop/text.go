package graphop

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pi-actors/pi-actors/internal/termtext"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
)

// Text renders a knowledge graph result compactly for the CLI: a first
// line of key=value facts, then a bounded detail that says where the rest
// is (--json, or a narrower query). ok is false for other values.
func Text(result any) (text string, ok bool) {
	var b strings.Builder
	switch r := result.(type) {
	case *Atom:
		textAtom(&b, r, true)
	case *Molecule:
		textMolecule(&b, r)
	case *ChangelogEntry:
		fmt.Fprintf(&b, "changelog=%s parent=%s:%s task=%s created=%s%s\n  %s\n", r.ID, r.ParentType, r.ParentID, r.TaskID, r.CreatedAt, op.StoreFact(r.Store), op.Clip(r.Summary, op.TextFull))
	case *op.Page[Atom]:
		op.TextPage(&b, r, func(a Atom) string {
			return fmt.Sprintf("%s %q v%d molecule=%s paths=%s%s\n    %s", a.ID, a.Name, a.Version, orNone(a.MoleculeID), line(strings.Join(a.Paths, ",")), op.StoreFact(a.Store), op.OneLine(a.Knowledge))
		})
	case *op.Page[Molecule]:
		op.TextPage(&b, r, func(m Molecule) string {
			return fmt.Sprintf("%s %q v%d%s\n    %s", m.ID, m.Name, m.Version, op.StoreFact(m.Store), op.OneLine(m.Knowledge))
		})
	case *op.Page[ChangelogEntry]:
		op.TextPage(&b, r, func(c ChangelogEntry) string {
			return fmt.Sprintf("%s task=%s%s  %s", c.CreatedAt, c.TaskID, op.StoreFact(c.Store), op.OneLine(c.Summary))
		})
	case *op.Page[Project]:
		op.TextPage(&b, r, func(p Project) string {
			return fmt.Sprintf("%s %q root=%s created=%s%s", p.ID, p.Name, line(p.Root), p.CreatedAt, op.StoreFact(p.Store))
		})
	case *Context:
		textContext(&b, r)
	case *TaskContextResult:
		b.WriteString("graphContext: ")
		textContext(&b, &r.GraphContext)
	case *Deleted:
		fmt.Fprintf(&b, "deleted=%s id=%s version=%d orphaned_atoms=%d deleted_atoms=%d unrelated=%d deleted_changelog=%d%s\n",
			r.EntityType, r.ID, r.Version, len(r.OrphanedAtoms), len(r.DeletedAtoms), len(r.Unrelated), r.DeletedChangelog, op.StoreFact(r.Store))
	case *Project:
		fmt.Fprintf(&b, "project=%s name=%q root=%s created=%s%s\n", r.ID, r.Name, line(r.Root), r.CreatedAt, op.StoreFact(r.Store))
	case *HistoryResult:
		textHistory(&b, r)
	case *VerifyResult:
		textVerify(&b, r)
	case *GraphHints:
		fmt.Fprintf(&b, "graphHints: %s\n", r.Message)
		for _, a := range r.SuggestedActions {
			fmt.Fprintf(&b, "  - %s\n", a)
		}
	default:
		return "", false
	}
	return b.String(), true
}

// line is a stored value printed inside a line of text: a newline or
// other control character in it is escaped (termtext.Visible), so it
// cannot start a line of its own.
func line(s string) string { return termtext.Visible(s) }

func textAtom(b *strings.Builder, a *Atom, full bool) {
	fmt.Fprintf(b, "atom=%s name=%q version=%d project=%s molecule=%s last_task=%s updated=%s%s\n",
		a.ID, a.Name, a.Version, a.ProjectID, orNone(a.MoleculeID), a.LastTaskID, a.UpdatedAt, op.StoreFact(a.Store))
	fmt.Fprintf(b, "paths: %s\n", line(strings.Join(a.Paths, ", ")))
	for _, r := range a.RelatedAtoms {
		fmt.Fprintf(b, "related: %s %s\n", r.AtomID, line(r.Reason))
	}
	op.Block(b, a.Knowledge, full)
	changelog(b, a.Changelog, "atom", a.ID)
}

func textMolecule(b *strings.Builder, m *Molecule) {
	fmt.Fprintf(b, "molecule=%s name=%q version=%d project=%s atoms=%d last_task=%s updated=%s%s\n",
		m.ID, m.Name, m.Version, m.ProjectID, len(m.Atoms), m.LastTaskID, m.UpdatedAt, op.StoreFact(m.Store))
	for _, r := range m.RelatedMolecules {
		fmt.Fprintf(b, "related: %s %s\n", r.MoleculeID, line(r.Reason))
	}
	op.Block(b, m.Knowledge, true)
	op.List(b, m.Atoms, "… %d more atoms (--json for all)\n", func(a Atom) {
		fmt.Fprintf(b, "atom %s %q v%d paths=%s\n", a.ID, a.Name, a.Version, line(strings.Join(a.Paths, ",")))
	})
	changelog(b, m.Changelog, "molecule", m.ID)
}

func changelog(b *strings.Builder, entries []ChangelogEntry, kind, id string) {
	if entries == nil {
		return
	}
	fmt.Fprintf(b, "changelog (newest first, %d shown; all: manage_changelog operation=search parentType=%s parentId=%s):\n", len(entries), kind, id)
	for _, c := range entries {
		fmt.Fprintf(b, "  %s task=%s  %s\n", c.CreatedAt, c.TaskID, op.OneLine(c.Summary))
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
		fmt.Fprintf(b, "molecule %s %q%s\n%s\n", m.ID, m.Name, op.StoreFact(m.Store), op.Indent(op.OneLine(m.Knowledge)))
		for _, a := range m.Atoms {
			if shown++; shown > op.TextItems {
				break
			}
			contextAtom(b, &a, "  ")
		}
	}
	for _, a := range c.OrphanAtoms {
		if shown++; shown > op.TextItems {
			break
		}
		b.WriteString("orphan ")
		contextAtom(b, &a, "")
	}
	if shown > op.TextItems {
		fmt.Fprintf(b, "… %d atoms in all; --json for every atom\n", n+len(c.OrphanAtoms))
	}
	if len(c.UnmatchedPaths) > 0 {
		all := line(strings.Join(c.UnmatchedPaths, ", "))
		line := op.Clip(all, op.TextFull)
		if line != all {
			line += fmt.Sprintf(" (%d paths in all; --json lists every one)", len(c.UnmatchedPaths))
		}
		fmt.Fprintf(b, "unmatched: %s\n", line)
	}
}

func contextAtom(b *strings.Builder, a *ContextAtom, pad string) {
	fmt.Fprintf(b, "%satom %s %q matched=%s%s\n%s  %s\n", pad, a.ID, a.Name, op.Clip(line(strings.Join(a.MatchedPaths, ",")), op.TextPreview), op.StoreFact(a.Store), pad, op.OneLine(a.Knowledge))
	for _, r := range a.RelatedAtoms {
		fmt.Fprintf(b, "%s  related %s %q: %s\n", pad, r.AtomID, r.Name, line(r.Reason))
	}
	for _, c := range a.Changelog {
		fmt.Fprintf(b, "%s  %s task=%s %s\n", pad, c.CreatedAt, c.TaskID, op.OneLine(c.Summary))
	}
}

func textHistory(b *strings.Builder, h *HistoryResult) {
	fmt.Fprintf(b, "history=%s id=%s version=%d deleted=%t total=%d limit=%d offset=%d%s\n", h.EntityType, h.ID, h.Version, h.Deleted, h.Total, h.Limit, h.Offset, op.StoreFact(h.Store))
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
		fmt.Fprintf(b, "  %s ok=%t entities=%d deltas=%d breaks=%d path=%s\n", op.OrDash(s.Store), s.OK, s.Entities, s.Deltas, len(s.Breaks), s.Path)
		op.List(b, s.Breaks, "    … %d more breaks (--json for all)\n", func(br Break) {
			fmt.Fprintf(b, "    %s %s v%d: %s\n", br.EntityType, br.EntityID, br.Version, br.Reason)
		})
	}
}

func orNone(p *string) string {
	if p == nil {
		return "none"
	}
	return *p
}
