package mailbox

// Peek returns the value of a top-level string field of a line without
// decoding it, for scans that skip most lines (a claim looks for the
// first queued record among many finished ones). ok is false whenever
// the answer is not certain — the field is absent or not a string, a key
// or the value uses escapes or non-ASCII bytes, or the bytes are not a
// well-formed object as far as the scan goes — and the caller then
// decodes the line. When ok is true the value is what Decode would give
// (with a repeated key, the last one, as Decode keeps). Peek does not
// validate the whole line: a malformed line may still peek ok, so a
// caller acts on a line only after Decode.
func (l *Line) Peek(key string) (value string, ok bool) {
	raw := l.Raw
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return "", false
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return "", false
	}
	var found []byte
	for {
		if i >= len(raw) || raw[i] != '"' {
			return "", false
		}
		ks, ke, plain := scanString(raw, i)
		if ke < 0 || !plain {
			return "", false
		}
		i = skipSpace(raw, ke+1)
		if i >= len(raw) || raw[i] != ':' {
			return "", false
		}
		i = skipSpace(raw, i+1)
		if string(raw[ks:ke]) == key { // no allocation: the compiler compares in place
			if i >= len(raw) || raw[i] != '"' {
				return "", false // not a string
			}
			vs, ve, plain := scanString(raw, i)
			if ve < 0 || !plain {
				return "", false
			}
			found, i = raw[vs:ve], ve+1
		} else if i = skipValue(raw, i); i < 0 {
			return "", false
		}
		i = skipSpace(raw, i)
		if i >= len(raw) {
			return "", false
		}
		switch raw[i] {
		case ',':
			i = skipSpace(raw, i+1)
		case '}':
			if found == nil {
				return "", false
			}
			return string(found), true
		default:
			return "", false
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// scanString scans the JSON string starting at b[i] (a quote): its
// contents are b[start:end] and b[end] is the closing quote; end is -1
// when the string does not close. plain is false when the contents hold
// an escape, a control character or a non-ASCII byte.
func scanString(b []byte, i int) (start, end int, plain bool) {
	start, plain = i+1, true
	for j := start; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return start, j, plain
		case c == '\\':
			plain = false
			j++ // the escaped byte cannot close the string
		case c < 0x20 || c >= 0x80:
			plain = false
		}
	}
	return start, -1, false
}

// skipValue returns the index just past the JSON value starting at b[i],
// or -1 if the scan cannot tell where it ends. Nested objects and arrays
// are skipped by depth, strings by scanString; the value's well-formedness
// is not checked.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		_, end, _ := scanString(b, i)
		if end < 0 {
			return -1
		}
		return end + 1
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				_, end, _ := scanString(b, j)
				if end < 0 {
					return -1
				}
				j = end
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	// A number or a literal: up to the next delimiter.
	j := i
scan:
	for ; j < len(b); j++ {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			break scan
		}
	}
	if j == i {
		return -1
	}
	return j
}
