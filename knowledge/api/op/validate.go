package op

import (
	"strings"
	"unicode/utf8"
)

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

// CheckID lower-cases and checks an entity id; "" passes unless required.
func CheckID(field string, p *string, required bool) *Error {
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
func CheckTaskID(field, id string) *Error {
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

// CheckName trims a name (nil is "not given" and passes) and requires
// 1-255 characters.
func CheckName(p *string) *Error {
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

// CheckStore checks the store parameter: "", project or personal.
func CheckStore(s string) *Error {
	return OneOf("store", s, "", StoreProject, StorePersonal)
}

// CheckPage checks limit (1-100) and offset (≥ 0).
func CheckPage(limit, offset *int) *Error {
	return First(CheckRange("limit", limit, 1, MaxLimit), CheckRange("offset", offset, 0, 1<<31-1))
}

// CheckRange checks an optional integer lies in [lo, hi].
func CheckRange(field string, p *int, lo, hi int) *Error {
	if p != nil && (*p < lo || *p > hi) {
		return Invalid(field, "%s must be between %d and %d, not %d", field, lo, hi, *p)
	}
	return nil
}

// OneOf requires v to be one of allowed ("" among them makes it optional).
func OneOf(field, v string, allowed ...string) *Error {
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

// NotFor is an error when a parameter is present where it does not apply.
func NotFor(field string, present bool, where string, applies bool) *Error {
	if present && !applies {
		return Invalid(field, "%s does not apply to %s: leave it out", field, where)
	}
	return nil
}

// First returns the first non-nil error.
func First(errs ...*Error) *Error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
