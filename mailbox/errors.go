package mailbox

import "errors"

// ErrInvalid marks invalid caller data: a bad address, envelope, wake or
// outbox record. Every *AddressError and *EnvelopeError matches it with
// errors.Is; the CLI maps it to "invalid data" (exit 65).
var ErrInvalid = errors.New("invalid message data")

// ErrMalformed marks a JSONL line that is not one JSON object (Line.Err
// wraps it). Such lines are reported and kept, never dropped.
var ErrMalformed = errors.New("malformed JSONL line")

// ErrNotFound is an inbox operation on an id no record has.
var ErrNotFound = errors.New("inbox record not found")

// ErrTransition is a status change the record's current status does not
// allow (for example Done on a record that was never claimed).
var ErrTransition = errors.New("illegal inbox status transition")

// AddressError is an actor address that does not parse. Msg names what is
// wrong and, where there is one, the form to use instead.
type AddressError struct {
	Input string // the address as given
	Msg   string
}

func (e *AddressError) Error() string { return e.Msg }

// Is makes errors.Is(err, ErrInvalid) true.
func (e *AddressError) Is(target error) bool { return target == ErrInvalid }

// EnvelopeError is a message envelope (or wake/outbox record) field that
// fails validation. Err, when set, is the underlying cause (an
// *AddressError for to/from).
type EnvelopeError struct {
	Field string // "to", "type", "metadata", …; "" for the whole message
	Msg   string
	Err   error
	// Bytes and Limit are set when the field is larger than a message
	// may carry (Envelope.CheckSize): its size and the limit, in bytes.
	Bytes, Limit int
}

func (e *EnvelopeError) Error() string { return e.Msg }

// Unwrap returns the cause.
func (e *EnvelopeError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrInvalid) true.
func (e *EnvelopeError) Is(target error) bool { return target == ErrInvalid }
