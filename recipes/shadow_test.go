package recipes

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// testVerbs are verbs as verbs.Names lists them (this package cannot
// import verbs): tool verbs and the others alike.
var testVerbs = []string{"exec", "call", "inspect", "query_graph", "logs", "mailbox", "message", "ps", "ls", "register_tool", "stop", "kill", "spawn"}

func TestShadowOf(t *testing.T) {
	for _, c := range []struct {
		name      string
		kind, was string // "" kind: neither
	}{
		{"spawn", ShadowVerb, "spawn"},
		{"Spawn", ShadowVerb, "spawn"},
		{"LOGS", ShadowVerb, "logs"},
		{"stop", ShadowVerb, "stop"},
		{"Exec", ShadowVerb, "exec"},
		{"query-graph", ShadowVerb, "query_graph"},
		{" Query_Graph ", ShadowVerb, "query_graph"},
		{"ls", ShadowVerb, "ls"}, // a verb and a pi built-in: the verb wins
		{"Ls", ShadowVerb, "ls"},
		{"Bash", ShadowPiBuiltin, "bash"},
		{"bash", ShadowPiBuiltin, "bash"},
		{"READ", ShadowPiBuiltin, "read"},
		{"grep", ShadowPiBuiltin, "grep"},
		{"Find", ShadowPiBuiltin, "find"},
		{"edit", ShadowPiBuiltin, "edit"},
		{"Write", ShadowPiBuiltin, "write"},
		{"bashful", "", ""},
		{"spawner", "", ""},
		{"my_logs", "", ""},
		{"", "", ""},
	} {
		s, ok := ShadowOf(c.name, testVerbs)
		if ok != (c.kind != "") || s.Kind != c.kind || s.Name != c.was {
			t.Errorf("ShadowOf(%q) = %+v, %v; want kind %q name %q", c.name, s, ok, c.kind, c.was)
		}
		if got, want := SpeltLikeVerb(c.name, testVerbs), c.kind == ShadowVerb; got != want {
			t.Errorf("SpeltLikeVerb(%q) = %v, want %v", c.name, got, want)
		}
	}
	// Without verbs, ls is pi's.
	if s, ok := ShadowOf("LS", nil); !ok || s.Kind != ShadowPiBuiltin || s.Name != "ls" {
		t.Errorf("ShadowOf(LS, no verbs) = %+v, %v; want pi_builtin ls", s, ok)
	}
	// register_tool refuses pi's tools in any case.
	for _, name := range []string{"Bash", "READ", "ls"} {
		if _, err := ToolName(name); err == nil {
			t.Errorf("ToolName(%q) accepted a pi built-in", name)
		}
	}
}

// TestPiBuiltinsMatchExtension: the pi extension leaves out the same pi
// tools (select.ts's PI_BUILTINS) as PiBuiltins names.
func TestPiBuiltinsMatchExtension(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "extensions", "pi", "select.ts"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`PI_BUILTINS = new Set\(\[([^\]]*)\]\)`).FindSubmatch(src)
	if m == nil {
		t.Fatal("select.ts: no PI_BUILTINS = new Set([...])")
	}
	var ts []string
	for _, q := range regexp.MustCompile(`"([^"]*)"`).FindAllSubmatch(m[1], -1) {
		ts = append(ts, string(q[1]))
	}
	goNames := slices.Clone(PiBuiltins)
	slices.Sort(ts)
	slices.Sort(goNames)
	if !slices.Equal(ts, goNames) {
		t.Errorf("select.ts PI_BUILTINS %v, recipes.PiBuiltins %v", ts, goNames)
	}
}

// TestFlagReservedVerbAndPiBuiltin: the doctor reports a user recipe
// spelt like a verb (any verb, any case) and one spelt like a pi
// built-in, each a reserved_name warning naming the rename; others and
// packaged recipes are left alone.
func TestFlagReservedVerbAndPiBuiltin(t *testing.T) {
	tmpl := `{"description": "d", "template": "echo hi"}`
	agent := sumAgent(t, map[string]string{
		"Logs.json":  tmpl,
		"stop.json":  tmpl,
		"Bash.json":  tmpl,
		"read.json":  tmpl,
		"notes.json": tmpl,
	})
	s := sumOf(t, agent)
	s.FlagReserved(testVerbs)
	root := UserRoot(agent)
	for _, c := range []struct{ id, msg, action string }{
		{"Logs", "is named like the pi-actors verb logs", "rename the file (e.g. to logs_tool.json) so it is offered as a tool"},
		{"stop", "is named like the pi-actors verb stop", "rename the file (e.g. to stop_tool.json) so it is offered as a tool"},
		{"Bash", "is named like pi's built-in tool bash", "rename the file (e.g. to bash_tool.json) so pi offers it as a tool"},
		{"read", "is named like pi's built-in tool read", "rename the file (e.g. to read_tool.json) so pi offers it as a tool"},
	} {
		path := filepath.Join(root, c.id+".json")
		r := sumRemediation(s, c.id, path)
		if r == nil {
			t.Errorf("%s: no remediation in %+v", c.id, s.Remediations)
			continue
		}
		if r.Kind != "reserved_name" || r.Severity != SeverityWarning || r.Action != c.action {
			t.Errorf("%s: remediation %+v, want reserved_name warning with action %q", c.id, r, c.action)
		}
		d := sumDetail(s, path+" "+c.msg)
		if d == nil || d.Severity != SeverityWarning || d.ID != c.id || d.Action != c.action {
			t.Errorf("%s: diagnostic detail %+v", c.id, d)
		}
	}
	for _, r := range s.Remediations {
		if r.Kind == "reserved_name" && (r.ID == "notes" || IsPackaged(r.Path)) {
			t.Errorf("flagged %s: %+v", r.ID, r)
		}
	}
	if s.TopAction == nil || s.TopAction.Kind != "reserved_name" {
		t.Errorf("top action %+v, want a reserved_name one", s.TopAction)
	}
	if _, warns, _ := s.SeverityCounts(); warns != 4 {
		t.Errorf("warnings = %d, want 4", warns)
	}
}
