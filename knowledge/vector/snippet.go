package vector

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"github.com/pi-actors/pi-actors/knowledge/store"
)

// snippetFor picks the snippetLen-character window of content that holds
// the most distinct query words (case-insensitive), starting at the
// beginning of its line; without any match it is the content's start.
func snippetFor(content, query string) string {
	lower := strings.ToLower(content)
	var words []string
	for _, w := range strings.FieldsFunc(strings.ToLower(query), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) >= 3 {
			words = append(words, w)
		}
	}
	best, bestN := 0, 0
	tried := 0
	for _, w := range words {
		for from := 0; tried < 64; tried++ {
			i := strings.Index(lower[from:], w)
			if i < 0 {
				break
			}
			pos := from + i
			if n := wordsIn(lower[pos:min(len(lower), pos+snippetLen)], words); n > bestN {
				best, bestN = pos, n
			}
			from = pos + len(w)
		}
	}
	if bestN == 0 || best < snippetLen/2 {
		return clipRunes(content, snippetLen)
	}
	start := strings.LastIndexByte(content[:best], '\n') + 1
	if best-start > snippetLen/3 {
		start = best - snippetLen/3
		for start < best && !isRuneStart(content[start]) {
			start++
		}
	}
	return "…" + clipRunes(content[start:], snippetLen)
}

func isRuneStart(b byte) bool { return b&0xc0 != 0x80 }

func wordsIn(s string, words []string) int {
	n := 0
	for _, w := range words {
		if strings.Contains(s, w) {
			n++
		}
	}
	return n
}

// snippets replaces the hits' snippets by query-focused ones.
func (s *Store) snippets(ctx context.Context, hs []scored, query string) error {
	if len(hs) == 0 || query == "" {
		return nil
	}
	ids := make([]string, len(hs))
	for i := range hs {
		ids[i] = hs[i].ID
	}
	in, args := store.In(ids)
	rows, err := s.r.QueryContext(ctx, `SELECT id, content FROM vg_nodes WHERE id IN `+in, args...)
	if err != nil {
		return fmt.Errorf("read hit contents: %w", err)
	}
	defer rows.Close()
	content := map[string]string{}
	for rows.Next() {
		var id, c string
		if err := rows.Scan(&id, &c); err != nil {
			return fmt.Errorf("read hit contents: %w", err)
		}
		content[id] = c
	}
	for i := range hs {
		if c, ok := content[hs[i].ID]; ok {
			hs[i].Snippet = snippetFor(c, query)
		}
	}
	return rows.Err()
}
