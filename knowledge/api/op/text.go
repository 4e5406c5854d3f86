package op

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Bounds of the text rendering.
const (
	TextItems   = 20  // list entries shown
	TextPreview = 160 // characters of knowledge/summary per entry
	TextFull    = 2000
)

// List renders at most TextItems items (line renders one); when there
// are more it writes more, a format whose %d is how many were left out.
func List[T any](b *strings.Builder, items []T, more string, line func(T)) {
	for i, it := range items {
		if i == TextItems {
			fmt.Fprintf(b, more, len(items)-i)
			return
		}
		line(it)
	}
}

// TextPage renders a page: a fact line (total, limit, offset, shown), at
// most TextItems entries (line renders one), and where the next page is.
func TextPage[T any](b *strings.Builder, p *Page[T], line func(T) string) {
	fmt.Fprintf(b, "total=%d limit=%d offset=%d shown=%d\n", p.Total, p.Limit, p.Offset, min(len(p.Items), TextItems))
	List(b, p.Items, "… %d more on this page (--json for all)\n", func(it T) { fmt.Fprintf(b, "  %s\n", line(it)) })
	if next := p.Offset + len(p.Items); next < p.Total {
		fmt.Fprintf(b, "next page: offset=%d\n", next)
	}
}

// Block renders a long text as "knowledge:" and the text indented,
// clipped to TextPreview characters (TextFull when full) with a note
// where the whole text is.
func Block(b *strings.Builder, k string, full bool) {
	if k == "" {
		b.WriteString("knowledge: (empty)\n")
		return
	}
	limit := TextPreview
	if full {
		limit = TextFull
	}
	b.WriteString("knowledge:\n")
	b.WriteString(Indent(Clip(k, limit)))
	if utf8.RuneCountInString(k) > limit {
		fmt.Fprintf(b, "\n  … %d bytes in all (--json for the whole text)", len(k))
	}
	b.WriteString("\n")
}

// StoreFact is " store=<s>", or "" for an untagged item.
func StoreFact(s string) string {
	if s == "" {
		return ""
	}
	return " store=" + s
}

// OrDash is s, or "-" when it is empty.
func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Clip shortens s to n characters, marking the cut with "…".
func Clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

// OneLine is s with its whitespace runs collapsed, clipped to TextPreview.
func OneLine(s string) string {
	return Clip(strings.Join(strings.Fields(s), " "), TextPreview)
}

// Indent indents every line of s by two spaces.
func Indent(s string) string {
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}
