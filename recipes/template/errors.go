package template

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// Error is invalid template data or values: it names where the problem is
// (a path into the graph such as template[2].timeout, or a placeholder) and
// what to do about it. Callers map it to "invalid data" (exit 65).
type Error struct {
	Path  string
	Msg   string
	Limit bool // a configured limit was exceeded (errors.Is(err, ErrLimit))
	// Missing is the value a missing placeholder needs (its name), for a
	// caller that takes values another way than name=value (spawn).
	Missing string
}

// Is makes errors.Is(err, ErrLimit) true for limit errors.
func (e *Error) Is(target error) bool { return target == ErrLimit && e.Limit }

func (e *Error) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

func errf(path, format string, args ...any) *Error {
	return &Error{Path: path, Msg: fmt.Sprintf(format, args...)}
}

// ErrLimit marks a plan that exceeds a configured limit (fan-out, leaves).
var ErrLimit = errors.New("limit exceeded")

// errMissing is an unresolvable placeholder. Recursive default resolution
// turns it into literal text; everywhere else it is reported.
type errMissing struct{ content string }

func (e *errMissing) Error() string {
	return fmt.Sprintf("missing value for placeholder {%s}", clip(e.content))
}

// clipBytes bounds the caller's input an error message quotes.
const clipBytes = 200

// clip is s as an error message quotes it: whole when short, else its
// first clipBytes (whole characters) and how much more there is — the
// caller has the rest, it is their own input.
func clip(s string) string {
	if len(s) <= clipBytes {
		return s
	}
	n := clipBytes
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return fmt.Sprintf("%s…[+%d bytes]", s[:n], len(s)-n)
}
