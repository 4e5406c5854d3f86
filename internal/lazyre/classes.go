package lazyre

// Most patterns that are only matched are a word checked whole — an id,
// a name, a key: ^[A-Za-z0-9_.-]+$. Compiling one costs the CLI and a
// supervisor tens of microseconds at their start; such a pattern is
// matched here from a table of its ASCII bytes instead, with the same
// result as regexp (a byte of a non-ASCII rune, or of invalid UTF-8, is in
// no ASCII class).

// classes is a pattern of the form ^[H][B]*$, ^[H][B]+$, ^[B]*$ or
// ^[B]+$, where each class lists printable ASCII characters and ranges.
type classes struct {
	head    *byteSet // nil: no leading single class
	body    byteSet
	minBody int // 0 for *, 1 for +
}

type byteSet [4]uint64

func (b *byteSet) add(c byte)      { b[c>>6] |= 1 << (c & 63) }
func (b *byteSet) has(c byte) bool { return b[c>>6]&(1<<(c&63)) != 0 }
func (c *classes) match(s string) bool {
	if c.head != nil {
		if len(s) == 0 || !c.head.has(s[0]) {
			return false
		}
		s = s[1:]
	}
	if len(s) < c.minBody {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !c.body.has(s[i]) {
			return false
		}
	}
	return true
}

// parseClasses reads a pattern of the forms classes matches; nil for any
// other pattern (it goes to regexp).
func parseClasses(src string) *classes {
	if len(src) < 2 || src[0] != '^' || src[len(src)-1] != '$' {
		return nil
	}
	p := src[1 : len(src)-1]
	first, p, ok := parseClass(p)
	if !ok {
		return nil
	}
	if p == "*" || p == "+" {
		c := &classes{body: first}
		if p == "+" {
			c.minBody = 1
		}
		return c
	}
	body, p, ok := parseClass(p)
	if !ok || (p != "*" && p != "+") {
		return nil
	}
	c := &classes{head: &first, body: body}
	if p == "+" {
		c.minBody = 1
	}
	return c
}

// parseClass reads one bracketed class at the start of p: printable ASCII
// characters (punctuation may be escaped with a backslash) and ranges of
// them; a '-' is literal only first or last. No negation, no named or
// Perl classes.
func parseClass(p string) (set byteSet, rest string, ok bool) {
	if len(p) < 3 || p[0] != '[' || p[1] == '^' || p[1] == ']' {
		return set, "", false
	}
	i := 1
	atom := func() (byte, bool) {
		if i >= len(p) {
			return 0, false
		}
		c := p[i]
		if c == '\\' {
			if i+1 >= len(p) || !isPunct(p[i+1]) {
				return 0, false
			}
			i += 2
			return p[i-1], true
		}
		if c < 0x20 || c > 0x7e || c == '[' {
			return 0, false
		}
		i++
		return c, true
	}
	for start := true; ; start = false {
		if i >= len(p) {
			return set, "", false
		}
		if p[i] == ']' {
			break
		}
		if p[i] == '-' && !start && i+1 < len(p) && p[i+1] != ']' {
			return set, "", false // a '-' that is neither first, last nor a range's
		}
		lo, ok := atom()
		if !ok {
			return set, "", false
		}
		hi := lo
		if i+1 < len(p) && p[i] == '-' && p[i+1] != ']' {
			i++
			if hi, ok = atom(); !ok || hi < lo {
				return set, "", false
			}
		}
		for c := int(lo); c <= int(hi); c++ {
			set.add(byte(c))
		}
	}
	return set, p[i+1:], true
}

func isPunct(c byte) bool {
	return c > 0x20 && c < 0x7f && !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z')
}
