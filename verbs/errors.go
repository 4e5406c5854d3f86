package verbs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"slices"
	"syscall"
	"unicode/utf8"

	"github.com/pi-actors/pi-actors/internal/config"
	"github.com/pi-actors/pi-actors/internal/lazyre"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/recipes"
	"github.com/pi-actors/pi-actors/recipes/template"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs/wire"
	"github.com/pi-actors/pi-actors/workflows"
)

// Exit codes: sysexits for pi-actors' own errors; exec and call pass the
// command's own status through.
const (
	ExitOK          = 0
	ExitUsage       = 64
	ExitDataErr     = 65
	ExitNoInput     = 66
	ExitUnavailable = 69
	ExitSoftware    = 70
	ExitCantCreate  = 73
	ExitIOErr       = 74
	ExitTempFail    = 75
	ExitNoPerm      = 77
	ExitConfig      = 78
)

// Error is a failed request with its exit code and machine code decided:
// the same value in the CLI's --json envelope, on the kernel socket and in
// an MCP tool error.
type Error = wire.Error

// Usagef is a usage error (64): a missing or unknown parameter, a word
// where a parameter belongs.
func Usagef(format string, args ...any) *Error {
	return &Error{Exit: ExitUsage, Code: "usage", Message: fmt.Sprintf(format, args...), Hint: "pi-actors help"}
}

// Invalidf is an invalid-data error (65): a parameter of the wrong type or
// shape.
func Invalidf(format string, args ...any) *Error {
	return &Error{Exit: ExitDataErr, Code: "invalid_data", Message: fmt.Sprintf(format, args...),
		Hint: "strings are key=value; JSON values are key:=JSON (quote the word for your shell)"}
}

// ownPlaceholderRe finds a missing placeholder's name (up to its type,
// default or end).
var ownPlaceholderRe = lazyre.New(`missing value for placeholder \{([A-Za-z0-9_.-]+)[:=|?}]`)

// Classify decides the exit code and the machine code of any error, in one
// place, for every front door and the kernel. Its message is bounded
// (maxMessageBytes): an error that quotes a caller's long input keeps its
// start and its end.
func Classify(err error) *Error {
	e := classify(err)
	long, hint := len(e.Message) > maxMessageBytes, ""
	if e.Hint == "" {
		hint = knowledgeHint(e.Code, e.Details)
	}
	if !long && hint == "" {
		return e
	}
	c := *e
	if long {
		c.Message = clipMessage(c.Message)
	}
	if hint != "" {
		c.Hint = hint
	}
	return &c
}

// knowledgeHint is the hint of a knowledge error (seed 003's codes) that
// brings none, the same through every front door ("" for another code).
func knowledgeHint(code string, details any) string {
	switch code {
	case "VALIDATION_ERROR":
		return "details.field names the parameter; pi-actors knowledge <operation> --help lists the operation's parameters"
	case "NOT_FOUND":
		// Where ids of that kind are found (details.kind).
		d, _ := details.(map[string]any)
		kind, _ := d["kind"].(string)
		switch kind {
		case "node":
			return "pi-actors knowledge search query=<words> finds a node's id"
		case "conflict":
			return "pi-actors knowledge conflicts lists the conflicts and their ids"
		case "project":
			return "pi-actors knowledge project list lists the projects and their ids"
		case "run":
			return "pi-actors ps --all lists the runs"
		case "path", "task file":
			return "a relative path is the caller's directory's: check that it exists (ls it) or give an absolute one"
		}
		return "pi-actors knowledge query_graph operation=search query=<words> finds an entity's id"
	case "CONFLICT":
		return "read it again (query_graph operation=get) and retry with the version it has"
	case "INVARIANT_VIOLATION":
		return "the message names the rule the change would break; pi-actors help knowledge"
	}
	return ""
}

// maxMessageBytes bounds an error's message; a failed command's (its
// stderr tail) is well within it.
const maxMessageBytes = 8 << 10

// clipMessage is a long message's first 6 KiB and last 1 KiB (whole
// characters) around a note of what was cut.
func clipMessage(m string) string {
	head, tail := 6<<10, len(m)-1<<10
	for head > 0 && !utf8.RuneStart(m[head]) {
		head--
	}
	for tail < len(m) && !utf8.RuneStart(m[tail]) {
		tail++
	}
	return fmt.Sprintf("%s…[%d bytes of this message cut]…%s", m[:head], tail-head, m[tail:])
}

func classify(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if ke, ok := op.AsError(err); ok {
		return knowledgeError(ke)
	}
	if ce := classifyRuns(err); ce != nil {
		return ce
	}
	if ce := classifyRecipes(err); ce != nil {
		return ce
	}
	var we *workflows.Error
	if errors.As(err, &we) {
		return workflowError(we)
	}
	var me *mailbox.AddressError
	var ee *mailbox.EnvelopeError
	var cfgEnv *config.EnvError
	switch {
	case errors.Is(err, wire.ErrNoAnswer):
		return &Error{Exit: ExitUnavailable, Code: "kernel_unavailable", Message: err.Error(),
			Hint: "the kernel may have applied it before it ended (a batch: some of its items): look first (pi-actors ps, inspect), then send again what is missing — with id= on every message, one already stored answers duplicate=true"}
	case errors.Is(err, wire.ErrUnavailable):
		return &Error{Exit: ExitUnavailable, Code: "kernel_unavailable", Message: err.Error(), Hint: "pi-actors kernel status; the kernel log is <agent>/tmp/pi-actors/kernel.log"}
	case errors.As(err, &me), errors.As(err, &ee), errors.Is(err, mailbox.ErrInvalid):
		field := ""
		if ee != nil {
			field = ee.Field
		}
		return &Error{Exit: ExitDataErr, Code: "invalid_envelope", Message: err.Error(), Hint: envelopeHint(field)}
	case errors.As(err, &cfgEnv):
		return &Error{Exit: ExitDataErr, Code: "invalid_config", Message: err.Error(), Hint: "fix or unset $" + cfgEnv.Name + " (it overrides pi-actors.toml)"}
	case errors.Is(err, config.ErrInvalid):
		return &Error{Exit: ExitDataErr, Code: "invalid_config", Message: err.Error(), Hint: "fix what is named above in pi-actors.toml (the file, a key or a value)"}
	case errors.As(err, new(*url.Error)) && !errors.Is(err, context.Canceled):
		// An HTTP service the call needs (the knowledge embedder) did not
		// answer: the service is unavailable, not pi-actors broken.
		return &Error{Exit: ExitUnavailable, Code: "service_unavailable", Message: err.Error(),
			Hint: "the service named above does not answer: for the knowledge embedder check [knowledge.embedder] url in pi-actors.toml (pi-actors knowledge status shows its last error), then retry"}
	}
	if ce := classifySystem(err); ce != nil {
		return ce
	}
	return &Error{Exit: ExitSoftware, Code: "internal", Message: err.Error()}
}

// classifySystem names what the system refused: another user's files or
// kernel (77), a full disk (73), no file descriptor left or a file where a
// directory belongs (74), a directory given where a file belongs (65). Whatever
// failed wrote nothing half (atomic state files, whole JSONL lines, SQLite
// transactions), so the same call works again once the cause is gone.
func classifySystem(err error) *Error {
	switch {
	case errors.Is(err, wire.ErrDenied), errors.Is(err, fs.ErrPermission):
		return &Error{Exit: ExitNoPerm, Code: "denied", Message: err.Error(), Hint: "the files or the kernel named above belong to another user: use your own agent root (PI_CODING_AGENT_DIR)"}
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return &Error{Exit: ExitCantCreate, Code: "no_space", Message: err.Error(), Hint: "the file system named above is full (or over quota): free space and retry; nothing was half-written"}
	case errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE):
		return &Error{Exit: ExitIOErr, Code: "too_many_open_files", Message: err.Error(), Hint: "the kernel ran out of file descriptors: raise its limit (ulimit -n before it starts) or end some runs, then retry; nothing was half-written"}
	case errors.Is(err, syscall.EISDIR):
		return &Error{Exit: ExitDataErr, Code: "is_a_directory", Message: err.Error(), Hint: "the path named above is a directory where a file is read or written: name a file"}
	case errors.Is(err, syscall.ENOTDIR):
		return &Error{Exit: ExitIOErr, Code: "not_a_directory", Message: err.Error(), Hint: "a file stands where pi-actors keeps a directory (the path named above, e.g. <agent>/recipes): move the file away, then retry"}
	}
	return nil
}

func classifyRuns(err error) *Error {
	var oe *runs.OwnerError
	switch {
	case errors.As(err, &oe):
		return &Error{Exit: ExitNoPerm, Code: "session_mismatch", Message: err.Error(), Hint: "inspect target=session:" + oe.Owner + " view=status",
			Details: map[string]any{"reason": "session_mismatch", "owner_session": oe.Owner, "current_session": oe.Current}}
	case errors.Is(err, runs.ErrInvalidID):
		return &Error{Exit: ExitDataErr, Code: "invalid_run_id", Message: err.Error()}
	case errors.Is(err, runs.ErrNotFound):
		return &Error{Exit: ExitNoInput, Code: "not_found", Message: err.Error(), Hint: "inspect target=session:all view=runs"}
	case errors.Is(err, runs.ErrBusy):
		return &Error{Exit: ExitTempFail, Code: "busy", Message: err.Error()}
	case errors.Is(err, runs.ErrDamaged):
		return &Error{Exit: ExitDataErr, Code: "state_damaged", Message: err.Error(),
			Hint: "the file was changed from outside pi-actors (it writes each state file whole): restore it from a backup, or move the run's state directory away"}
	case errors.Is(err, runs.ErrNotPreservable):
		return &Error{Exit: ExitDataErr, Code: "artifact_not_preservable", Message: err.Error(),
			Hint: "prune without preserve_artifacts, or copy what you need first"}
	case errors.Is(err, runs.ErrStateDir) && (classifySystem(err) == nil || errors.Is(err, syscall.ENOTDIR)):
		// A state_dir under a file is the caller's path, not the agent's.
		return &Error{Exit: ExitDataErr, Code: "invalid_state_dir", Message: err.Error(),
			Hint: "state_dir must be a new or empty directory this user can create (under an existing, writable directory), or the run's own state dir; leave it out for <agent>/tmp/pi-actors/runs/<id>"}
	}
	return nil
}

func classifyRecipes(err error) *Error {
	var re *recipes.RegisterError
	if errors.As(err, &re) {
		return registerError(re)
	}
	var ambiguous *recipes.AmbiguousError
	if errors.As(err, &ambiguous) {
		return &Error{Exit: ExitUsage, Code: "ambiguous_name", Message: err.Error(), Hint: "inspect target=recipes view=summary lists the recipes' exact names",
			Details: map[string]any{"name": ambiguous.Name, "matches": ambiguous.IDs}}
	}
	var te *template.Error
	var ae *recipes.ArgError
	var le *recipes.LaunchError
	switch {
	case errors.As(err, &ae):
		return &Error{Exit: ExitDataErr, Code: "invalid_arguments", Message: err.Error()}
	case errors.As(err, &le):
		return &Error{Exit: ExitDataErr, Code: "recipe_" + le.Reason, Message: err.Error(), Hint: "inspect target=recipes view=doctor",
			Details: map[string]any{"reason": le.Reason, "active_path": le.ActivePath, "blocked_fallback": le.BlockedFallback}}
	case errors.Is(err, recipes.ErrNotFound):
		return &Error{Exit: ExitNoInput, Code: "not_found", Message: err.Error(), Hint: "inspect target=recipes view=summary"}
	case errors.Is(err, recipes.ErrDisabled):
		return &Error{Exit: ExitDataErr, Code: "recipe_disabled", Message: err.Error()}
	case errors.Is(err, recipes.ErrInvalid):
		return &Error{Exit: ExitDataErr, Code: "invalid_recipe", Message: err.Error(), Hint: "inspect target=recipes view=doctor"}
	case errors.As(err, &te):
		if errors.Is(err, template.ErrLimit) {
			return &Error{Exit: ExitDataErr, Code: "limit_exceeded", Message: err.Error(), Hint: "raise the limit named above in <agent>/pi-actors.toml"}
		}
		hint := "pi-actors exec --dry-run shows how a template resolves; see docs/command-templates.md"
		if m := ownPlaceholderRe.FindStringSubmatch(err.Error()); m != nil && slices.Contains(slices.Collect(maps.Values(flagsRun)), m[1]) {
			// exec and call take dry_run= and stdin= themselves.
			hint = m[1] + "= is exec's and call's own parameter: give the placeholder its value in values:={\"" + m[1] + "\":…}"
		}
		return &Error{Exit: ExitDataErr, Code: "invalid_template", Message: err.Error(), Hint: hint}
	}
	return nil
}

// registerError maps a register_tool error to its exit code: 75 for a
// conflict, 66 for a missing draft or recipe, 65 otherwise.
func registerError(re *recipes.RegisterError) *Error {
	e := &Error{Exit: ExitDataErr, Code: "invalid_registration", Message: re.Error(), Hint: re.Hint,
		Details: map[string]any{"field": re.Field}}
	switch {
	case errors.Is(re, recipes.ErrConflict):
		e.Exit, e.Code = ExitTempFail, "conflict"
	case errors.Is(re, recipes.ErrNotFound):
		e.Exit, e.Code = ExitNoInput, "not_found"
	}
	return e
}

// envelopeHint is the fix for a message field that failed its check.
func envelopeHint(field string) string {
	switch field {
	case "from":
		return "from= is the sender: run:<id>, or branch:<run>/<branch> of the same run ($PI_ACTORS_ADDRESS inside a run)"
	case "metadata.recipients":
		return "metadata.recipients is a JSON array of branch:<run>/<branch> addresses of the room's own run"
	case "ttl_ms":
		return "ttl_ms is a positive whole number of milliseconds (or give deadline=<RFC 3339 time>)"
	case "deadline":
		return "deadline is an RFC 3339 time, e.g. 2026-01-02T15:04:05Z (or give ttl_ms=<milliseconds>)"
	case "id":
		return "id is a token of letters, digits, '.', '_' and '-' (leave it out for a new one)"
	case "type":
		return "type is channel.action, e.g. task.assign or control.kill"
	}
	return "message needs to=<address> type=<channel.action>; addresses: run:<id>, branch:<run>/<branch>, room:<run>, tool:<name>, coordinator, session:<id>"
}
