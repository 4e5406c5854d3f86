package verbs

import (
	"context"
	"errors"
	"fmt"

	"github.com/pi-actors/pi-actors/recipes"
	"github.com/pi-actors/pi-actors/recipes/template"
)

// toolParamsPreview bounds the params quoted in a tool failure (A6).
const toolParamsPreview = 240

// ToolParams turns a message body into a tool's arguments (PARITY A4): an
// object is the arguments, no body is {}, anything else is {input: body}.
func ToolParams(body any) map[string]any {
	switch b := body.(type) {
	case nil:
		return map[string]any{}
	case map[string]any:
		return b
	}
	return map[string]any{"input": body}
}

// ResolveTool is the id of the user-root recipe tool a tool:<name>
// message reaches: its exact id, else its id spelt differently
// (tool:my-tool reaches my_tool); 66 not_found when there is none, with
// why a recipe of that name is not one (invalid, disabled, packaged).
func ResolveTool(env *Env, name string) (string, error) {
	g, err := recipes.Discover(env.AgentDir)
	if err != nil {
		return "", err
	}
	id, err := g.Resolve(name, (*recipes.Entry).Tool)
	if err != nil {
		return "", err
	}
	if id == "" {
		// As inspect target=tool: says it, with why a recipe of that
		// name is no tool (invalid, disabled, packaged).
		return "", toolNotFound(g, name, g.Active[name])
	}
	return id, nil
}

// InvokeTool is the tool:<name> route of message: it runs the user-root
// recipe tool name exactly as `call` does (verbs.Find("call")), with the
// message body as its arguments, in the foreground of the calling
// process, and returns the call's result (the bounded output, exit code
// and failure). Only recipe tools are reachable — the verbs themselves
// (tool:spawn) are not. A failure names the tool, the message type and a
// preview of the arguments; its details carry the call's result.
func InvokeTool(ctx context.Context, env *Env, name, msgType string, body any) (any, error) {
	name, err := ResolveTool(env, name)
	if err != nil {
		return nil, err
	}
	params := ToolParams(body)
	call := Find("call")
	req := &Call{Recipe: name, Args: params}
	fail := func(cause *Error, details any) error {
		d := map[string]any{"tool": name, "message_type": msgType, "original_error": cause.Message,
			"params_preview": preview(template.CompactJSON(params), toolParamsPreview)}
		hint := cause.Hint
		if details != nil {
			d["result"] = details
			hint = "the command's stderr is in details.result.failure.stderr; its stdout tail in details.result.output"
		}
		return &Error{Exit: cause.Exit, Code: cause.Code, Hint: hint, Details: d,
			Message: fmt.Sprintf("tool actor %s failed for message type %s: %s; params=%s", name, msgType, cause.Message, d["params_preview"])}
	}
	if err := req.Validate(); err != nil {
		return nil, fail(Classify(err), nil)
	}
	local := *env
	local.Stream, local.Stderr, local.JSON = nil, nil, true
	out, err := call.Run(ctx, &local, req)
	if err != nil {
		var ce *Error
		if !errors.As(err, &ce) {
			ce = Classify(err)
		}
		return nil, fail(ce, nil)
	}
	if out.Fail != nil {
		return nil, &ToolRanError{fail(out.Fail, out.Result)}
	}
	return out.Result, nil
}

// ToolRanError is InvokeTool's error for a tool whose command ran and
// failed (as opposed to one that never ran: not found, arguments
// refused): a message with an id that ran it must not run it again.
type ToolRanError struct{ Err error }

func (e *ToolRanError) Error() string { return e.Err.Error() }
func (e *ToolRanError) Unwrap() error { return e.Err }
