package main

import (
	"errors"
	"fmt"

	"github.com/pi-actors/pi-actors/actors/wire"
	"github.com/pi-actors/pi-actors/internal/config"
	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/recipes"
	"github.com/pi-actors/pi-actors/recipes/template"
	"github.com/pi-actors/pi-actors/runs"
)

// Exit codes (sysexits for pi-actors' own errors; exec/call pass the
// command's own status through).
const (
	exitOK          = 0
	exitUsage       = 64
	exitDataErr     = 65
	exitNoInput     = 66
	exitUnavailable = 69
	exitSoftware    = 70
	exitCantCreate  = 73
	exitTempFail    = 75
	exitNoPerm      = 77
)

// cliError is an error with its exit code and machine code decided.
type cliError struct {
	exit    int
	code    string
	msg     string
	hint    string
	details any
}

func (e *cliError) Error() string { return e.msg }

func usagef(format string, args ...any) *cliError {
	return &cliError{exit: exitUsage, code: "usage", msg: fmt.Sprintf(format, args...), hint: "pi-actors help"}
}

func invalidf(format string, args ...any) *cliError {
	return &cliError{exit: exitDataErr, code: "invalid_data", msg: fmt.Sprintf(format, args...),
		hint: "strings are key=value; JSON values are key:=JSON (quote the word for your shell)"}
}

// classify decides the exit code and error code of any error, in one place.
func classify(err error) *cliError {
	var ce *cliError
	if errors.As(err, &ce) {
		return ce
	}
	var re *recipes.RegisterError
	if errors.As(err, &re) {
		return registerError(re)
	}
	var we *wire.Error
	if errors.As(err, &we) {
		return wireFail(we)
	}
	if errors.Is(err, wire.ErrUnavailable) {
		return &cliError{exit: exitUnavailable, code: "kernel_unavailable", msg: err.Error(), hint: "pi-actors kernel status; the kernel log is <agent>/tmp/pi-actors/kernel.log"}
	}
	var me *mailbox.AddressError
	var ee *mailbox.EnvelopeError
	switch {
	case errors.As(err, &me), errors.As(err, &ee):
		return &cliError{exit: exitDataErr, code: "invalid_envelope", msg: err.Error(), hint: "message needs to=<address> type=<channel.action>; addresses: run:<id>, coordinator, session:<id>"}
	case errors.As(err, new(*runs.OwnerError)):
		var oe *runs.OwnerError
		errors.As(err, &oe)
		return &cliError{exit: exitNoPerm, code: "session_mismatch", msg: err.Error(), hint: "inspect target=session:" + oe.Owner + " view=status",
			details: map[string]any{"reason": "session_mismatch", "owner_session": oe.Owner, "current_session": oe.Current}}
	case errors.Is(err, runs.ErrInvalidID):
		return &cliError{exit: exitDataErr, code: "invalid_run_id", msg: err.Error()}
	case errors.Is(err, runs.ErrNotFound):
		return &cliError{exit: exitNoInput, code: "not_found", msg: err.Error(), hint: "inspect target=session:all view=runs"}
	}
	var te *template.Error
	var ae *recipes.ArgError
	var le *recipes.LaunchError
	switch {
	case errors.As(err, &ae):
		return &cliError{exit: exitDataErr, code: "invalid_arguments", msg: err.Error()}
	case errors.As(err, &le):
		return &cliError{exit: exitDataErr, code: "recipe_" + le.Reason, msg: err.Error(), hint: "inspect target=recipes view=doctor",
			details: map[string]any{"reason": le.Reason, "active_path": le.ActivePath, "blocked_fallback": le.BlockedFallback}}
	case errors.Is(err, recipes.ErrNotFound):
		return &cliError{exit: exitNoInput, code: "not_found", msg: err.Error(), hint: "inspect target=recipes view=summary"}
	case errors.Is(err, recipes.ErrDisabled):
		return &cliError{exit: exitDataErr, code: "recipe_disabled", msg: err.Error()}
	case errors.Is(err, recipes.ErrInvalid):
		return &cliError{exit: exitDataErr, code: "invalid_recipe", msg: err.Error(), hint: "inspect target=recipes view=doctor"}
	case errors.As(err, &te):
		code := "invalid_template"
		if errors.Is(err, template.ErrLimit) {
			code = "limit_exceeded"
		}
		hint := "pi-actors exec --dry-run shows how a template resolves; see docs/command-templates.md"
		if code == "limit_exceeded" {
			hint = "raise the limit named above in <agent>/pi-actors.toml"
		}
		return &cliError{exit: exitDataErr, code: code, msg: err.Error(), hint: hint}
	case errors.Is(err, config.ErrInvalid):
		return &cliError{exit: exitDataErr, code: "invalid_config", msg: err.Error(), hint: "fix the key or value named above in pi-actors.toml"}
	}
	return &cliError{exit: exitSoftware, code: "internal", msg: err.Error()}
}
