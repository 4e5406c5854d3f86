package filter

import (
	"slices"
	"unicode"
	"unicode/utf8"
)

// MinToken is the shortest token, in runes, that becomes a key.
const MinToken = 2

// Key hashes one already normalised (lowercase) token: 64-bit FNV-1a.
func Key(token string) uint64 { return keyOf([]byte(token)) }

func keyOf(token []byte) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for _, c := range token {
		h ^= uint64(c)
		h *= prime
	}
	return h
}

// Tokens returns the distinct topic keys of text, in order of first
// appearance (see the package doc for the rules).
func Tokens(text string) []uint64 {
	var keys []uint64
	var seen map[uint64]struct{} // once keys outgrows a linear scan
	add := func(tok []byte) {
		if utf8.RuneCount(tok) < MinToken {
			return
		}
		k := keyOf(tok)
		switch {
		case seen != nil:
			if _, ok := seen[k]; ok {
				return
			}
			seen[k] = struct{}{}
		case slices.Contains(keys, k):
			return
		case len(keys) == 32:
			seen = make(map[uint64]struct{}, 64)
			for _, o := range keys {
				seen[o] = struct{}{}
			}
			seen[k] = struct{}{}
		}
		keys = append(keys, k)
	}
	var word, part []byte // the whole token, and its current component
	var prev rune
	split := false
	for i, w := 0, 0; i <= len(text); i += w {
		r, letter := utf8.RuneError, false
		w = 1
		if i < len(text) {
			if c := text[i]; c < utf8.RuneSelf {
				r = rune(c)
				letter = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
			} else {
				r, w = utf8.DecodeRuneInString(text[i:])
				letter = unicode.IsLetter(r) || unicode.IsDigit(r)
			}
		}
		if letter {
			if len(part) > 0 && boundary(prev, r) {
				add(part)
				part, split = part[:0], true
			}
			if r < utf8.RuneSelf {
				c := byte(r)
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				word, part = append(word, c), append(part, c)
			} else {
				lr := unicode.ToLower(r)
				word, part = utf8.AppendRune(word, lr), utf8.AppendRune(part, lr)
			}
			prev = r
			continue
		}
		if len(word) > 0 {
			if split {
				add(part)
			}
			add(word)
			word, part, split = word[:0], part[:0], false
		}
	}
	return keys
}

// boundary reports whether an identifier splits between prev and r: a
// lower-to-upper case change or a switch between letters and digits.
func boundary(prev, r rune) bool {
	switch {
	case unicode.IsLower(prev) && unicode.IsUpper(r):
		return true
	case unicode.IsDigit(prev) != unicode.IsDigit(r):
		return true
	}
	return false
}
