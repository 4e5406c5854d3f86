package mcpserver_test

import (
	"strings"
	"testing"
)

// TestMCPWorkflow: spawn takes a workflow through the verb layer — its
// schema lists the parameter, a workflow object runs its nodes as child
// runs, the client gets one follow-up for the workflow (none per node),
// and an invalid workflow is an error naming the node and the field.
func TestMCPWorkflow(t *testing.T) {
	agent := t.TempDir()
	c := connect(t, agent)
	if schema := c.inputSchema("spawn"); !strings.Contains(schema, `"workflow":{`) || strings.Contains(schema, `"workflow_node"`) {
		t.Errorf("spawn schema: want workflow, not the internal workflow_node: %s", schema)
	}

	wf := map[string]any{"nodes": []any{
		map[string]any{"id": "a", "template": "echo from-a"},
		map[string]any{"id": "b", "template": "echo got {upstream.a.output}", "depends_on": []any{"a"}},
	}}
	res := c.call("spawn", map[string]any{"as": "run:flow", "workflow": wf})
	if res.IsError || !strings.HasPrefix(text(res), "address=run:flow status=running") {
		t.Fatalf("spawn workflow: %s", text(res))
	}
	c.wait("follow-up of run:flow", func() bool { return len(c.followups("flow")) > 0 })
	if f := c.followups("flow")[0]; f["status"] != "done" || !strings.Contains(f["text"].(string), "Workflow: 2 nodes: 2 done") {
		t.Errorf("follow-up: %v", f)
	}
	res = c.call("inspect", map[string]any{"target": "run:flow", "view": "dag"})
	if res.IsError || !strings.HasPrefix(text(res), "run=flow workflow=done run_status=done nodes=2") {
		t.Errorf("view=dag: %s", text(res))
	}
	res = c.call("inspect", map[string]any{"target": "run:flow-b", "view": "tail"})
	if !strings.Contains(text(res), "got from-a") {
		t.Errorf("node b's output: %s", text(res))
	}
	for _, run := range []string{"flow-a", "flow-b"} {
		if n := len(c.followups(run)); n != 0 {
			t.Errorf("run:%s raised %d follow-ups; a workflow reports its nodes itself", run, n)
		}
	}

	bad := map[string]any{"nodes": []any{map[string]any{"id": "a", "template": "true", "depends_on": []any{"zz"}}}}
	res = c.call("spawn", map[string]any{"as": "run:bad", "workflow": bad})
	e, _ := structured(t, res)["error"].(map[string]any)
	d, _ := e["details"].(map[string]any)
	if !res.IsError || e["code"] != "invalid_workflow" || d["node"] != "a" || d["field"] != "depends_on" {
		t.Errorf("invalid workflow: %s %v", text(res), res.StructuredContent)
	}
}
