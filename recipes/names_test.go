package recipes

import (
	"errors"
	"testing"
)

// Lookups take the exact id, else the one id spelt differently (case, -
// and _); several such ids and no exact one are ambiguous.
func TestResolveSpellings(t *testing.T) {
	tool := `{"description":"d","template":"echo x"}`
	agent, _ := agentWith(t, map[string]string{"my_tool.json": tool, "two-ways.json": tool, "two_ways.json": tool, "off.json": `{"description":"d","disabled":true,"template":"echo x"}`,
		"a.b.json": tool, "Foo Bar.json": tool})
	g := discover(t, agent)
	for name, want := range map[string]string{
		"my_tool": "my_tool", "my-tool": "my_tool", " My-Tool ": "my_tool",
		"utility_git_status": "utility-git-status", "utility-git-status": "utility-git-status",
		"two-ways": "two-ways", "two_ways": "two_ways", "nope": "",
		// the names MCP and schema list them under (runs of characters a
		// tool name cannot hold become _)
		"a_b": "a.b", "a.b": "a.b", "Foo_Bar": "Foo Bar", "foo_bar": "Foo Bar",
	} {
		id, err := g.Resolve(name, nil)
		if err != nil || id != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", name, id, err, want)
		}
	}
	var ae *AmbiguousError
	if _, err := g.Resolve("Two-Ways", nil); !errors.As(err, &ae) || len(ae.IDs) != 2 {
		t.Errorf("Two-Ways: %v", err)
	}
	if _, err := g.Lookup("TWO_WAYS"); !errors.As(err, &ae) {
		t.Errorf("Lookup TWO_WAYS: %v", err)
	}
	// Among tools only: a packaged recipe is no tool; a disabled one neither.
	if id, err := g.Resolve("utility-git-status", (*Entry).Tool); id != "" || err != nil {
		t.Errorf("a packaged recipe as a tool: %q %v", id, err)
	}
	if id, _ := g.Resolve("OFF", (*Entry).Tool); id != "" {
		t.Errorf("a disabled tool: %q", id)
	}
	if e, err := g.Lookup("my-tool"); err != nil || e.ID != "my_tool" {
		t.Errorf("Lookup my-tool: %v %v", e, err)
	}
	if others := g.Spellings("utility_git_status"); len(others) != 1 || others[0].ID != "utility-git-status" {
		t.Errorf("Spellings: %v", others)
	}
}

// register_tool stores PARITY's normalised name, acts on a tool already
// there under another spelling, and refuses a name another recipe spells
// differently.
func TestRegisterSpellings(t *testing.T) {
	agent, root := agentWith(t, map[string]string{"hand-made.json": `{"description":"d","template":"echo x"}`})
	rg := &Registrar{AgentDir: agent}
	reg := func(params map[string]any) (*Registered, error) {
		r, err := ParseRegistration(params)
		if err != nil {
			return nil, err
		}
		return rg.Register(r)
	}
	out, err := reg(map[string]any{"name": "my-tool", "description": "d", "template": "date"})
	if err != nil || out.Tool != "my_tool" {
		t.Fatalf("register my-tool: %v %v", out, err)
	}
	if _, err := reg(map[string]any{"name": "MY_TOOL", "description": "d", "template": "date"}); !errors.Is(err, ErrConflict) {
		t.Errorf("MY_TOOL again: %v", err)
	}
	out, err = reg(map[string]any{"name": "hand_made", "description": "new", "update": true})
	if err != nil || out.Tool != "hand-made" || out.Path != root+"/hand-made.json" {
		t.Errorf("update hand_made: %+v %v", out, err)
	}
	if _, err := reg(map[string]any{"name": "utility_git_log", "description": "d", "template": "date"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("utility_git_log: %v", err)
	}
	out, err = reg(map[string]any{"name": "hand-made", "template": nil})
	if err != nil || out.Action != "deleted" || out.Tool != "hand-made" {
		t.Errorf("delete hand-made: %+v %v", out, err)
	}
	out, err = reg(map[string]any{"name": "utility-git-log", "template": ""})
	if err != nil || out.Action != "not_found" {
		t.Errorf("delete utility-git-log: %+v %v", out, err)
	}
}
