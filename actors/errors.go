package actors

import (
	"errors"
	"fmt"

	"github.com/pi-actors/pi-actors/actors/wire"
	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/recipes"
	"github.com/pi-actors/pi-actors/recipes/template"
	"github.com/pi-actors/pi-actors/runs"
)

func usageErr(format string, args ...any) *wire.Error {
	return &wire.Error{Code: "usage", Exit: 64, Message: fmt.Sprintf(format, args...)}
}

func invalidErr(format string, args ...any) *wire.Error {
	return &wire.Error{Code: "invalid_data", Exit: 65, Message: fmt.Sprintf(format, args...)}
}

// wireError decides the exit code of a kernel-side error (sysexits).
func wireError(err error) *wire.Error {
	var we *wire.Error
	if errors.As(err, &we) {
		return we
	}
	var oe *runs.OwnerError
	if errors.As(err, &oe) {
		return &wire.Error{Code: "session_mismatch", Exit: 77, Message: err.Error(), Hint: "inspect target=session:" + oe.Owner + " view=status",
			Details: map[string]any{"reason": "session_mismatch", "owner_session": oe.Owner, "current_session": oe.Current}}
	}
	var le *recipes.LaunchError
	var ae *recipes.ArgError
	var te *template.Error
	switch {
	case errors.As(err, &le):
		return &wire.Error{Code: "recipe_" + le.Reason, Exit: 65, Message: err.Error(), Hint: "inspect target=recipes view=doctor",
			Details: map[string]any{"reason": le.Reason, "active_path": le.ActivePath, "blocked_fallback": le.BlockedFallback}}
	case errors.As(err, &ae):
		return &wire.Error{Code: "invalid_arguments", Exit: 65, Message: err.Error()}
	case errors.As(err, &te):
		return &wire.Error{Code: "invalid_template", Exit: 65, Message: err.Error(), Hint: "pi-actors exec --dry-run shows how a template resolves"}
	case errors.Is(err, recipes.ErrNotFound), errors.Is(err, runs.ErrNotFound):
		return &wire.Error{Code: "not_found", Exit: 66, Message: err.Error()}
	case errors.Is(err, runs.ErrInvalidID):
		return &wire.Error{Code: "invalid_run_id", Exit: 65, Message: err.Error()}
	case errors.Is(err, runs.ErrBusy):
		return &wire.Error{Code: "busy", Exit: 75, Message: err.Error()}
	case errors.Is(err, recipes.ErrInvalid), errors.Is(err, recipes.ErrDisabled), errors.Is(err, mailbox.ErrInvalid):
		return &wire.Error{Code: "invalid_data", Exit: 65, Message: err.Error()}
	}
	return &wire.Error{Code: "internal", Exit: 70, Message: err.Error()}
}
