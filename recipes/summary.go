package recipes

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/pi-actors/pi-actors/internal/lazyre"

	"github.com/pi-actors/pi-actors/recipes/template"
)

// This file builds the recipe doctor/summary data (`inspect
// target=recipes`): what is active, what is shadowed, invalid or disabled,
// which risks the active graph carries, and what to do about it. It reads
// a Registry and never changes a file.
//
// A recipe counts as valid here only when it loads, its imports resolve
// and its template graph parses. The Registry checks only the first, so a
// recipe with a missing import or a bad node field is reported invalid by
// the summary (diagnostic "Invalid recipe: <path>: <reason>") although
// Lookup still returns it; the call then fails with the same reason.

// Summary is the doctor/summary data of a Registry. Every list is
// non-nil, so JSON shows [] rather than null.
type Summary struct {
	Active            []SummaryActive      `json:"active"`
	Shadowed          []SummaryShadowed    `json:"shadowed"`
	Invalid           []SummaryInvalid     `json:"invalid"`
	Disabled          []SummaryDisabled    `json:"disabled"`
	RiskSummary       []RiskCount          `json:"risk_summary"`
	Recommendations   []Recommendation     `json:"recommendations"`
	Remediations      []Remediation        `json:"remediations"`
	TopAction         *Remediation         `json:"top_action,omitempty"`
	Diagnostics       []string             `json:"diagnostics"`
	DiagnosticDetails []DiagnosticDetail   `json:"diagnostic_details"`
	IntegrityManifest []IntegrityRecord    `json:"integrity_manifest"`
	Drafts            []*Draft             `json:"drafts"`
	NextActions       []string             `json:"next_actions"`
	entries           map[*Entry]*sumEntry // effective state per entry
}

// SummaryActive is the winner of one id.
type SummaryActive struct {
	ID          string         `json:"id"`
	Path        string         `json:"path"`
	Description string         `json:"description"`
	Tool        bool           `json:"tool"`
	Disabled    bool           `json:"disabled"`
	Invalid     bool           `json:"invalid"`
	Shadows     []string       `json:"shadows"`
	RiskLabels  []string       `json:"risk_labels,omitempty"`
	Imports     any            `json:"imports,omitempty"` // as written
	Usage       map[string]any `json:"usage,omitempty"`
}

// SummaryShadowed is a file that lost its id to a higher-priority one.
type SummaryShadowed struct {
	ID         string `json:"id"`
	Path       string `json:"path"`
	ShadowedBy string `json:"shadowedBy"`
}

// SummaryInvalid is a file that cannot be used, with its diagnostics.
type SummaryInvalid struct {
	ID          string   `json:"id"`
	Path        string   `json:"path"`
	Diagnostics []string `json:"diagnostics"`
}

// SummaryDisabled is a file with disabled: true.
type SummaryDisabled struct {
	ID   string `json:"id"`
	Path string `json:"path"`
}

// RiskCount is how many recipe files carry a risk label, and which ids.
type RiskCount struct {
	Label   string   `json:"label"`
	Count   int      `json:"count"`
	Recipes []string `json:"recipes"`
}

// Recommendation is the first cleanup rule that matches a file.
type Recommendation struct {
	ID      string   `json:"id"`
	Path    string   `json:"path"`
	Reason  string   `json:"reason"`
	Actions []string `json:"actions"`
}

// Remediation is a problem worth acting on, ranked (see remediationKinds).
type Remediation struct {
	ID              string   `json:"id"`
	Kind            string   `json:"kind"`
	Severity        string   `json:"severity"`
	Path            string   `json:"path"`
	BlockedFallback string   `json:"blocked_fallback,omitempty"`
	ActivePath      string   `json:"active_path,omitempty"`
	RiskLabels      []string `json:"risk_labels,omitempty"`
	Reason          string   `json:"reason"`
	// Error is why an invalid recipe does not load.
	Error  string `json:"error,omitempty"`
	Action string `json:"action"`
}

// DiagnosticDetail is one diagnostic with its severity and suggested
// action, attributed to a recipe when it is about one.
type DiagnosticDetail struct {
	ID         string   `json:"id,omitempty"`
	Path       string   `json:"path,omitempty"`
	RiskLabels []string `json:"risk_labels,omitempty"`
	Action     string   `json:"action"`
	Message    string   `json:"message"`
	Severity   string   `json:"severity"`
}

// IntegrityRecord pins one discovered file: its digest, size and state.
type IntegrityRecord struct {
	Active   bool   `json:"active"`
	Disabled bool   `json:"disabled"`
	ID       string `json:"id"`
	Invalid  bool   `json:"invalid"`
	Path     string `json:"path"`
	Root     string `json:"root"`
	SHA256   string `json:"sha256"`
	Shadowed bool   `json:"shadowed"`
	Size     int64  `json:"size"`
	Tool     bool   `json:"tool"`
}

// Severities of diagnostics and remediations.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
	SeverityInfo    = "info"
)

// Remediation kinds, in rank order: the first is the most urgent.
var remediationKinds = []string{"blocking_invalid", "invalid", "blocking_disabled", "reserved_name", "unknown_field", "risky_shell_boundary", "disabled", "shadowed"}

// Remediation actions.
const (
	actionFixInvalid   = "fix recipe syntax/config, or disable/delete/archive it to restore fallback"
	actionDisabled     = "keep disabled intentionally, re-enable, or delete/archive the file"
	actionRiskyBoundry = "audit trusted command boundary; keep only if the recipe is local and intentional"
	actionShadowed     = "keep as fallback/component, merge, rename, delete, or archive"
)

// riskLabelOrder is the fixed order risk labels are reported in; it
// matches the template engine's (a test checks every label it returns is
// listed here).
var riskLabelOrder = []string{
	"risk.shell", "risk.eval", "risk.destructive_fs", "risk.broad_fs_write",
	"risk.external_side_effect", "risk.secret_touching", "risk.network",
	"risk.long_running", "risk.platform_specific",
}

// sumEntry is the effective state of one discovered file.
type sumEntry struct {
	e        *Entry
	invalid  bool
	disabled bool
	tool     bool
	labels   []string
	diags    []string // about this file, in the Registry's wording
}

// Risk returns the advisory risk labels of a recipe (the union over every
// leaf of its resolved graph, in the fixed order; async recipes add
// risk.long_running) and the leaf warnings.
//
// The labels describe the template as written, not one call: each leaf's
// source is split into words and placeholders stay literal ({path} is an
// unresolved path, which the rules count as risky). This covers every leaf
// — recover nodes and leaves behind `when` included — without inventing
// values; planning with made-up values could take other branches, skip
// leaves, or fail on typed arguments.
func (rv *Resolver) Risk(r *Recipe) (labels, warnings []string, err error) {
	res, err := rv.Resolve(r)
	if err != nil {
		return nil, nil, err
	}
	node, err := template.Parse(res.Graph)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %v", ErrInvalid, r.Path, err)
	}
	set := map[string]bool{}
	seen := map[string]bool{}
	node.Walk(func(n *template.Node) {
		if n.Leaf == nil {
			return
		}
		words, err := template.Split(n.Leaf.Source)
		if err != nil {
			words = strings.Fields(n.Leaf.Source)
		}
		ls, ws := template.RiskLabels(words, n.Label)
		for _, l := range ls {
			set[l] = true
		}
		for _, w := range ws {
			if !seen[w] {
				seen[w] = true
				warnings = append(warnings, w)
			}
		}
	})
	if r.Async {
		set["risk.long_running"] = true
	}
	for _, l := range riskLabelOrder {
		if set[l] {
			labels = append(labels, l)
		}
	}
	return labels, warnings, nil
}

// Summarize builds the doctor/summary data of g. rv resolves imports for
// validity and risk labels; nil means a Resolver for g's agent root.
// NextActions are those of the summary view (see NextActionsFor).
func Summarize(g *Registry, rv *Resolver) *Summary {
	if rv == nil {
		home, _ := os.UserHomeDir()
		rv = &Resolver{AgentDir: g.AgentDir, Home: home}
	}
	s := &Summary{entries: map[*Entry]*sumEntry{}}
	var all []*sumEntry
	for _, e := range g.Entries {
		se := evaluate(rv, e)
		s.entries[e] = se
		all = append(all, se)
	}
	s.Diagnostics = mergeDiagnostics(g.Diagnostics, all)
	s.DiagnosticDetails = s.details(g)
	s.Active = []SummaryActive{}
	s.Shadowed = []SummaryShadowed{}
	s.Invalid = []SummaryInvalid{}
	s.Disabled = []SummaryDisabled{}
	s.Recommendations = []Recommendation{}
	s.Remediations = []Remediation{}
	s.IntegrityManifest = []IntegrityRecord{}
	for _, se := range all {
		e := se.e
		if e.Active {
			a := SummaryActive{ID: e.ID, Path: e.Path, Tool: se.tool, Disabled: se.disabled, Invalid: se.invalid,
				Shadows: append([]string{}, e.Shadows...), RiskLabels: se.labels}
			if e.Recipe != nil {
				a.Description = e.Recipe.Description
				if imp, ok := e.Recipe.Raw["imports"]; ok && imp != nil {
					a.Imports = imp
				}
				if len(e.Recipe.Usage) > 0 {
					a.Usage = e.Recipe.Usage
				}
			}
			s.Active = append(s.Active, a)
		} else {
			s.Shadowed = append(s.Shadowed, SummaryShadowed{ID: e.ID, Path: e.Path, ShadowedBy: e.ShadowedBy})
		}
		if se.invalid {
			s.Invalid = append(s.Invalid, SummaryInvalid{ID: e.ID, Path: e.Path, Diagnostics: append([]string{}, se.diags...)})
		}
		if se.disabled {
			s.Disabled = append(s.Disabled, SummaryDisabled{ID: e.ID, Path: e.Path})
		}
		if rec, ok := recommend(se); ok {
			s.Recommendations = append(s.Recommendations, rec)
		}
		if rem, ok := remediate(se); ok {
			s.Remediations = append(s.Remediations, rem)
		}
		s.IntegrityManifest = append(s.IntegrityManifest, integrity(se, g.UserRoot))
	}
	sort.SliceStable(s.Active, func(i, j int) bool { return s.Active[i].ID < s.Active[j].ID })
	sort.SliceStable(s.Shadowed, func(i, j int) bool {
		a, b := s.Shadowed[i], s.Shadowed[j]
		return a.ID < b.ID || a.ID == b.ID && a.Path < b.Path
	})
	sort.SliceStable(s.Invalid, func(i, j int) bool { return s.Invalid[i].ID < s.Invalid[j].ID })
	sort.SliceStable(s.Disabled, func(i, j int) bool { return s.Disabled[i].ID < s.Disabled[j].ID })
	sort.SliceStable(s.Recommendations, func(i, j int) bool {
		a, b := s.Recommendations[i], s.Recommendations[j]
		return a.ID < b.ID || a.ID == b.ID && a.Path < b.Path
	})
	sortRemediations(s.Remediations)
	sort.SliceStable(s.IntegrityManifest, func(i, j int) bool {
		a, b := s.IntegrityManifest[i], s.IntegrityManifest[j]
		return a.ID < b.ID || a.ID == b.ID && a.Path < b.Path
	})
	s.setTop()
	s.RiskSummary = riskSummary(all)
	s.Drafts = draftsWithRisk(rv, g.ListDrafts())
	s.NextActions = s.NextActionsFor("summary")
	return s
}

// evaluate decides the effective state of one file and gathers the
// diagnostics about it.
func evaluate(rv *Resolver, e *Entry) *sumEntry {
	se := &sumEntry{e: e, invalid: e.Invalid(), disabled: e.Disabled()}
	switch {
	case e.Invalid():
		se.diags = append(se.diags, invalidDiag(e.Path, e.Err))
	default:
		for _, w := range e.Recipe.Warnings {
			se.diags = append(se.diags, fmt.Sprintf("Recipe %s: %s", e.Path, w))
		}
		labels, warnings, err := rv.Risk(e.Recipe)
		if err != nil {
			se.invalid = true
			se.diags = append(se.diags, invalidDiag(e.Path, err))
			if e.Active && len(e.Shadows) > 0 {
				se.diags = append(se.diags, fmt.Sprintf("Recipe %s is invalid and blocks lower-priority recipes", e.ID))
			}
			break
		}
		se.labels = labels
		for _, w := range warnings {
			se.diags = append(se.diags, fmt.Sprintf("Recipe %s: %s", e.Path, w))
		}
	}
	if !e.Active && strings.HasSuffix(e.Path, ".md") && strings.HasSuffix(e.ShadowedBy, ".json") && filepath.Dir(e.Path) == filepath.Dir(e.ShadowedBy) {
		se.diags = append(se.diags, fmt.Sprintf("Markdown recipe %s is shadowed by JSON recipe %s", e.Path, e.ShadowedBy))
	}
	se.tool = e.Active && e.Layer == LayerUser && !se.invalid && !se.disabled
	return se
}

// invalidDiag is "Invalid recipe: <path>: <reason>", with the reason
// stripped of the path the error repeats.
func invalidDiag(path string, err error) string {
	return fmt.Sprintf("Invalid recipe: %s: %s", path, reason(path, err))
}

// mergeDiagnostics returns the Registry's diagnostics followed by those
// the summary found on top (resolution failures, leaf risk warnings), each
// once.
func mergeDiagnostics(base []string, all []*sumEntry) []string {
	out := []string{}
	seen := map[string]bool{}
	add := func(d string) {
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	for _, d := range base {
		add(d)
	}
	for _, se := range all {
		for _, d := range se.diags {
			add(d)
		}
	}
	return out
}

// idDiagRe matches the Registry's per-id diagnostics ("Recipe <id> shadows
// …", "Recipe <id> is invalid and blocks …").
var idDiagRe = lazyre.New(`^Recipe (\S+) (?:shadows \d+ |is invalid and blocks |is disabled and blocks )`)

// details attributes every diagnostic to the file (or id) it is about and
// grades it, sorted error < warning < info, then by message.
func (s *Summary) details(g *Registry) []DiagnosticDetail {
	byMsg := map[string]*sumEntry{}
	for _, e := range g.Entries {
		se := s.entries[e]
		for _, d := range se.diags {
			if _, ok := byMsg[d]; !ok {
				byMsg[d] = se
			}
		}
	}
	out := []DiagnosticDetail{}
	for _, msg := range s.Diagnostics {
		d := DiagnosticDetail{Message: msg, Severity: DiagnosticSeverity(msg)}
		se := byMsg[msg]
		if se == nil {
			if m := idDiagRe.FindStringSubmatch(msg); m != nil {
				if w, ok := g.Active[m[1]]; ok {
					se = s.entries[w]
				}
			}
		}
		// The action is chosen by what the message says, not by the path
		// it names (a.json is no JSON syntax error).
		text := msg
		if se != nil {
			d.ID, d.Path, d.RiskLabels = se.e.ID, se.e.Path, se.labels
			text = strings.ReplaceAll(msg, se.e.Path, "")
		}
		d.Action = DiagnosticAction(text)
		out = append(out, d)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := severityRank(out[i].Severity), severityRank(out[j].Severity)
		if a != b {
			return a < b
		}
		return out[i].Message < out[j].Message
	})
	return out
}

var (
	errorDiagRe    = lazyre.New(`(?i)invalid|failed to load|not found|cyclic|exceeds|must define|repeat must`)
	warningDiagRe  = lazyre.New(`(?i)world-writable|group-writable|invokes bash|eval|destructive|broad filesystem|unsafe|unknown field`)
	unknownFieldRe = lazyre.New(`(?i)unknown field`)
)

// DiagnosticSeverity grades a diagnostic message: error, warning or info.
func DiagnosticSeverity(msg string) string {
	switch {
	case errorDiagRe.MatchString(msg):
		return SeverityError
	case warningDiagRe.MatchString(msg):
		return SeverityWarning
	}
	return SeverityInfo
}

func severityRank(s string) int {
	switch s {
	case SeverityError:
		return 0
	case SeverityWarning:
		return 1
	}
	return 2
}

// diagnosticActions suggest what to do about a diagnostic; the first
// match wins.
var diagnosticActions = []struct {
	re     *lazyre.Regexp
	action string
}{
	{lazyre.New(`(?i)world-writable|group-writable`), "tighten recipe root permissions"},
	{lazyre.New(`(?i)invokes bash`), "audit the trusted shell boundary and keep only if intentional"},
	{lazyre.New(`(?i)must define template`), "add a template field or remove the recipe"},
	{unknownFieldRe, "correct the field's name (a misspelt control is ignored) or remove it"},
	{lazyre.New(`(?i)JSON|Expected|parse`), "fix recipe syntax or archive the file"},
	{lazyre.New(`(?i)Markdown recipe`), "fix frontmatter and add a fenced template or recipe block"},
	{lazyre.New(`(?i)cyclic`), "break the import cycle"},
	{lazyre.New(`(?i)exceeds.*size`), "split large prompt or data into separate files"},
	{lazyre.New(`(?i)repeat must`), "use a positive repeat count or an array-typed repeat source"},
	{lazyre.New(`(?i)shadows`), "confirm the active override or rename one recipe"},
	{lazyre.New(`(?i)disabled`), "keep disabled intentionally or delete/archive the file"},
}

// DiagnosticAction suggests what to do about a diagnostic message.
func DiagnosticAction(msg string) string {
	for _, a := range diagnosticActions {
		if a.re.MatchString(msg) {
			return a.action
		}
	}
	return "inspect the recipe and fix or archive it if unexpected"
}

// recommend applies the cleanup rules; the first match wins.
func recommend(se *sumEntry) (Recommendation, bool) {
	e := se.e
	r := Recommendation{ID: e.ID, Path: e.Path}
	mutable := e.Layer == LayerUser
	switch {
	case se.invalid:
		r.Reason, r.Actions = "invalid recipe blocks lower-priority entries with the same id", []string{"fix", "delete", "archive"}
	case !e.Active:
		r.Reason, r.Actions = "shadowed by "+e.ShadowedBy, []string{"merge", "delete", "archive"}
	case se.disabled:
		r.Reason, r.Actions = "disabled recipe is retained but not exposed as a tool", []string{"keep disabled", "delete", "archive"}
	case mutable && se.tool && usageCalls(e.Recipe) == 0:
		r.Reason, r.Actions = "active user tool has no recorded launches", []string{"keep as tool", "move out of tool root", "delete", "archive"}
	case mutable && !se.tool:
		r.Reason, r.Actions = "user recipe is a component, not an active tool", []string{"keep component", "move into tool root", "merge", "delete", "archive"}
	case len(e.Shadows) > 0:
		r.Reason, r.Actions = fmt.Sprintf("overrides %d lower-priority recipe(s)", len(e.Shadows)), []string{"keep override", "merge", "delete", "archive"}
	default:
		return r, false
	}
	return r, true
}

// usageCalls reads usage.calls (0 when absent or not a number).
func usageCalls(r *Recipe) float64 {
	if r == nil {
		return 0
	}
	switch v := r.Usage["calls"].(type) {
	case json.Number:
		f, _ := v.Float64()
		return f
	case float64:
		return v
	case int:
		return float64(v)
	case string:
		f, _ := strconv.ParseFloat(v, 64)
		return f
	}
	return 0
}

// remediate returns the one remediation a file needs, if any: invalid
// first, then an active disabled winner, then warning-level diagnostics
// (a risky trusted-command boundary), then being shadowed.
func remediate(se *sumEntry) (Remediation, bool) {
	e := se.e
	r := Remediation{ID: e.ID, Path: e.Path}
	var blocked string
	if len(e.Shadows) > 0 {
		blocked = e.Shadows[0]
	}
	var risky, unknown []string
	for _, d := range se.diags {
		switch {
		case unknownFieldRe.MatchString(d):
			unknown = append(unknown, d)
		case DiagnosticSeverity(d) == SeverityWarning:
			risky = append(risky, d)
		}
	}
	switch {
	case se.invalid:
		r.Kind, r.Severity, r.Action = "invalid", SeverityError, actionFixInvalid
		r.Reason = "recipe is invalid and cannot be exposed as a tool"
		if e.Err != nil {
			r.Error = e.Err.Error()
		}
		if blocked != "" {
			r.Kind, r.BlockedFallback = "blocking_invalid", blocked
			r.Reason = "invalid higher-priority recipe blocks a lower-priority fallback"
		}
	case se.disabled && e.Active:
		r.Kind, r.Severity, r.Action = "disabled", SeverityWarning, actionDisabled
		r.Reason = "recipe is disabled and not exposed as a tool"
		if blocked != "" {
			r.Kind, r.BlockedFallback = "blocking_disabled", blocked
			r.Reason = "disabled higher-priority recipe intentionally blocks a lower-priority fallback"
		}
	case len(unknown) > 0:
		r.Kind, r.Severity, r.Action = "unknown_field", SeverityWarning, DiagnosticAction(unknown[0])
		for i, d := range unknown {
			unknown[i] = strings.TrimPrefix(d, "Recipe "+e.Path+": ")
		}
		r.Reason = strings.Join(unknown, "; ")
	case len(risky) > 0:
		r.Kind, r.Severity, r.Action = "risky_shell_boundary", SeverityWarning, actionRiskyBoundry
		r.Reason, r.RiskLabels = risky[0], se.labels
	case !e.Active:
		r.Kind, r.Severity, r.Action = "shadowed", SeverityInfo, actionShadowed
		r.ActivePath, r.Reason = e.ShadowedBy, "shadowed by "+e.ShadowedBy
	default:
		return r, false
	}
	return r, true
}

// sortRemediations orders remediations by kind (remediationKinds), then
// id and path.
func sortRemediations(rs []Remediation) {
	sort.SliceStable(rs, func(i, j int) bool {
		a, b := rs[i], rs[j]
		if ra, rb := remediationRank(a.Kind), remediationRank(b.Kind); ra != rb {
			return ra < rb
		}
		return a.ID < b.ID || a.ID == b.ID && a.Path < b.Path
	})
}

// setTop makes the first remediation the top action.
func (s *Summary) setTop() {
	s.TopAction = nil
	if len(s.Remediations) > 0 {
		top := s.Remediations[0]
		s.TopAction = &top
	}
}

// FlagReserved warns of each user recipe that would be a tool under a
// name spelt like something else's (ShadowOf; verbs are the pi-actors
// verbs): like a verb, MCP clients and pi list the verb under that name,
// never the recipe; like one of pi's own tools, pi leaves the recipe out.
// A diagnostic and a reserved_name remediation each, naming the fix
// (rename the file: its name is the tool name); the top action is
// recomputed.
func (s *Summary) FlagReserved(verbs []string) {
	type flagged struct {
		se *sumEntry
		sh Shadow
	}
	var found []flagged
	for _, se := range s.entries {
		if !se.tool {
			continue
		}
		if sh, ok := ShadowOf(se.e.ID, verbs); ok {
			found = append(found, flagged{se, sh})
		}
	}
	if len(found) == 0 {
		return
	}
	sort.Slice(found, func(i, j int) bool { return found[i].se.e.Path < found[j].se.e.Path })
	for _, f := range found {
		e := f.se.e
		suggest := NormalizeName(e.ID) + "_tool" + filepath.Ext(e.Path)
		var msg, reason, action string
		switch f.sh.Kind {
		case ShadowVerb:
			msg = fmt.Sprintf("Recipe %s is named like the pi-actors verb %s: MCP clients and pi list the verb under that name, not this recipe (its file name is its tool name)", e.Path, f.sh.Name)
			reason = "a pi-actors verb has this tool name: the recipe is not offered as a tool"
			action = fmt.Sprintf("rename the file (e.g. to %s) so it is offered as a tool", suggest)
		default:
			msg = fmt.Sprintf("Recipe %s is named like pi's built-in tool %s: pi offers its own %s, not this recipe; MCP clients list it (its file name is its tool name)", e.Path, f.sh.Name, f.sh.Name)
			reason = "pi has a built-in tool of this name: pi does not offer the recipe"
			action = fmt.Sprintf("rename the file (e.g. to %s) so pi offers it as a tool", suggest)
		}
		s.Diagnostics = append(s.Diagnostics, msg)
		s.DiagnosticDetails = append(s.DiagnosticDetails, DiagnosticDetail{ID: e.ID, Path: e.Path, Action: action, Message: msg, Severity: SeverityWarning})
		s.Remediations = append(s.Remediations, Remediation{ID: e.ID, Kind: "reserved_name", Severity: SeverityWarning, Path: e.Path,
			Reason: reason, Action: action})
	}
	sortRemediations(s.Remediations)
	s.setTop()
}

func remediationRank(kind string) int {
	for i, k := range remediationKinds {
		if k == kind {
			return i
		}
	}
	return len(remediationKinds)
}

// integrity pins one file. A file that could not be read (too large,
// unreadable) has an empty sha256 and its size from stat.
func integrity(se *sumEntry, userRoot string) IntegrityRecord {
	e := se.e
	rec := IntegrityRecord{Active: e.Active, Disabled: se.disabled, ID: e.ID, Invalid: se.invalid, Path: e.Path,
		Shadowed: !e.Active, Size: e.Size, Tool: se.tool}
	switch e.Layer {
	case LayerPackaged:
		rec.Root = pkgPrefix
	case LayerUser:
		rec.Root = userRoot
	default:
		rec.Root = e.Path
	}
	if e.data == nil && !IsPackaged(e.Path) {
		if st, err := os.Stat(e.Path); err == nil {
			rec.Size = st.Size()
		}
		return rec
	}
	rec.SHA256 = e.SHA256()
	return rec
}

// riskSummary counts each label over every file carrying it, most common
// first, then by label.
func riskSummary(all []*sumEntry) []RiskCount {
	counts := map[string]*RiskCount{}
	ids := map[string]map[string]bool{}
	for _, se := range all {
		for _, l := range se.labels {
			c, ok := counts[l]
			if !ok {
				c = &RiskCount{Label: l}
				counts[l], ids[l] = c, map[string]bool{}
			}
			c.Count++
			if !ids[l][se.e.ID] {
				ids[l][se.e.ID] = true
				c.Recipes = append(c.Recipes, se.e.ID)
			}
		}
	}
	out := []RiskCount{}
	for _, c := range counts {
		sort.Strings(c.Recipes)
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Label < out[j].Label
	})
	return out
}

// draftsWithRisk copies the drafts, checking each that parses as a
// tool would be (its template and arguments resolve: a draft that does
// not is invalid, with the reason) and adding its risk labels.
func draftsWithRisk(rv *Resolver, drafts []*Draft) []*Draft {
	out := make([]*Draft, 0, len(drafts))
	for _, d := range drafts {
		c := *d
		if c.Valid {
			r, err := Load(c.Path)
			if err == nil && r.Workflow == nil {
				_, err = rv.Tool(r)
			}
			if err != nil {
				c.Valid = false
				c.Diagnostics = append(slices.Clone(c.Diagnostics), reason(c.Path, err))
			} else if labels, _, err := rv.Risk(r); err == nil {
				c.RiskLabels = labels
			}
		}
		out = append(out, &c)
	}
	return out
}

// NextActionsFor returns the follow-up actions for an inspect view (at
// most 4, each once): the doctor view when something is wrong (or, in the
// doctor view, the top remediation's action), then the drafts listing and
// a replay of the first draft.
func (s *Summary) NextActionsFor(view string) []string {
	var actions []string
	if view != "doctor" && (len(s.Invalid) > 0 || len(s.Diagnostics) > 0) {
		actions = append(actions, "inspect target=recipes view=doctor")
	}
	if view == "doctor" && s.TopAction != nil {
		actions = append(actions, s.TopAction.Action)
	}
	if len(s.Drafts) > 0 {
		actions = append(actions, "inspect target=recipes view=summary verbose=true")
		if i := slices.IndexFunc(s.Drafts, func(d *Draft) bool { return d.Valid }); i >= 0 {
			actions = append(actions, "spawn file="+s.Drafts[i].Path)
		}
	}
	out := []string{}
	seen := map[string]bool{}
	for _, a := range actions {
		if !seen[a] && len(out) < 4 {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out
}

// SeverityCounts counts the diagnostic details by severity.
func (s *Summary) SeverityCounts() (errors, warnings, info int) {
	for _, d := range s.DiagnosticDetails {
		switch d.Severity {
		case SeverityError:
			errors++
		case SeverityWarning:
			warnings++
		default:
			info++
		}
	}
	return
}
