package template

import (
	"fmt"
	"strings"
)

// Split breaks a leaf template into words the way a POSIX shell splits
// words, before any placeholder is substituted. It never runs a shell:
//
//   - spaces, tabs and newlines separate words;
//   - '…' is literal, with no escapes inside;
//   - "…" groups; inside it a backslash escapes only \ " $ ` and newline
//     (as in sh), any other backslash is kept;
//   - outside quotes a backslash escapes the next character, so "\ " joins
//     a word, and backslash-newline is removed;
//   - a quote opens a word even when empty, so ” is an empty word;
//   - a trailing lone backslash is kept literally.
//
// An unterminated quote is an error.
func Split(s string) ([]string, error) {
	var (
		words  []string
		cur    strings.Builder
		inWord bool
		i      int
	)
	flush := func() {
		if inWord {
			words = append(words, cur.String())
			cur.Reset()
			inWord = false
		}
	}
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			flush()
			i++
		case c == '\'':
			inWord = true
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("unterminated single quote at byte %d", i)
			}
			cur.WriteString(s[i+1 : i+1+end])
			i += end + 2
		case c == '"':
			inWord = true
			start := i
			i++
			closed := false
			for i < len(s) {
				d := s[i]
				if d == '"' {
					closed = true
					i++
					break
				}
				if d == '\\' && i+1 < len(s) {
					switch s[i+1] {
					case '\\', '"', '$', '`':
						cur.WriteByte(s[i+1])
						i += 2
						continue
					case '\n':
						i += 2
						continue
					}
				}
				cur.WriteByte(d)
				i++
			}
			if !closed {
				return nil, fmt.Errorf("unterminated double quote at byte %d", start)
			}
		case c == '\\':
			if i+1 >= len(s) {
				inWord = true
				cur.WriteByte('\\')
				i++
				continue
			}
			if s[i+1] == '\n' {
				i += 2
				continue
			}
			inWord = true
			cur.WriteByte(s[i+1])
			i += 2
		default:
			inWord = true
			cur.WriteByte(c)
			i++
		}
	}
	flush()
	return words, nil
}
