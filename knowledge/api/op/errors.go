package op

import (
	"errors"
	"fmt"
)

// Code is the machine-readable kind of an Error, as the spec names it.
type Code string

// The spec's error codes.
const (
	CodeValidation Code = "VALIDATION_ERROR"    // bad input
	CodeNotFound   Code = "NOT_FOUND"           // a referenced entity does not exist
	CodeConflict   Code = "CONFLICT"            // version mismatch
	CodeInvariant  Code = "INVARIANT_VIOLATION" // cross-project membership, empty paths
)

// Sentinels for errors.Is: an *Error matches the sentinel of its Code.
var (
	ErrValidation = &Error{Code: CodeValidation}
	ErrNotFound   = &Error{Code: CodeNotFound}
	ErrConflict   = &Error{Code: CodeConflict}
	ErrInvariant  = &Error{Code: CodeInvariant}
)

// Error is a domain error of a knowledge operation. Message names the field
// and the fix; Details carries machine-readable context: "field" for the
// parameter at fault and, for CONFLICT, "currentVersion".
type Error struct {
	Code    Code           `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Is matches the sentinel with the same Code (a sentinel has no message).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Code == e.Code
}

// Exit is the sysexits code for the error: 65 (data error) for
// VALIDATION_ERROR and INVARIANT_VIOLATION, 64 (usage) for a parameter
// the operation does not have, 66 (no input) for NOT_FOUND, 75
// (temporary failure: re-read and retry) for CONFLICT.
func (e *Error) Exit() int {
	switch {
	case e.Details["reason"] == ReasonUnknownParameter:
		return 64
	}
	switch e.Code {
	case CodeNotFound:
		return 66
	case CodeConflict:
		return 75
	default:
		return 65
	}
}

// ReasonUnknownParameter marks (Details["reason"]) a VALIDATION_ERROR
// for a parameter the operation does not have: a usage error, like an
// unknown parameter of any verb.
const ReasonUnknownParameter = "unknown_parameter"

// ReasonBusy marks (Details["reason"]) a CONFLICT with another process
// writing the same store at the same time (another kernel's ingest or
// capture): nothing of the failed transaction was written; running the
// operation again succeeds (an ingest skips what is done).
const ReasonBusy = "busy"

// BusyHint is the hint of a CONFLICT with ReasonBusy.
const BusyHint = "another process wrote this knowledge store at the same time: run the same command again (an ingest skips the files already done)"

// Busy is a CONFLICT with ReasonBusy: what names the store or item
// another process wrote meanwhile.
func Busy(field, format string, args ...any) *Error {
	e := withField(CodeConflict, field, format, args...)
	e.Message += ": another process wrote it at the same time; nothing of this transaction was written, run it again"
	e.Details["reason"] = ReasonBusy
	return e
}

// Invalid is a VALIDATION_ERROR about field.
func Invalid(field, format string, args ...any) *Error {
	return withField(CodeValidation, field, format, args...)
}

// Invariant is an INVARIANT_VIOLATION about field.
func Invariant(field, format string, args ...any) *Error {
	return withField(CodeInvariant, field, format, args...)
}

// NotFound is a NOT_FOUND for the entity kind ("atom", "molecule",
// "project", "run") with id, referenced by field.
func NotFound(field, kind, id string) *Error {
	e := withField(CodeNotFound, field, "%s %s not found (%s)", kind, id, field)
	e.Details["id"], e.Details["kind"] = id, kind
	return e
}

// Conflict is a CONFLICT: the caller's version is not the current one.
func Conflict(kind, id string, given, current int) *Error {
	return &Error{
		Code: CodeConflict,
		Message: fmt.Sprintf("%s %s is at version %d, not %d: read it again (query_graph operation=get) and retry with version=%d",
			kind, id, current, given, current),
		Details: map[string]any{"field": "version", "currentVersion": current},
	}
}

// AtIndex is e as the error of request i of a batch: the message says
// which request, details.index holds i (0-based).
func AtIndex(e *Error, i int) *Error {
	d := map[string]any{"index": i}
	for k, v := range e.Details {
		d[k] = v
	}
	return &Error{Code: e.Code, Message: fmt.Sprintf("request %d: %s", i, e.Message), Details: d}
}

// AsError returns err as an *Error when it is one (or wraps one).
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

func withField(code Code, field, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Details: map[string]any{"field": field}}
}
