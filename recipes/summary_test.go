package recipes

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pi-actors/pi-actors/recipes/template"
)

// sumAgent makes an agent root whose user recipe root holds files (name →
// content, "drafts/x.json" for drafts) with mode 0755, whatever the umask.
func sumAgent(t *testing.T, files map[string]string) string {
	t.Helper()
	agent := t.TempDir()
	root := UserRoot(agent)
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	return agent
}

// sumOf discovers agent and summarizes it.
func sumOf(t *testing.T, agent string) *Summary {
	t.Helper()
	g, err := Discover(agent)
	if err != nil {
		t.Fatalf("discover: %v", err)
	}
	return Summarize(g, &Resolver{AgentDir: agent, Home: t.TempDir()})
}

func sumRemediation(s *Summary, id, path string) *Remediation {
	for i := range s.Remediations {
		if s.Remediations[i].ID == id && s.Remediations[i].Path == path {
			return &s.Remediations[i]
		}
	}
	return nil
}

func sumRecommendation(s *Summary, path string) *Recommendation {
	for i := range s.Recommendations {
		if s.Recommendations[i].Path == path {
			return &s.Recommendations[i]
		}
	}
	return nil
}

func sumDetail(s *Summary, contains string) *DiagnosticDetail {
	for i := range s.DiagnosticDetails {
		if strings.Contains(s.DiagnosticDetails[i].Message, contains) {
			return &s.DiagnosticDetails[i]
		}
	}
	return nil
}

func sumActive(s *Summary, id string) *SummaryActive {
	for i := range s.Active {
		if s.Active[i].ID == id {
			return &s.Active[i]
		}
	}
	return nil
}

func TestSummaryShadowingJSONOverMarkdown(t *testing.T) {
	agent := sumAgent(t, map[string]string{
		"greet.json": `{"description":"json wins","template":"echo json","usage":{"calls":2}}`,
		"greet.md":   "---\ndescription: md loses\n---\n```command\necho md\n```\n",
		// overrides the packaged recipe of the same id
		"utility-git-status.json": `{"description":"mine","template":"git status","usage":{"calls":1}}`,
	})
	s := sumOf(t, agent)
	root := UserRoot(agent)
	jsonPath, mdPath := filepath.Join(root, "greet.json"), filepath.Join(root, "greet.md")

	a := sumActive(s, "greet")
	if a == nil || a.Path != jsonPath || !a.Tool || !reflect.DeepEqual(a.Shadows, []string{mdPath}) {
		t.Fatalf("active greet = %+v, want the JSON file as a tool shadowing the Markdown one", a)
	}
	if a.Usage == nil || a.Description != "json wins" {
		t.Errorf("active greet lost description or usage: %+v", a)
	}
	want := SummaryShadowed{ID: "greet", Path: mdPath, ShadowedBy: jsonPath}
	found := false
	for _, sh := range s.Shadowed {
		found = found || sh == want
	}
	if !found {
		t.Errorf("shadowed = %+v, want %+v", s.Shadowed, want)
	}
	d := sumDetail(s, "Markdown recipe "+mdPath+" is shadowed by JSON recipe "+jsonPath)
	if d == nil || d.Severity != SeverityInfo || d.Path != mdPath || d.ID != "greet" {
		t.Errorf("markdown shadow detail = %+v", d)
	}
	if r := sumRecommendation(s, mdPath); r == nil || r.Reason != "shadowed by "+jsonPath || !reflect.DeepEqual(r.Actions, []string{"merge", "delete", "archive"}) {
		t.Errorf("recommendation for the md loser = %+v", r)
	}
	if r := sumRemediation(s, "greet", mdPath); r == nil || r.Kind != "shadowed" || r.Severity != SeverityInfo || r.ActivePath != jsonPath {
		t.Errorf("remediation for the md loser = %+v", r)
	}
	// A healthy override with launches: "overrides 1 lower-priority recipe(s)".
	over := filepath.Join(root, "utility-git-status.json")
	if r := sumRecommendation(s, over); r == nil || r.Reason != "overrides 1 lower-priority recipe(s)" ||
		!reflect.DeepEqual(r.Actions, []string{"keep override", "merge", "delete", "archive"}) {
		t.Errorf("recommendation for the override = %+v", r)
	}
	if r := sumRemediation(s, "utility-git-status", over); r != nil {
		t.Errorf("a healthy override needs no remediation, got %+v", r)
	}
	if r := sumRemediation(s, "utility-git-status", "pkg:utility-git-status.json"); r == nil || r.Kind != "shadowed" || r.ActivePath != over {
		t.Errorf("remediation for the packaged loser = %+v", r)
	}
	if d := sumDetail(s, "Recipe utility-git-status shadows 1 lower-priority recipe(s)"); d == nil || d.Action != "confirm the active override or rename one recipe" || d.Path != over {
		t.Errorf("shadows detail = %+v", d)
	}
	if len(s.Invalid) != 0 || len(s.Disabled) != 0 {
		t.Errorf("invalid=%v disabled=%v, want none", s.Invalid, s.Disabled)
	}
}

func TestSummaryInvalidWinnerBlocksPackagedFallback(t *testing.T) {
	agent := sumAgent(t, map[string]string{"utility-git-log.json": `{"template": `})
	s := sumOf(t, agent)
	path := filepath.Join(UserRoot(agent), "utility-git-log.json")

	a := sumActive(s, "utility-git-log")
	if a == nil || a.Path != path || !a.Invalid || a.Tool {
		t.Fatalf("active = %+v, want the invalid user file, not a tool", a)
	}
	if s.TopAction == nil || s.TopAction.Kind != "blocking_invalid" || s.TopAction.Severity != SeverityError ||
		s.TopAction.BlockedFallback != "pkg:utility-git-log.json" || s.TopAction.Action != actionFixInvalid {
		t.Fatalf("top_action = %+v", s.TopAction)
	}
	if len(s.Invalid) != 1 || s.Invalid[0].Path != path || len(s.Invalid[0].Diagnostics) == 0 ||
		!strings.HasPrefix(s.Invalid[0].Diagnostics[0], "Invalid recipe: "+path+": malformed JSON") {
		t.Errorf("invalid = %+v", s.Invalid)
	}
	if r := sumRecommendation(s, path); r == nil || r.Reason != "invalid recipe blocks lower-priority entries with the same id" {
		t.Errorf("recommendation = %+v", r)
	}
	if d := sumDetail(s, "Recipe utility-git-log is invalid and blocks lower-priority recipes"); d == nil || d.Severity != SeverityError {
		t.Errorf("blocks detail = %+v", d)
	}
	for _, d := range s.Diagnostics {
		if strings.Count(d, path) > 1 {
			t.Errorf("diagnostic repeats the path: %q", d)
		}
	}
	if s.DiagnosticDetails[0].Severity != SeverityError {
		t.Errorf("details not sorted errors first: %+v", s.DiagnosticDetails)
	}
	for _, m := range s.IntegrityManifest {
		if m.Path == path && (!m.Invalid || m.Tool || !m.Active || m.Shadowed) {
			t.Errorf("manifest record = %+v", m)
		}
		if m.Path == "pkg:utility-git-log.json" && (!m.Shadowed || m.Active) {
			t.Errorf("packaged manifest record = %+v", m)
		}
	}
	if got := s.NextActionsFor("status"); len(got) == 0 || got[0] != "inspect target=recipes view=doctor" {
		t.Errorf("status next actions = %v", got)
	}
	if got := s.NextActionsFor("doctor"); len(got) == 0 || got[0] != actionFixInvalid {
		t.Errorf("doctor next actions = %v", got)
	}
}

func TestSummaryDisabledWinnerBlocksPackagedFallback(t *testing.T) {
	agent := sumAgent(t, map[string]string{
		"utility-jsonl-tail.json": `{"disabled":true,"template":"tail {file}"}`,
		"off.json":                `{"disabled":true,"template":"echo off"}`,
	})
	s := sumOf(t, agent)
	root := UserRoot(agent)
	blocking := filepath.Join(root, "utility-jsonl-tail.json")

	if r := sumRemediation(s, "utility-jsonl-tail", blocking); r == nil || r.Kind != "blocking_disabled" ||
		r.Severity != SeverityWarning || r.BlockedFallback != "pkg:utility-jsonl-tail.json" {
		t.Errorf("blocking remediation = %+v", r)
	}
	if r := sumRemediation(s, "off", filepath.Join(root, "off.json")); r == nil || r.Kind != "disabled" || r.BlockedFallback != "" {
		t.Errorf("plain disabled remediation = %+v", r)
	}
	want := []SummaryDisabled{{ID: "off", Path: filepath.Join(root, "off.json")}, {ID: "utility-jsonl-tail", Path: blocking}}
	if !reflect.DeepEqual(s.Disabled, want) {
		t.Errorf("disabled = %+v, want %+v", s.Disabled, want)
	}
	if r := sumRecommendation(s, blocking); r == nil || r.Reason != "disabled recipe is retained but not exposed as a tool" {
		t.Errorf("recommendation = %+v", r)
	}
	if a := sumActive(s, "utility-jsonl-tail"); a == nil || a.Tool || !a.Disabled || a.Invalid {
		t.Errorf("active = %+v", a)
	}
	if d := sumDetail(s, "Recipe utility-jsonl-tail is disabled and blocks lower-priority recipes"); d == nil || d.ID != "utility-jsonl-tail" {
		t.Errorf("blocks detail = %+v", d)
	}
}

func TestSummaryRemediationRank(t *testing.T) {
	agent := sumAgent(t, map[string]string{
		"a-shadowed.json":         `{"template":"echo a"}`,
		"a-shadowed.md":           "---\ntemplate: echo a\n---\n",
		"b-disabled.json":         `{"disabled":true,"template":"echo b"}`,
		"c-risky.json":            `{"template":"bash -c 'echo {x}'"}`,
		"utility-git-status.json": `{"disabled":true,"template":"git status"}`,
		"z-invalid.json":          `{"description":"no template"}`,
		"utility-git-log.md":      "no frontmatter",
	})
	s := sumOf(t, agent)
	var kinds []string
	for _, r := range s.Remediations {
		kinds = append(kinds, r.Kind+":"+r.ID)
	}
	want := []string{
		"blocking_invalid:utility-git-log",
		"invalid:z-invalid",
		"blocking_disabled:utility-git-status",
		"risky_shell_boundary:c-risky",
		"disabled:b-disabled",
		"shadowed:a-shadowed",
		"shadowed:utility-git-log",
		"shadowed:utility-git-status",
	}
	if !reflect.DeepEqual(kinds, want) {
		t.Fatalf("remediations =\n%v\nwant\n%v", kinds, want)
	}
	if s.TopAction == nil || !reflect.DeepEqual(*s.TopAction, s.Remediations[0]) {
		t.Errorf("top_action %+v is not remediations[0]", s.TopAction)
	}
	risky := s.Remediations[3]
	if risky.Severity != SeverityWarning || !reflect.DeepEqual(risky.RiskLabels, []string{"risk.shell", "risk.eval"}) ||
		!strings.Contains(risky.Reason, "invokes bash") || risky.Action != actionRiskyBoundry {
		t.Errorf("risky remediation = %+v", risky)
	}
	if d := sumDetail(s, "must define template"); d == nil || d.Severity != SeverityError || d.Action != "add a template field or remove the recipe" {
		t.Errorf("must-define detail = %+v", d)
	}
	if d := sumDetail(s, "Markdown recipe must start with frontmatter"); d == nil || d.Severity != SeverityError {
		t.Errorf("markdown detail = %+v", d)
	}
	// Details: errors, then warnings, then info; by message within each.
	for i := 1; i < len(s.DiagnosticDetails); i++ {
		a, b := s.DiagnosticDetails[i-1], s.DiagnosticDetails[i]
		if severityRank(a.Severity) > severityRank(b.Severity) ||
			a.Severity == b.Severity && a.Message > b.Message {
			t.Errorf("details out of order at %d: %q (%s) before %q (%s)", i, a.Message, a.Severity, b.Message, b.Severity)
		}
	}
}

func TestDiagnosticSeverityAndAction(t *testing.T) {
	for _, c := range []struct{ msg, severity, action string }{
		{"Invalid recipe: /r/x.json: malformed JSON: unexpected EOF", "error", "fix recipe syntax or archive the file"},
		{"Failed to load recipe /r/x: boom", "error", "inspect the recipe and fix or archive it if unexpected"},
		{"Invalid recipe: /r/x: cyclic recipe import: a -> b -> a", "error", "break the import cycle"},
		{"Invalid recipe: /r/x: recipe file exceeds size limit 1048576 bytes", "error", "split large prompt or data into separate files"},
		{"Invalid recipe: /r/x: recipe must define template", "error", "add a template field or remove the recipe"},
		{"Command template repeat must be a positive integer", "error", "use a positive repeat count or an array-typed repeat source"},
		{"Recipe root is world-writable; review permissions: /r", "warning", "tighten recipe root permissions"},
		{"Recipe root is group-writable; review ownership and permissions: /r", "warning", "tighten recipe root permissions"},
		{"Recipe /r/x: bash: invokes bash; shell scripts are trusted", "warning", "audit the trusted shell boundary and keep only if intentional"},
		{"Recipe /r/x: node: invokes node eval mode; code strings", "warning", "inspect the recipe and fix or archive it if unexpected"},
		{"Recipe /r/x: rm: removes filesystem paths; destructive", "warning", "inspect the recipe and fix or archive it if unexpected"},
		{"Markdown recipe /r/x.md is shadowed by JSON recipe /r/x.json", "info", "fix recipe syntax or archive the file"},
		{"Markdown recipe /r/x.md has no fence", "info", "fix frontmatter and add a fenced template or recipe block"},
		{"Recipe x shadows 1 lower-priority recipe(s)", "info", "confirm the active override or rename one recipe"},
		{"Recipe x is disabled and blocks lower-priority recipes", "info", "keep disabled intentionally or delete/archive the file"},
		{"something else", "info", "inspect the recipe and fix or archive it if unexpected"},
	} {
		if got := DiagnosticSeverity(c.msg); got != c.severity {
			t.Errorf("severity(%q) = %s, want %s", c.msg, got, c.severity)
		}
		if got := DiagnosticAction(c.msg); got != c.action {
			t.Errorf("action(%q) = %q, want %q", c.msg, got, c.action)
		}
	}
}

func TestSummaryRootPermissions(t *testing.T) {
	for _, c := range []struct {
		mode os.FileMode
		want string
	}{
		{0o777, "Recipe root is world-writable; review permissions: "},
		{0o775, "Recipe root is group-writable; review ownership and permissions: "},
	} {
		agent := sumAgent(t, map[string]string{"ok.json": `{"template":"echo ok","usage":{"calls":1}}`})
		root := UserRoot(agent)
		if err := os.Chmod(root, c.mode); err != nil {
			t.Fatal(err)
		}
		s := sumOf(t, agent)
		d := sumDetail(s, c.want+root)
		if d == nil || d.Severity != SeverityWarning || d.Action != "tighten recipe root permissions" || d.ID != "" || d.Path != "" {
			t.Errorf("mode %o: detail = %+v", c.mode, d)
		}
		if _, warnings, _ := s.SeverityCounts(); warnings == 0 {
			t.Errorf("mode %o: no warnings counted", c.mode)
		}
		if len(s.Remediations) != 0 {
			t.Errorf("mode %o: root permissions are not a per-recipe remediation: %+v", c.mode, s.Remediations)
		}
	}
}

func TestSummaryRecommendationsFromUsage(t *testing.T) {
	agent := sumAgent(t, map[string]string{
		"fresh.json": `{"template":"echo fresh"}`,
		"used.json":  `{"template":"echo used","usage":{"calls":3,"tool_calls":3}}`,
	})
	s := sumOf(t, agent)
	fresh := filepath.Join(UserRoot(agent), "fresh.json")
	if r := sumRecommendation(s, fresh); r == nil || r.Reason != "active user tool has no recorded launches" ||
		!reflect.DeepEqual(r.Actions, []string{"keep as tool", "move out of tool root", "delete", "archive"}) {
		t.Errorf("fresh recommendation = %+v", r)
	}
	if r := sumRecommendation(s, filepath.Join(UserRoot(agent), "used.json")); r != nil {
		t.Errorf("a used tool needs no recommendation, got %+v", r)
	}
	for _, r := range s.Recommendations {
		if IsPackaged(r.Path) {
			t.Errorf("packaged components get no recommendation: %+v", r)
		}
	}
}

func TestSummaryUnresolvableImportIsInvalid(t *testing.T) {
	agent := sumAgent(t, map[string]string{
		"broken.json":   `{"imports":{"x":"missing-recipe"},"template":{"name":"x"}}`,
		"badnode.json":  `{"template":{"template":"echo","repeat":0}}`,
		"composed.json": `{"imports":{"st":"utility-git-status","w":{"from":"./worker.json"}},"template":[{"name":"st"},{"name":"w"}],"usage":{"calls":1}}`,
		"worker.json":   `{"template":"rm -rf {dir}","usage":{"calls":1}}`,
	})
	s := sumOf(t, agent)
	root := UserRoot(agent)
	for _, id := range []string{"broken", "badnode"} {
		a := sumActive(s, id)
		if a == nil || !a.Invalid || a.Tool {
			t.Errorf("%s: active = %+v, want invalid, not a tool", id, a)
		}
	}
	if d := sumDetail(s, "recipe import not found"); d == nil || d.Severity != SeverityError || d.Path != filepath.Join(root, "broken.json") {
		t.Errorf("import detail = %+v", d)
	}
	c := sumActive(s, "composed")
	if c == nil || c.Invalid || !c.Tool {
		t.Fatalf("composed = %+v", c)
	}
	if !reflect.DeepEqual(c.RiskLabels, []string{"risk.destructive_fs"}) {
		t.Errorf("composed risk labels = %v, want the imported leaf's", c.RiskLabels)
	}
	want := map[string]any{"st": "utility-git-status", "w": map[string]any{"from": "./worker.json"}}
	if !reflect.DeepEqual(c.Imports, want) {
		t.Errorf("imports = %#v, want as written", c.Imports)
	}
}

func TestResolverRisk(t *testing.T) {
	agent := sumAgent(t, nil)
	rv := &Resolver{AgentDir: agent, Home: t.TempDir()}
	for _, c := range []struct {
		recipe string
		labels []string
		warns  int
	}{
		{`{"template":"git -C {repo} status"}`, nil, 0},
		{`{"async":true,"template":"echo hi"}`, []string{"risk.long_running"}, 0},
		// every leaf counts: a recover node and a leaf behind when
		{`{"template":{"template":[{"template":"curl {url}","when":"fetch"},"echo done"],"recover":"rm -rf {tmp}"}}`,
			[]string{"risk.destructive_fs", "risk.network"}, 1},
		{`{"template":{"label":"deploy","template":"bash -lc '{script}'"}}`, []string{"risk.shell", "risk.eval"}, 1},
	} {
		r, err := Parse([]byte(c.recipe), filepath.Join(UserRoot(agent), "r.json"))
		if err != nil {
			t.Fatal(err)
		}
		labels, warnings, err := rv.Risk(r)
		if err != nil {
			t.Fatalf("%s: %v", c.recipe, err)
		}
		if !reflect.DeepEqual(labels, c.labels) || len(warnings) != c.warns {
			t.Errorf("%s: labels %v warnings %q, want %v and %d warning(s)", c.recipe, labels, warnings, c.labels, c.warns)
		}
	}
}

// The summary orders labels like the template engine: every label the
// engine can produce is in riskLabelOrder, in the engine's order.
func TestRiskLabelOrderMatchesEngine(t *testing.T) {
	argvs := [][]string{
		{"bash", "-c", "x"}, {"rm", "-rf", "/"}, {"cp", "a", "/etc"}, {"gh", "pr", "create"},
		{"pass", "show"}, {"curl", "x"}, {"sleep", "1"}, {"systemctl", "restart"},
		{"bash", "-c", "curl x; sleep 1", "--token", "{api_key}", "serve"},
	}
	pos := map[string]int{}
	for i, l := range riskLabelOrder {
		pos[l] = i
	}
	seen := map[string]bool{}
	for _, argv := range argvs {
		labels, _ := template.RiskLabels(argv, "")
		for i, l := range labels {
			if _, ok := pos[l]; !ok {
				t.Fatalf("engine label %s is missing from riskLabelOrder", l)
			}
			if i > 0 && pos[labels[i-1]] > pos[l] {
				t.Errorf("engine orders %s before %s; riskLabelOrder does not", labels[i-1], l)
			}
			seen[l] = true
		}
	}
	if len(seen) != len(riskLabelOrder) {
		t.Errorf("test commands produced %d of %d labels: %v", len(seen), len(riskLabelOrder), seen)
	}
}

func TestSummaryRiskSummaryOrder(t *testing.T) {
	agent := sumAgent(t, map[string]string{
		"a.json": `{"async":true,"template":"curl {url}","usage":{"calls":1}}`,
		"b.json": `{"async":true,"template":"echo b","usage":{"calls":1}}`,
		"c.json": `{"template":"wget {url}","usage":{"calls":1}}`,
		"d.json": `{"template":"bash run.sh","usage":{"calls":1}}`,
	})
	s := sumOf(t, agent)
	// The packaged async recipes (long-running actors and pipelines) count
	// too, and so do the packaged users of the validation wrapper.
	shellUsers := []string{"pipeline-release-readiness", "pipeline-repo-health", "utility-validation-wrapper"}
	want := []RiskCount{
		{Label: "risk.long_running", Count: 13, Recipes: []string{"a", "actor-worker", "b", "locker", "pipeline-artifact-report",
			"pipeline-checkpoint-continuation", "pipeline-quorum-review", "pipeline-release-readiness", "pipeline-repo-health",
			"room-swarm", "subagent-checkpoint", "subagent-followup", "subagent-review-coordinator"}},
		{Label: "risk.shell", Count: 4, Recipes: append([]string{"d"}, shellUsers...)},
		{Label: "risk.eval", Count: 3, Recipes: shellUsers},
		{Label: "risk.network", Count: 2, Recipes: []string{"a", "c"}},
	}
	if !reflect.DeepEqual(s.RiskSummary, want) {
		t.Errorf("risk_summary = %+v, want %+v", s.RiskSummary, want)
	}
}

func TestSummaryIntegrityManifest(t *testing.T) {
	content := `{"template":"echo hi","usage":{"calls":1}}`
	agent := sumAgent(t, map[string]string{
		"hi.json":                 content,
		"utility-git-status.json": `{"template":"git status"}`,
	})
	s := sumOf(t, agent)
	root := UserRoot(agent)
	sum := sha256.Sum256([]byte(content))
	var hi *IntegrityRecord
	for i := range s.IntegrityManifest {
		m := s.IntegrityManifest[i]
		if i > 0 {
			p := s.IntegrityManifest[i-1]
			if p.ID > m.ID || p.ID == m.ID && p.Path > m.Path {
				t.Errorf("manifest not sorted by id, path at %d: %s %s", i, p.Path, m.Path)
			}
		}
		if IsPackaged(m.Path) && (m.Root != "pkg:" || m.Tool || len(m.SHA256) != 64 || m.Size == 0) {
			t.Errorf("packaged record = %+v", m)
		}
		if m.Path == filepath.Join(root, "hi.json") {
			hi = &s.IntegrityManifest[i]
		}
	}
	want := IntegrityRecord{Active: true, ID: "hi", Path: filepath.Join(root, "hi.json"), Root: root,
		SHA256: hex.EncodeToString(sum[:]), Size: int64(len(content)), Tool: true}
	if hi == nil || *hi != want {
		t.Errorf("hi record = %+v, want %+v", hi, want)
	}
	// Every discovered file is pinned once.
	g, _ := Discover(agent)
	if len(s.IntegrityManifest) != len(g.Entries) {
		t.Errorf("manifest has %d records for %d files", len(s.IntegrityManifest), len(g.Entries))
	}
	b, _ := json.Marshal(s.IntegrityManifest[0])
	for _, k := range []string{"active", "disabled", "id", "invalid", "path", "root", "sha256", "shadowed", "size", "tool"} {
		if !strings.Contains(string(b), `"`+k+`":`) {
			t.Errorf("manifest JSON lacks %s: %s", k, b)
		}
	}
}

func TestSummaryDraftsAndNextActions(t *testing.T) {
	agent := sumAgent(t, map[string]string{
		"ok.json":            `{"template":"echo ok","usage":{"calls":1}}`,
		"drafts/run-a.json":  `{"async":true,"description":"Draft recipe captured from spawn run run-a","template":"rm -rf {dir}"}`,
		"drafts/broken.json": `{"template":`,
	})
	s := sumOf(t, agent)
	if len(s.Drafts) != 2 {
		t.Fatalf("drafts = %+v", s.Drafts)
	}
	var firstValid *Draft // next= replays a draft that can run
	for _, d := range s.Drafts {
		if firstValid == nil && d.Valid {
			firstValid = d
		}
		if d.ID == "run-a" && (!reflect.DeepEqual(d.RiskLabels, []string{"risk.destructive_fs", "risk.long_running"}) || d.SourceRun != "run-a") {
			t.Errorf("draft run-a = %+v", d)
		}
		if d.ID == "broken" && (d.Valid || len(d.RiskLabels) != 0) {
			t.Errorf("draft broken = %+v", d)
		}
	}
	// Drafts are never tools or active recipes.
	if a := sumActive(s, "run-a"); a != nil {
		t.Errorf("a draft became active: %+v", a)
	}
	if firstValid == nil || firstValid.ID != "run-a" {
		t.Fatalf("first valid draft = %+v, want run-a", firstValid)
	}
	want := []string{"inspect target=recipes view=summary verbose=true", "spawn file=" + firstValid.Path}
	if !reflect.DeepEqual(s.NextActions, want) {
		t.Errorf("next actions = %v, want %v", s.NextActions, want)
	}
	if got := s.NextActionsFor("doctor"); !reflect.DeepEqual(got, want) {
		t.Errorf("doctor next actions without a top action = %v, want %v", got, want)
	}
	s.Diagnostics = append(s.Diagnostics, "x")
	s.TopAction = &Remediation{Action: "do it"}
	if got := s.NextActionsFor("status"); len(got) != 3 || got[0] != "inspect target=recipes view=doctor" {
		t.Errorf("status next actions = %v", got)
	}
	if got := s.NextActionsFor("doctor"); len(got) != 3 || got[0] != "do it" {
		t.Errorf("doctor next actions = %v", got)
	}
	s.TopAction.Action = "inspect target=recipes view=summary verbose=true"
	if got := s.NextActionsFor("doctor"); len(got) != 2 {
		t.Errorf("next actions not deduplicated: %v", got)
	}
}

func TestSummaryEmptyUserRoot(t *testing.T) {
	s := sumOf(t, t.TempDir())
	if len(s.Active) == 0 || len(s.Remediations) != 0 || len(s.Recommendations) != 0 || s.TopAction != nil || len(s.NextActions) != 0 {
		t.Errorf("packaged-only summary: active=%d remediations=%v recommendations=%v top=%v next=%v",
			len(s.Active), s.Remediations, s.Recommendations, s.TopAction, s.NextActions)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	// Async recipes are long-running; the validation wrapper (a trusted
	// bash boundary) and the pipelines that import it are shell and eval
	// (PARITY A7); nothing else carries a label.
	for _, rc := range s.RiskSummary {
		switch rc.Label {
		case "risk.long_running":
		case "risk.shell", "risk.eval":
			if strings.Join(rc.Recipes, ",") != "pipeline-release-readiness,pipeline-repo-health,utility-validation-wrapper" {
				t.Errorf("packaged recipes carry %s: %v (only the validation wrapper and its importers)", rc.Label, rc.Recipes)
			}
		default:
			t.Errorf("packaged recipes carry %s: %v", rc.Label, rc.Recipes)
		}
	}
	for _, k := range []string{"shadowed", "invalid", "disabled", "recommendations", "remediations", "diagnostics", "diagnostic_details", "drafts", "next_actions"} {
		if !strings.Contains(string(b), `"`+k+`":[]`) {
			t.Errorf("%s is not an empty list in %s", k, b)
		}
	}
	if strings.Contains(string(b), "top_action") {
		t.Errorf("top_action present without remediations")
	}
}
