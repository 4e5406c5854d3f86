package verbs

import (
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/recipes/template"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// What the system refused classifies by its errno however deeply it is
// wrapped: a full disk 73, no descriptor left or a file where a
// directory belongs 74, another user's files or kernel 77.
func TestClassifySystem(t *testing.T) {
	pathErr := func(errno syscall.Errno) error {
		return fmt.Errorf("append x: %w", &fs.PathError{Op: "write", Path: "/x/inbox.jsonl", Err: errno})
	}
	for _, c := range []struct {
		err  error
		exit int
		code string
	}{
		{pathErr(syscall.ENOSPC), ExitCantCreate, "no_space"},
		{pathErr(syscall.EDQUOT), ExitCantCreate, "no_space"},
		{fmt.Errorf("commit: database or disk is full (13) (%w)", syscall.ENOSPC), ExitCantCreate, "no_space"},
		{pathErr(syscall.EMFILE), ExitIOErr, "too_many_open_files"},
		{pathErr(syscall.ENFILE), ExitIOErr, "too_many_open_files"},
		{fmt.Errorf("list recipes in /a/recipes: %w", &fs.PathError{Op: "open", Path: "/a/recipes", Err: syscall.ENOTDIR}), ExitIOErr, "not_a_directory"},
		{fmt.Errorf("read /tmp/x: %w", &fs.PathError{Op: "read", Path: "/tmp/x", Err: syscall.EISDIR}), ExitDataErr, "is_a_directory"},
		// A state_dir under a file is the caller's bad path (65).
		{fmt.Errorf("%w: %w", runs.ErrStateDir, &fs.PathError{Op: "stat", Path: "/w/file/sub", Err: syscall.ENOTDIR}), ExitDataErr, "invalid_state_dir"},
		{pathErr(syscall.EACCES), ExitNoPerm, "denied"},
		{fmt.Errorf("run:x: %w", &os.PathError{Op: "stat", Path: "/r/x", Err: syscall.EACCES}), ExitNoPerm, "denied"},
		{fmt.Errorf("%w: the process listening runs as uid 1", wire.ErrDenied), ExitNoPerm, "denied"},
		{pathErr(syscall.EIO), ExitSoftware, "internal"},
	} {
		got := Classify(c.err)
		if got.Exit != c.exit || got.Code != c.code || got.Message != c.err.Error() {
			t.Errorf("%v: exit %d code %s message %q, want %d %s", c.err, got.Exit, got.Code, got.Message, c.exit, c.code)
		}
	}
}

// Every front door's error message is bounded: a long one keeps its first
// 6 KiB and last 1 KiB (whole characters) around a note of the cut; the
// code and exit are those of the error.
func TestClassifyBoundsTheMessage(t *testing.T) {
	msg := "start " + strings.Repeat("é", 100_000) + " end"
	e := Classify(&Error{Exit: ExitDataErr, Code: "invalid_data", Message: msg})
	if len(e.Message) > maxMessageBytes || !strings.HasPrefix(e.Message, "start ") || !strings.HasSuffix(e.Message, " end") ||
		!strings.Contains(e.Message, "bytes of this message cut]") || !utf8.ValidString(e.Message) || e.Code != "invalid_data" || e.Exit != ExitDataErr {
		t.Errorf("got %d bytes, code %s exit %d: %.100q … %.100q", len(e.Message), e.Code, e.Exit, e.Message, e.Message[max(0, len(e.Message)-100):])
	}
	short := &Error{Exit: ExitUsage, Code: "usage", Message: "short"}
	if Classify(short) != short {
		t.Error("a short error is not returned as is")
	}
}

// A missing {dry_run} or {stdin} placeholder — those names are exec's and
// call's own parameters — gets a hint to give it in values:=; one whose
// name only starts with them keeps the template hint.
func TestOwnParameterPlaceholderHint(t *testing.T) {
	for msg, want := range map[string]string{
		"missing value for placeholder {dry_run}: pass dry_run=<value>":       "dry_run= is exec's and call's own parameter",
		"missing value for placeholder {stdin:int}: pass stdin=<value>":       "stdin= is exec's and call's own parameter",
		"missing value for placeholder {stdin_file}: pass stdin_file=<value>": "pi-actors exec --dry-run shows how a template resolves",
		"missing value for placeholder {dry_run_mode}: pass it":               "pi-actors exec --dry-run shows how a template resolves",
	} {
		if e := Classify(&template.Error{Msg: msg}); !strings.HasPrefix(e.Hint, want) {
			t.Errorf("%s: hint %q, want %q…", msg, e.Hint, want)
		}
	}
}

// A knowledge error that reaches any front door (the CLI, MCP, pi) as the
// kernel's answer carries the hint of its code: MCP's had none.
func TestKnowledgeErrorsHaveHints(t *testing.T) {
	for code, want := range map[string]string{
		"VALIDATION_ERROR":    "pi-actors knowledge <operation> --help lists the operation's parameters",
		"NOT_FOUND":           "finds an entity's id",
		"CONFLICT":            "retry with the version it has",
		"INVARIANT_VIOLATION": "names the rule",
	} {
		e := Classify(&wire.Error{Code: code, Exit: 65, Message: "m"})
		if !strings.Contains(e.Hint, want) || e.Message != "m" {
			t.Errorf("%s: %+v, want a hint with %q", code, e, want)
		}
	}
	if e := Classify(&wire.Error{Code: "NOT_FOUND", Exit: 66, Message: "m", Hint: "own"}); e.Hint != "own" {
		t.Errorf("an error's own hint was replaced: %q", e.Hint)
	}
}

// A knowledge NOT_FOUND's hint says where ids of its kind are listed (it
// named query_graph search, which finds atoms and molecules only).
func TestKnowledgeNotFoundHintByKind(t *testing.T) {
	for kind, want := range map[string]string{
		"node": "knowledge search", "conflict": "knowledge conflicts", "project": "knowledge project list",
		"run": "ps --all", "atom": "query_graph operation=search", "path": "check that it exists", "task file": "check that it exists",
	} {
		e := Classify(op.NotFound("id", kind, "x"))
		if !strings.Contains(e.Hint, want) {
			t.Errorf("NOT_FOUND of a %s: hint %q, want it to name %q", kind, e.Hint, want)
		}
	}
}
