package verbs

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/pi-actors/pi-actors/recipes"
)

// Bounds of the recipe views' text.
const (
	doctorActionChars     = 72 // action and blocked-fallback previews
	doctorRemediations    = 8  // remediation lines
	doctorGlobalDiags     = 4  // unattributed error/warning lines
	doctorMessageChars    = 160
	doctorPathChars       = 240 // a remediation's file
	doctorErrorChars      = 320 // an invalid recipe's load error (it names the file too)
	summaryRecipeLines    = 24
	summaryDraftLines     = 5
	descriptionChars      = 160
	doctorTopRisks        = 4
	remediationLabelCount = 4
)

// inspectRecipes answers target=recipes: the discovery summary of the
// user root and the packaged library, in the requested view. The details
// are the full summary in every view.
func inspectRecipes(_ context.Context, env *Env, q *inspectQuery) (*inspectOutput, error) {
	g, err := recipes.Discover(env.AgentDir)
	if err != nil {
		return nil, err
	}
	s := recipes.Summarize(g, env.resolver())
	s.FlagReserved(Names())
	s.NextActions = s.NextActionsFor(q.view)
	var text string
	switch q.view {
	case "status":
		text = recipesStatusLine(s)
	case "summary":
		text = recipesSummaryText(s)
	case "doctor":
		text = recipesDoctorText(s)
	case "imports":
		text = recipesImportsText(s)
	}
	return &inspectOutput{text: text, details: s}, nil
}

// recipesStatusLine is `recipes active=N drafts=N shadowed=N invalid=N
// disabled=N recommendations=N diagnostics=N[ next=…]`.
func recipesStatusLine(s *recipes.Summary) string {
	return fmt.Sprintf("recipes active=%d drafts=%d shadowed=%d invalid=%d disabled=%d recommendations=%d diagnostics=%d%s",
		len(s.Active), len(s.Drafts), len(s.Shadowed), len(s.Invalid), len(s.Disabled), len(s.Recommendations), len(s.Diagnostics), inspectNext(s.NextActions))
}

// recipesSummaryText is the status line, then one line per active recipe
// (user-root ones first, bounded) and per draft (bounded).
func recipesSummaryText(s *recipes.Summary) string {
	lines := []string{recipesStatusLine(s)}
	active := append([]recipes.SummaryActive{}, s.Active...)
	sort.SliceStable(active, func(i, j int) bool {
		return !recipes.IsPackaged(active[i].Path) && recipes.IsPackaged(active[j].Path)
	})
	for i, e := range active {
		if i == summaryRecipeLines {
			lines = append(lines, fmt.Sprintf("(+%d more recipes; inspect target=recipes view=summary verbose=true lists all)", len(active)-i))
			break
		}
		line := fmt.Sprintf("recipe=%s tool=%t", inspectPreview(e.ID, doctorPathChars), e.Tool)
		if e.Invalid {
			line += " invalid=true"
		}
		if e.Disabled {
			line += " disabled=true"
		}
		if len(e.Shadows) > 0 {
			line += fmt.Sprintf(" shadows=%d", len(e.Shadows))
		}
		if len(e.RiskLabels) > 0 {
			line += " risks=" + strings.Join(e.RiskLabels, ",")
		}
		lines = append(lines, line+" path="+inspectPreview(e.Path, doctorPathChars))
	}
	for i, d := range s.Drafts {
		if i == summaryDraftLines {
			lines = append(lines, fmt.Sprintf("(+%d more drafts; inspect target=recipes view=summary verbose=true lists all)", len(s.Drafts)-i))
			break
		}
		line := fmt.Sprintf("draft=%s valid=%t", inspectPreview(d.ID, doctorPathChars), d.Valid)
		if d.SourceRun != "" {
			line += " source_run=" + d.SourceRun
		}
		if len(d.RiskLabels) > 0 {
			line += " risks=" + strings.Join(d.RiskLabels, ",")
		}
		lines = append(lines, line+" path="+inspectPreview(d.Path, doctorPathChars))
	}
	return strings.Join(lines, "\n")
}

// recipesDoctorText is the severity line, the top action, then the
// ranked remediations and the registry-wide problems no remediation
// covers (root permissions), all bounded.
func recipesDoctorText(s *recipes.Summary) string {
	errs, warns, info := s.SeverityCounts()
	risks := 0
	var top []string
	for i, rc := range s.RiskSummary {
		risks += rc.Count
		if i < doctorTopRisks {
			top = append(top, fmt.Sprintf("%s:%d", rc.Label, rc.Count))
		}
	}
	first := fmt.Sprintf("recipes doctor errors=%d warnings=%d info=%d actions=%d recommendations=%d risks=%d",
		errs, warns, info, len(s.Remediations), len(s.Recommendations), risks)
	if len(top) > 0 {
		first += " top_risks=" + strings.Join(top, ",")
	}
	lines := []string{first + inspectNext(s.NextActions)}
	if t := s.TopAction; t != nil {
		lines = append(lines, fmt.Sprintf("top severity=%s kind=%s id=%s action=%s", t.Severity, t.Kind, t.ID, inspectPreview(t.Action, doctorActionChars)))
	}
	for i, m := range s.Remediations {
		if i == doctorRemediations {
			lines = append(lines, fmt.Sprintf("(+%d more remediations; inspect target=recipes view=doctor verbose=true lists all)", len(s.Remediations)-i))
			break
		}
		line := fmt.Sprintf("%s kind=%s id=%s", m.Severity, m.Kind, m.ID)
		if m.Path != "" {
			line += " path=" + inspectPreview(m.Path, doctorPathChars)
		}
		if m.BlockedFallback != "" {
			line += " blocked=" + inspectPreview(m.BlockedFallback, doctorActionChars)
		}
		if len(m.RiskLabels) > 0 {
			labels := m.RiskLabels
			if len(labels) > remediationLabelCount {
				labels = labels[:remediationLabelCount]
			}
			line += " labels=" + strings.Join(labels, ",")
		}
		line += " action=" + inspectPreview(m.Action, doctorActionChars)
		switch {
		case m.Error != "":
			line += " error=" + inspectPreview(m.Error, doctorErrorChars)
		case m.Kind == "unknown_field":
			line += " reason=" + inspectPreview(m.Reason, doctorMessageChars)
		}
		lines = append(lines, line)
	}
	// A recipe's error or warning no remediation line says (one line per
	// recipe: a recipe with an unknown field and a risky command showed
	// only the field), so the lines add up to the counts above.
	// (An error line says why its recipe is invalid: the recipe's error
	// diagnostic, worded otherwise, is that.)
	said := map[string]bool{}
	for _, m := range s.Remediations {
		said[m.Path+"\x00"+m.Reason] = true
		if m.Severity == recipes.SeverityError {
			said[m.Path+"\x00error"] = true
		}
	}
	extra := 0
	for _, d := range s.DiagnosticDetails {
		if d.Path == "" || d.Severity == recipes.SeverityInfo || said[d.Path+"\x00"+d.Message] ||
			said[d.Path+"\x00"+strings.TrimPrefix(d.Message, "Recipe "+d.Path+": ")] ||
			d.Severity == recipes.SeverityError && said[d.Path+"\x00error"] {
			continue
		}
		if extra == doctorGlobalDiags {
			lines = append(lines, "(more diagnostics: inspect target=recipes view=doctor --json lists diagnostic_details)")
			break
		}
		extra++
		lines = append(lines, fmt.Sprintf("%s kind=diagnostic id=%s path=%s action=%s message=%s", d.Severity, d.ID, inspectPreview(d.Path, doctorPathChars),
			inspectPreview(d.Action, doctorActionChars), inspectPreview(strings.TrimPrefix(d.Message, "Recipe "+d.Path+": "), doctorMessageChars)))
	}
	shown := 0
	for _, d := range s.DiagnosticDetails {
		if d.Path != "" || d.Severity == recipes.SeverityInfo {
			continue
		}
		if shown == doctorGlobalDiags {
			break
		}
		shown++
		lines = append(lines, fmt.Sprintf("%s kind=registry action=%s message=%s", d.Severity, inspectPreview(d.Action, doctorActionChars), inspectPreview(d.Message, doctorMessageChars)))
	}
	return strings.Join(lines, "\n")
}

// recipesImportsText is one `recipe=<id> alias=<alias> from=<from>` line
// per import of an active recipe, or `(no recipe imports)`.
func recipesImportsText(s *recipes.Summary) string {
	var lines []string
	for _, e := range s.Active {
		imports, ok := e.Imports.(map[string]any)
		if !ok {
			continue
		}
		aliases := make([]string, 0, len(imports))
		for alias := range imports {
			aliases = append(aliases, alias)
		}
		sort.Strings(aliases)
		for _, alias := range aliases {
			from := ""
			switch b := imports[alias].(type) {
			case string:
				from = b
			case map[string]any:
				from, _ = b["from"].(string)
			}
			lines = append(lines, fmt.Sprintf("recipe=%s alias=%s from=%s", inspectPreview(e.ID, doctorPathChars), inspectPreview(alias, doctorPathChars), inspectPreview(from, doctorPathChars)))
		}
	}
	if len(lines) == 0 {
		return "(no recipe imports)"
	}
	return strings.Join(lines, "\n")
}

// toolDetails is what inspect shows of a recipe tool: its name,
// description, parameter schema and prompt snippet.
type toolDetails struct {
	Name          string         `json:"name"`
	Description   string         `json:"description"`
	Parameters    map[string]any `json:"parameters"`
	PromptSnippet string         `json:"promptSnippet"`
}

// inspectTool answers target=tool:<name> for the recipe tools of the
// user root (active, valid, enabled recipes there).
func inspectTool(_ context.Context, env *Env, q *inspectQuery) (*inspectOutput, error) {
	name := q.target.id
	g, err := recipes.Discover(env.AgentDir)
	if err != nil {
		return nil, err
	}
	id, err := g.Resolve(name, (*recipes.Entry).Tool)
	if err != nil {
		return nil, err
	}
	e, ok := g.Active[id]
	if !ok {
		return nil, toolNotFound(g, name, g.Active[name])
	}
	name = id
	tool, err := env.resolver().Tool(e.Recipe)
	if err != nil {
		return nil, err
	}
	d := toolDetails{Name: name, Description: e.Recipe.Description, Parameters: tool.Schema(), PromptSnippet: "Execute template recipe: " + name}
	if d.Description == "" {
		d.Description = "Execute template recipe: " + name
	}
	if e.Recipe.Async {
		d.PromptSnippet = "Start async template recipe: " + name
	}
	if q.view == "schema" {
		return &inspectOutput{text: prettyJSON(d), details: d, textIsJSON: true}, nil
	}
	var args, required []string
	for _, p := range tool.Params {
		args = append(args, p.Name)
		if p.Required {
			required = append(required, p.Name)
		}
	}
	text := fmt.Sprintf("tool=%s description=%s args=%s required=%s%s", name, inspectPreview(d.Description, descriptionChars),
		strings.Join(args, ","), strings.Join(required, ","), inspectNext([]string{"inspect target=tool:" + name + " view=schema"}))
	return &inspectOutput{text: text, details: d}, nil
}

// toolNotFound explains why name is not a tool: no such recipe, a
// packaged component, or an invalid or disabled user recipe.
func toolNotFound(g *recipes.Registry, name string, e *recipes.Entry) error {
	ce := &Error{Exit: ExitNoInput, Code: "not_found", Message: "tool actor not found: " + name,
		Hint: fmt.Sprintf("tools are the recipes in %s; inspect target=recipes view=summary lists them", g.UserRoot)}
	switch {
	case e == nil:
	case e.Invalid():
		ce.Hint = fmt.Sprintf("%s is an invalid recipe (%s); inspect target=recipes view=doctor", name, e.Path)
	case e.Disabled():
		ce.Hint = fmt.Sprintf("%s is disabled (%s); inspect target=recipes view=doctor", name, e.Path)
	case e.Layer != recipes.LayerUser:
		ce.Hint = fmt.Sprintf("%s is a packaged component, not a tool: run it with pi-actors call %s, or copy it into %s to expose it", name, name, g.UserRoot)
	}
	return ce
}
