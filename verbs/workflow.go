package verbs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pi-actors/pi-actors/internal/fsutil"
	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/recipes/template"
	"github.com/pi-actors/pi-actors/workflows"
)

// SpawnKeys are the spawn parameters (what a workflow node may carry and
// passes to its child run's spawn as given).
func SpawnKeys() []string { return Find("spawn").Params() }

// WorkflowOptions are the options a workflow of run id run is parsed with.
func WorkflowOptions(run string) workflows.Options {
	return workflows.Options{SpawnKeys: SpawnKeys(), Run: run}
}

// maxWorkflowFile bounds a workflow file read.
const maxWorkflowFile = 4 << 20

// validateWorkflow checks a workflow spawn: no other source of what to
// run, no restart policy (the scheduler has its own), and an inline
// workflow whole (a file is read and checked by the kernel, relative to
// the caller's directory).
func (s *Spawn) validateWorkflow() error {
	if s.Recipe != "" || s.File != "" || s.Template != nil {
		return Usagef("spawn: workflow= runs a workflow; it takes no recipe, file or template (a recipe whose file holds a workflow is spawned with recipe=<name>)")
	}
	if err := s.CheckWorkflowParams("workflow="); err != nil {
		return err
	}
	switch w := s.Workflow.(type) {
	case string:
		if strings.TrimSpace(w) == "" {
			return Usagef("spawn: workflow= needs a JSON file path or, as workflow:=…, a workflow object")
		}
		return nil
	case map[string]any:
		_, err := workflows.Parse(w, WorkflowOptions(s.runID()))
		return err
	}
	return Invalidf("spawn: workflow must be a workflow object (workflow:='{\"nodes\":[…]}') or a JSON file path (workflow=plan.json), got %s", template.CompactJSON(s.Workflow))
}

// CheckWorkflowParams refuses the spawn parameters a workflow does not
// take (they would be dropped): what starts it is what (workflow= or a
// workflow recipe) for the message.
func (s *Spawn) CheckWorkflowParams(what string) error {
	if s.Restart != nil {
		return Usagef("spawn: %s takes no restart: the workflow's scheduler restarts itself; give nodes their own restart", what)
	}
	if len(s.Values) > 0 || len(s.Artifacts) > 0 || len(s.Controls()) > 0 {
		return Usagef("spawn: %s takes no values, artifacts or template controls; put them on the nodes that need them", what)
	}
	var health []string
	for name, given := range map[string]bool{"ready": s.Ready != "", "ready_timeout": s.ReadyTimeout != "", "wait": s.Wait != "",
		"liveness": s.Liveness != "", "liveness_every": s.LivenessEvery != "", "liveness_failures": s.LivenessFailures.Set,
		"max_rss": s.MaxRSS != "", "watch": len(s.Watch) > 0} {
		if given {
			health = append(health, name)
		}
	}
	if len(health) > 0 {
		slices.Sort(health)
		return Usagef("spawn: %s takes no %s: a workflow is ready and healthy through its nodes; give a service node its ready condition (docs/workflows.md)", what, strings.Join(health, ", "))
	}
	return nil
}

// readWorkflow reads a workflow given as a file path and checks it whole
// before anything is sent to the kernel (it would read the file itself,
// relative to the caller's directory).
func (s *Spawn) readWorkflow(cwd string) error {
	path, ok := s.Workflow.(string)
	if !ok {
		return nil
	}
	obj, err := ReadWorkflow(path, cwd)
	if err != nil {
		return err
	}
	if _, err := workflows.Parse(obj, WorkflowOptions(s.runID())); err != nil {
		return err
	}
	s.Workflow = obj
	return nil
}

// runID is the run id the request names (as=run:<id> or run_id), "" when
// it names none.
func (s *Spawn) runID() string {
	if a, err := mailbox.Parse(s.As); err == nil && a.Kind == "run" {
		return a.ID
	}
	return strings.TrimSpace(s.RunID)
}

// ReadWorkflow reads a workflow given as a file path (relative to cwd):
// the decoded JSON object, numbers kept exact.
func ReadWorkflow(path, cwd string) (map[string]any, error) {
	if !filepath.IsAbs(path) && cwd != "" {
		path = filepath.Join(cwd, path)
	}
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, &Error{Exit: ExitNoInput, Code: "not_found", Message: fmt.Sprintf("workflow file %s does not exist", path), Hint: "workflow=<path of a JSON file>, relative to your directory"}
		}
		return nil, fmt.Errorf("read workflow: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && !st.Mode().IsRegular() {
		// A directory where a file belongs is 65 (is_a_directory), as
		// everywhere (docs/cli.md); so is a FIFO or a device.
		code := "invalid"
		if st.IsDir() {
			code = "is_a_directory"
		}
		return nil, &Error{Exit: ExitDataErr, Code: code, Message: fmt.Sprintf("workflow file %s is not a file (a %s)", path, fsutil.FileKind(st.Mode())), Hint: "workflow=<path of a JSON file>, relative to your directory"}
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(f, maxWorkflowFile+1)); err != nil {
		return nil, fmt.Errorf("read workflow %s: %w", path, err)
	}
	if buf.Len() > maxWorkflowFile {
		return nil, Invalidf("workflow file %s is larger than %d bytes", path, maxWorkflowFile)
	}
	v, err := template.DecodeJSON(buf.Bytes())
	if err != nil {
		return nil, &Error{Exit: ExitDataErr, Code: "invalid_workflow", Message: fmt.Sprintf("workflow file %s is not JSON: %v", path, err)}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, &Error{Exit: ExitDataErr, Code: "invalid_workflow", Message: fmt.Sprintf("workflow file %s must hold a JSON object {id, nodes, policy, …}", path)}
	}
	return obj, nil
}

// workflowError is the exit 65 of an invalid workflow, naming node and
// field.
func workflowError(we *workflows.Error) *Error {
	return &Error{Exit: ExitDataErr, Code: "invalid_workflow", Message: we.Error(),
		Hint:    "fix the node and field named above; docs/workflows.md has the schema",
		Details: map[string]any{"node": cutLine(we.Node, previewChars), "field": cutLine(we.Field, previewChars)}} // bounded as the message
}
