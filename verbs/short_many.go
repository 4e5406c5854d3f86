package verbs

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/pi-actors/pi-actors/runs"
)

// Several runs, or all, for stop, kill, restart and rm: one batch of
// control messages to the kernel (applied together, like `message -`),
// each run reported.

// allRuns is the word that names every run ps lists.
const allRuns = "all"

// ShortResult is one run's outcome of a short verb given several runs or
// all: its delivery, or its error.
type ShortResult struct {
	Run    string    `json:"run"`
	OK     bool      `json:"ok"`
	Result *Delivery `json:"result,omitempty"`
	Error  *Error    `json:"error,omitempty"`
}

// checkRuns validates the run words of a short verb in full: at least
// one, all alone, and every id well-formed (nothing is sent otherwise).
func checkRuns(list RunList, verb string) error {
	if len(list) == 0 {
		return Usagef("name the runs: pi-actors %s <run>... (or all)", verb)
	}
	for _, w := range list {
		w = strings.TrimSpace(w)
		if w == allRuns {
			if len(list) > 1 {
				return Usagef("all stands alone: give run ids or all, not both (a run named all is run:all)")
			}
			continue
		}
		id := runWord(w)
		if id == "" {
			return Usagef("name the runs: pi-actors %s <run>... (got an empty run word)", verb)
		}
		// The long form's own check (and, for one run, its error).
		if err := (&Message{To: "run:" + id, Type: "control.cancel"}).Validate(); err != nil {
			return err
		}
	}
	return nil
}

// runShort runs a control message for the runs: one run is exactly the
// long form; several, or all, are one batch with a report per run.
func runShort(ctx context.Context, env *Env, list RunList, typ string) (*Outcome, error) {
	all := len(list) == 1 && strings.TrimSpace(list[0]) == allRuns
	if len(list) == 1 && !all {
		out, err := runControl(ctx, env, list[0], typ)
		return out, qualifyRunErr(err, runWord(list[0]))
	}
	local := *env
	if all && strings.TrimSpace(local.Session) == allRuns {
		// all session=all: every session's runs, as ps lists them. Named
		// runs are checked as the long form checks each: session=all is
		// not a session that owns them.
		local.Session = ""
	}
	var (
		ids    []string
		missed []ShortResult
	)
	if all {
		var err error
		if ids, err = allTargets(&local, typ); err != nil {
			return nil, err
		}
		if local.Config.Cluster.Enabled() {
			more, why := clusterTargets(ctx, &local, typ)
			ids, missed = append(ids, more...), why
		}
	} else {
		for _, w := range list {
			if id := runWord(w); !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	results := make([]ShortResult, len(ids))
	if len(ids) > 0 {
		reqs := make([]Request, len(ids))
		for i, id := range ids {
			reqs[i] = &Message{To: "run:" + id, Type: typ}
		}
		outs, errs, err := RunBatch(&local, Find("message"), reqs)
		if err != nil {
			return nil, err
		}
		self := ""
		if all && local.Config.Cluster.Enabled() {
			self = local.Config.Cluster.NodeName() // all on a cluster names every run with its node
		}
		for i, id := range ids {
			results[i] = ShortResult{Run: id, OK: errs[i] == nil}
			if errs[i] != nil {
				results[i].Error = Classify(qualifyRunErr(errs[i], id))
			} else if d, ok := outs[i].Result.(*Delivery); ok {
				results[i].Result = d
			}
			if self != "" && !strings.Contains(id, "@") {
				results[i] = qualifyShort(results[i], id, self)
			}
		}
	}
	return shortOutcome(&local, typ, append(results, missed...)), nil
}

// qualifyRunErr is the error of a control message to a run word: when
// the word names the node (<id>@<node>), the message and hint name the
// run there, as the caller gave it (the answering node names it bare).
func qualifyRunErr(err error, word string) error {
	if err == nil {
		return nil
	}
	id, node, ok := strings.Cut(word, "@")
	if !ok {
		return err
	}
	return qualifyErr(err, id, node)
}

// qualifyShort is a result of this node's run id as all reports it on a
// cluster: run:<id>@<this node>, in the run, the delivery's to, node and
// next actions, and the error's message and hint.
func qualifyShort(r ShortResult, id, self string) ShortResult {
	r.Run = id + "@" + self
	if r.Result != nil {
		d := *r.Result
		d.To = QualifyRun(d.To, id, self)
		if d.Node == "" {
			d.Node = self
		}
		d.NextActions = append([]string(nil), d.NextActions...)
		for i, a := range d.NextActions {
			d.NextActions[i] = QualifyRun(a, id, self)
		}
		r.Result = &d
	}
	r.Error = QualifyError(r.Error, id, self)
	return r
}

// clusterTargets lists what all names on the other members of the
// cluster (the caller's session's runs there, as run ids with @<node>),
// and a failed result for each member that could not be asked: all
// never passes a node by in silence.
func clusterTargets(ctx context.Context, env *Env, typ string) ([]string, []ShortResult) {
	session, archived := strings.TrimSpace(env.Session), typ == "control.prune"
	ids, unreachable, err := runsElsewhere(ctx, env, allFilter(typ), func(r *RunRow) bool {
		// The session's (every session's without one); archived ones
		// only for a prune.
		return (r.Status != runs.StatusArchived || archived) && (session == "" || r.Owner == session)
	})
	if err != nil {
		return nil, []ShortResult{{Run: "@cluster", Error: Classify(err)}}
	}
	var missed []ShortResult
	for node, why := range unreachable {
		missed = append(missed, ShortResult{Run: "@" + node, Error: &Error{Exit: ExitUnavailable, Code: "node_unreachable",
			Message: fmt.Sprintf("node %s was not asked for its runs (%s): its runs are untouched", node, why),
			Hint:    "pi-actors inspect target=cluster view=nodes; repeat once the node is up"}})
	}
	sort.Slice(missed, func(i, j int) bool { return missed[i].Run < missed[j].Run })
	return ids, missed
}

// runsElsewhere lists the runs with ps's filter on the other members of
// the cluster that keep accepts, as <id>@<node>, sorted, with the
// members that could not be asked (node → why).
func runsElsewhere(ctx context.Context, env *Env, filter string, keep func(*RunRow) bool) ([]string, map[string]string, error) {
	self := env.Config.Cluster.NodeName()
	merged, _, err := ClusterPs(ctx, env, &Ps{Status: filter, Lines: LooseInt{Value{V: clusterAllMax, Set: true}}}, self)
	if err != nil {
		return nil, nil, err
	}
	var ids []string
	for i := range merged.Runs {
		r := &merged.Runs[i]
		if !keep(r) {
			continue
		}
		if id := r.Run + "@" + r.Node; !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids, merged.Unreachable, nil
}

// allFilter is the runs all names for a control type: the ended ones for
// rm (archive, prune), the live ones otherwise.
func allFilter(typ string) string {
	if typ == "control.archive" || typ == "control.prune" {
		return "terminal"
	}
	return "active"
}

// clusterAllMax bounds the runs one member lists for all.
const clusterAllMax = 100000

// allTargets lists the runs all names: the live ones (stop, kill,
// restart), the ended, not yet archived ones (rm) or every ended one,
// archived too (rm --prune), of the caller's session — of every session
// without one — in ps's order.
func allTargets(env *Env, typ string) ([]string, error) {
	list, err := env.runIndex().List(allFilter(typ))
	if err != nil {
		return nil, err
	}
	session := strings.TrimSpace(env.Session)
	var ids []string
	for _, in := range treeOrder(orderRuns(list)) {
		if in.Status == runs.StatusArchived && typ != "control.prune" || (session != "" && in.Meta.OwnerID != session) {
			continue
		}
		if !slices.Contains(ids, in.Meta.Run) {
			ids = append(ids, in.Meta.Run)
		}
	}
	return ids, nil
}

// shortOutcome reports every run: one line each, the list as the result —
// or, when a run failed, as the details of the first failure's error
// (whose exit code is the verb's).
func shortOutcome(env *Env, typ string, results []ShortResult) *Outcome {
	if len(results) == 0 {
		what := "live runs"
		if allFilter(typ) == "terminal" {
			what = "ended runs"
		}
		scope := "in any session"
		if s := strings.TrimSpace(env.Session); s != "" {
			scope = "in session " + s
		}
		return &Outcome{Result: results, Text: fmt.Sprintf("(no %s %s: nothing to do for all)", what, scope)}
	}
	lines := make([]string, len(results))
	var first *Error
	failed := 0
	for i, r := range results {
		if r.OK {
			lines[i] = r.Result.Text()
			continue
		}
		failed++
		if first == nil {
			first = r.Error
		}
		msg, _, _ := strings.Cut(r.Error.Message, "\n")
		to := "to=run:" + r.Run
		if node, ok := strings.CutPrefix(r.Run, "@"); ok {
			to = "node=" + node // a member all could not ask
		}
		lines[i] = fmt.Sprintf("%s type=%s error=%s exit=%d: %s", to, typ, r.Error.Code, r.Error.Exit, msg)
	}
	out := &Outcome{Result: results, Text: strings.Join(lines, "\n")}
	if first != nil {
		var okLines, errLines []string
		for i, r := range results {
			if r.OK {
				okLines = append(okLines, lines[i])
			} else {
				errLines = append(errLines, lines[i])
			}
		}
		out.OutText, out.ErrText = strings.Join(okLines, "\n"), strings.Join(errLines, "\n")
		out.Exit = first.Exit
		out.Fail = &Error{Exit: first.Exit, Code: first.Code, Hint: first.Hint, Details: results,
			Message: fmt.Sprintf("%d of %d runs failed; the first: %s", failed, len(results), first.Message)}
	}
	return out
}
