package vectorop

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/pi-actors/pi-actors/internal/termtext"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
)

// Text renders a vector graph result compactly for the CLI (see
// graphop.Text); ok is false for other values.
func Text(result any) (string, bool) {
	var b strings.Builder
	if !render(&b, result) {
		return "", false
	}
	return b.String(), true
}

func render(b *strings.Builder, result any) bool {
	switch r := result.(type) {
	case *SearchResult:
		fmt.Fprintf(b, "status=%s hits=%d%s%s\n", r.Status, len(r.Hits), domainFact(r.Domain), op.StoreFact(r.Store))
		textHits(b, r.Hits)
		textHints(b, r.AlsoExistsIn, r.Hint)
	case *SearchAllResult:
		fmt.Fprintf(b, "query=%q%s%s\n", op.Clip(r.Query, op.TextPreview), op.StoreFact(r.Store), nodesFact(r.Nodes))
		for _, d := range r.Results {
			fmt.Fprintf(b, "%s: status=%s hits=%d\n", d.Domain, d.Status, len(d.Hits))
			textHits(b, d.Hits)
		}
	case *SmartSearchResult:
		fmt.Fprintf(b, "status=%s hits=%d tokens=%d/%d rounds=%d confident=%t%s\n", r.Status, len(r.Hits), r.TokensUsed,
			r.TokenBudget, r.Rounds, r.Confident, op.StoreFact(r.Store))
		textHits(b, r.Hits)
		textHints(b, r.AlsoExistsIn, r.Hint)
	case *RecallResult:
		fmt.Fprintf(b, "status=%s hits=%d stores=%s%s\n", r.Status, len(r.Hits), strings.Join(r.Stores, ","), nodesFact(r.Nodes))
		textHits(b, r.Hits)
	case *IngestResult:
		fmt.Fprintf(b, "ingested=%s files=%d new=%d changed=%d unchanged=%d removed=%d skipped=%d nodes=%d superseded=%d atom_links=%d ms=%d%s\n",
			line(r.Path), r.Files, r.Indexed, r.Changed, r.Unchanged, r.Removed, r.Skipped, r.Nodes, r.Superseded, r.AtomLinks, r.DurationMS, op.StoreFact(r.Store))
	case *NodeAdded:
		textNode(b, &r.Node)
		textConflicts(b, r.Conflicts)
	case *NodeDetail:
		textDetail(b, r)
	case *TraverseResult:
		fmt.Fprintf(b, "start=%s nodes=%d truncated=%t%s\n", refText(&r.Start), len(r.Nodes), r.Truncated, op.StoreFact(r.Store))
		if r.Truncated {
			b.WriteString("(cut at the limit or fanOut: raise limit= (at most 500) or fanOut= (at most 100), or narrow with edgeTypes= or a smaller depth)\n")
		}
		op.List(b, r.Nodes, "… %d more (--json for all, or a smaller depth)\n", func(s Step) {
			fmt.Fprintf(b, "  %s%s %s %s\n", strings.Repeat("  ", s.Depth-1), arrow(s.Direction), s.Via, refText(&s.NodeRef))
		})
	case *op.Page[ConflictRecord]:
		op.TextPage(b, r, func(c ConflictRecord) string {
			return fmt.Sprintf("#%d %s resolved=%t %q: %s vs %s%s\n    %s", c.ID, c.Type, c.Resolved, c.Subject, c.NodeA, c.NodeB,
				op.StoreFact(c.Store), op.OneLine(orText(c.Resolution, c.Description)))
		})
	case *VectorStatus:
		textStatus(b, r)
	case *ConflictRecord:
		fmt.Fprintf(b, "conflict=%d type=%s resolved=%t%s\n  %s\n", r.ID, r.Type, r.Resolved, op.StoreFact(r.Store), op.OneLine(r.Resolution))
	default:
		return false
	}
	return true
}

// line is a stored value printed inside a line of text: a newline or
// other control character in it is escaped (termtext.Visible), so it
// cannot start a line of its own.
func line(s string) string { return termtext.Visible(s) }

func domainFact(d string) string {
	if d == "" {
		return ""
	}
	return " domain=" + d
}

func orText(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func textHints(b *strings.Builder, also []string, hint string) {
	if len(also) > 0 {
		fmt.Fprintf(b, "also exists in: %s\n", strings.Join(also, ", "))
	}
	if hint != "" {
		fmt.Fprintf(b, "hint: %s\n", hint)
	}
}

// textHits renders hits: one fact line (score, kind, name, where, trust,
// freshness, store) and one snippet line each, then warnings and
// conflicts.
func textHits(b *strings.Builder, hs []Hit) {
	op.List(b, hs, "  … %d more hits (--json for all)\n", func(h Hit) { textHit(b, &h) })
}

func textHit(b *strings.Builder, h *Hit) {
	where := ""
	if h.Path != "" {
		where = " " + line(h.Path)
		if h.LineStart > 0 {
			where += fmt.Sprintf(":%d-%d", h.LineStart, h.LineEnd)
		}
	}
	node := ""
	if h.Node != "" {
		node = " node=" + h.Node
	}
	fmt.Fprintf(b, "  %.2f %s/%s %q%s id=%s sim=%.2f trust=%d fresh=%.2f%s%s\n", h.Score, h.Domain, h.Type, op.Clip(h.Name, op.TextPreview),
		where, h.ID, h.Similarity, h.Trust, h.Freshness, op.StoreFact(h.Store), node)
	if s := op.OneLine(h.Snippet); s != "" {
		fmt.Fprintf(b, "    %s\n", s)
	}
	if len(h.Provenance) > 0 {
		p := h.Provenance[0]
		fmt.Fprintf(b, "    from %s %s at %s\n", p.Source, line(orText(p.Ref, p.TaskID)), p.At)
	}
	if h.Warning != "" {
		fmt.Fprintf(b, "    ! %s\n", h.Warning)
	}
	for _, c := range h.Conflicts {
		fmt.Fprintf(b, "    ! conflict #%d (%s) with %s %q\n", c.ID, c.Type, c.With, op.Clip(c.WithName, op.TextPreview))
	}
	if len(h.Atoms) > 0 {
		names := make([]string, len(h.Atoms))
		for j, a := range h.Atoms {
			names[j] = line(a.Name)
		}
		fmt.Fprintf(b, "    atoms: %s\n", op.Clip(strings.Join(names, ", "), op.TextPreview))
	}
}

// arrow shows an edge's direction: → out of the node, ← into it.
func arrow(direction string) string {
	if direction == "in" {
		return "←"
	}
	return "→"
}

func refText(r *NodeRef) string {
	s := fmt.Sprintf("%s/%s %q %s", r.Domain, r.Type, op.Clip(r.Name, op.TextPreview), r.ID)
	if r.SupersededBy != "" {
		s += " (superseded)"
	}
	return s
}

func textNode(b *strings.Builder, n *Node) {
	fmt.Fprintf(b, "node=%s domain=%s type=%s name=%q trust=%d verified=%t created=%s%s\n", n.ID, n.Domain, n.Type,
		n.Name, n.Trust, n.Verified, n.CreatedAt, op.StoreFact(n.Store))
	if n.Path != "" {
		fmt.Fprintf(b, "path: %s", line(n.Path))
		if n.LineStart > 0 {
			fmt.Fprintf(b, ":%d-%d", n.LineStart, n.LineEnd)
		}
		b.WriteString("\n")
	}
	if n.SupersededBy != "" {
		fmt.Fprintf(b, "superseded by: %s\n", n.SupersededBy)
	}
	if n.Embedder == "" {
		b.WriteString("vector: pending\n")
	}
	op.Block(b, n.Content, true)
}

func textConflicts(b *strings.Builder, cs []ConflictRef) {
	for _, c := range cs {
		fmt.Fprintf(b, "conflict #%d %s with %s %q: %s\n", c.ID, c.Type, c.With, op.Clip(c.WithName, op.TextPreview), op.OneLine(c.Description))
	}
}

func textDetail(b *strings.Builder, d *NodeDetail) {
	textNode(b, &d.Node)
	for _, p := range d.Provenance {
		fmt.Fprintf(b, "provenance: %s %s task=%s at=%s verified=%t\n", p.Source, line(p.Ref), orText(p.TaskID, "-"), p.At, p.Verified)
	}
	textConflicts(b, d.Conflicts)
	for _, a := range d.Atoms {
		fmt.Fprintf(b, "atom: %s %q\n", a.ID, a.Name)
	}
	fmt.Fprintf(b, "edges (%d of %d; traverse id=%s for more):\n", len(d.Edges), d.EdgesTotal, d.Node.ID)
	op.List(b, d.Edges, "  … %d more (--json)\n", func(e EdgeRef) {
		fmt.Fprintf(b, "  %s %s %s\n", arrow(e.Direction), e.Type, refText(&e.Node))
	})
	for _, x := range []struct {
		name string
		refs []NodeRef
	}{{"history", d.History}, {"code", d.Code}, {"academic", d.Academic}} {
		op.List(b, x.refs, x.name+": … %d more (--json)\n", func(r NodeRef) { fmt.Fprintf(b, "%s: %s\n", x.name, refText(&r)) })
		if slices.Contains(d.LinkedCut, x.name) {
			fmt.Fprintf(b, "%s: the first %d only; traverse id=%s limit=500 for more\n", x.name, len(x.refs), d.Node.ID)
		}
	}
}

// textStatus renders a store's vector status lines.
func textStatus(b *strings.Builder, v *VectorStatus) {
	fmt.Fprintf(b, "  vectors embedder=%s dim=%d nodes=%d edges=%d pending=%d conflicts=%d", v.Embedder, v.Dim, v.Nodes, v.Edges, v.Pending, v.Conflicts)
	if e := v.Embedding; e.Running || e.Error != "" {
		fmt.Fprintf(b, " embedding=%d/%d", e.Done, e.Total)
		if e.Error != "" {
			fmt.Fprintf(b, " error=%q", op.Clip(e.Error, op.TextPreview))
		}
	}
	b.WriteString("\n")
	for _, d := range v.Domains {
		fmt.Fprintf(b, "    %s nodes=%d vectors=%d index=%s filter_keys=%d filter_pending=%d\n", d.Domain, d.Nodes, d.Vectors, d.Index,
			d.FilterKeys, d.FilterPending)
	}
}

// nodesFact renders how each member answered a scope=cluster query:
// " nodes=a:ok,b:slow".
func nodesFact(nodes map[string]string) string {
	if len(nodes) == 0 {
		return ""
	}
	names := make([]string, 0, len(nodes))
	for n := range nodes {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		st := nodes[n]
		if st != "ok" {
			st = strings.SplitN(st, ":", 2)[0]
		}
		parts[i] = n + ":" + st
	}
	return " nodes=" + strings.Join(parts, ",")
}
