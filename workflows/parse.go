package workflows

import (
	"encoding/json"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/pi-actors/pi-actors/internal/lazyre"
	"github.com/pi-actors/pi-actors/recipes/template"
)

// Options are what Parse checks a workflow against.
type Options struct {
	// SpawnKeys are the spawn parameters a node may carry; they go to its
	// child run's spawn request as given.
	SpawnKeys []string
	// Run is the workflow run's id: child run ids (<run>-<node>) must stay
	// valid run ids. "" skips that check.
	Run string
}

// Top-level, node and metadata keys of seed 001's schema (plus model,
// the agent nodes' model, and description).
var (
	workflowKeys = []string{"id", "session_id", "prompt", "description", "model", "nodes", "execution_order", "policy"}
	nodeKeys     = []string{"id", "depends_on", "metadata", "context", "agent", "prompt", "model", "service"}
	metadataKeys = []string{"priority", "timeout_ms", "retry", "file_operations", "description", "tags"}
	policyKeys   = []string{"max_concurrency", "fail_fast", "default_retry"}
	// reservedSpawnKeys are spawn parameters the workflow sets itself.
	reservedSpawnKeys = []string{"as", "run_id", "tool", "launch_source", "workflow", "workflow_node"}
)

var nodeIDRe = lazyre.New(`^[A-Za-z0-9_.-]+$`)

// Parse checks a workflow (a decoded JSON object) whole and returns it
// parsed. Every error is an *Error naming the node and the field.
func Parse(raw any, opt Options) (*Workflow, error) {
	obj, ok := raw.(map[string]any)
	if !ok {
		return nil, invalid("", "", "must be a JSON object {id, nodes, policy, …} (got %s)", kindOf(raw))
	}
	if err := knownKeys("", "", obj, workflowKeys); err != nil {
		return nil, err
	}
	w := &Workflow{byID: map[string]*Node{}}
	var err error
	if w.ID, err = optString("", "id", obj["id"]); err != nil {
		return nil, err
	}
	if w.Model, err = optString("", "model", obj["model"]); err != nil {
		return nil, err
	}
	if w.Policy, err = parsePolicy(obj["policy"]); err != nil {
		return nil, err
	}
	list, ok := obj["nodes"].([]any)
	if !ok || len(list) == 0 {
		return nil, invalid("", "nodes", "needs a non-empty array of nodes [{id, depends_on, …}]")
	}
	if len(list) > MaxNodes {
		return nil, invalid("", "nodes", "%d nodes; at most %d", len(list), MaxNodes)
	}
	spawnKeys := map[string]bool{}
	for _, k := range opt.SpawnKeys {
		if !slices.Contains(reservedSpawnKeys, k) {
			spawnKeys[k] = true
		}
	}
	for i, item := range list {
		n, err := parseNode(i, item, w, spawnKeys, opt.Run)
		if err != nil {
			return nil, err
		}
		w.Nodes = append(w.Nodes, n)
		w.byID[n.ID] = n
	}
	for i, item := range list {
		if err := parseDeps(w.Nodes[i], item.(map[string]any)["depends_on"], w); err != nil {
			return nil, err
		}
	}
	if err := w.order(obj["execution_order"]); err != nil {
		return nil, err
	}
	return w, w.checkNodes()
}

func parsePolicy(v any) (Policy, error) {
	p := Policy{MaxConcurrency: DefaultConcurrency}
	if v == nil {
		return p, nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return p, invalid("", "policy", "must be an object {max_concurrency, fail_fast, default_retry} (got %s)", kindOf(v))
	}
	if err := knownKeys("", "policy", obj, policyKeys); err != nil {
		return p, err
	}
	if mc, ok := obj["max_concurrency"]; ok && mc != nil {
		n, ok := intOf(mc)
		if !ok || n < 1 || n > MaxConcurrency {
			return p, invalid("", "policy.max_concurrency", "must be an integer from 1 to %d (got %s)", MaxConcurrency, template.CompactJSON(mc))
		}
		p.MaxConcurrency = n
	}
	if ff, ok := obj["fail_fast"]; ok && ff != nil {
		b, ok := ff.(bool)
		if !ok {
			return p, invalid("", "policy.fail_fast", "must be true or false (got %s)", template.CompactJSON(ff))
		}
		p.FailFast = b
	}
	var err error
	p.DefaultRetry, err = parseRetry("", "policy.default_retry", obj["default_retry"], Retry{})
	return p, err
}

func parseRetry(node, field string, v any, def Retry) (Retry, error) {
	if v == nil {
		return def, nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return def, invalid(node, field, "must be an object {max, backoff_ms} (got %s)", template.CompactJSON(v))
	}
	if err := knownKeys(node, field, obj, []string{"max", "backoff_ms"}); err != nil {
		return def, err
	}
	r := Retry{}
	if m, ok := obj["max"]; ok {
		n, ok := intOf(m)
		if !ok || n < 0 || n > MaxRetries {
			return def, invalid(node, field+".max", "must be an integer from 0 to %d: the retries after the first attempt (got %s)", MaxRetries, template.CompactJSON(m))
		}
		r.Max = n
	}
	if b, ok := obj["backoff_ms"]; ok {
		n, ok := intOf(b)
		if !ok || n < 0 || n > MaxBackoffMS {
			return def, invalid(node, field+".backoff_ms", "must be an integer from 0 to %d (got %s)", MaxBackoffMS, template.CompactJSON(b))
		}
		r.BackoffMS = n
	}
	return r, nil
}

// parseNode reads a node's own fields; its dependencies are read once
// every id is known.
func parseNode(i int, item any, w *Workflow, spawnKeys map[string]bool, run string) (*Node, error) {
	where := "nodes[" + strconv.Itoa(i) + "]"
	obj, ok := item.(map[string]any)
	if !ok {
		return nil, invalid("", where, "must be an object {id, depends_on, …} (got %s)", kindOf(item))
	}
	id, ok := obj["id"].(string)
	if !ok || id == "" {
		return nil, invalid("", where+".id", "needs a string id (letters, digits, '.', '_', '-')")
	}
	if !nodeIDRe.MatchString(id) || id == "." || id == ".." {
		return nil, invalid(id, "id", "may contain only letters, digits, '.', '_' and '-', and is not . or ..")
	}
	if run != "" && len(ChildRun(run, id)) > 128 {
		return nil, invalid(id, "id", "its child run id %s is longer than 128 bytes; use a shorter node or workflow id", ChildRun(run, id))
	}
	if prev := w.byID[id]; prev != nil {
		return nil, invalid(id, "id", "duplicate: nodes[%d] and nodes[%d] both use it", prev.Index, i)
	}
	if c, ok := obj["context"]; ok && c != nil {
		if _, isObj := c.(map[string]any); !isObj {
			return nil, invalid(id, "context", "must be an object, e.g. {\"relevant_files\": [\"src/\"], \"reason\": \"…\"}")
		}
	}
	n := &Node{ID: id, Index: i, Spawn: map[string]any{}, Context: obj["context"]}
	keys := sortedKeys(obj)
	for _, k := range keys {
		switch {
		case slices.Contains(nodeKeys, k):
		case spawnKeys[k]:
			n.Spawn[k] = obj[k]
		case slices.Contains(reservedSpawnKeys, k):
			return nil, invalid(id, k, "is set by the workflow (the child run is run:%s); remove it", ChildRun(orRun(run), id))
		default:
			return nil, invalid(id, k, "unknown key (node keys: %s, and the spawn parameters %s)", strings.Join(nodeKeys, ", "), strings.Join(sortedSet(spawnKeys), ", "))
		}
	}
	var err error
	for _, f := range []struct {
		key string
		dst *string
	}{{"agent", &n.Agent}, {"prompt", &n.Prompt}, {"model", &n.Model}} {
		if *f.dst, err = optString(id, f.key, obj[f.key]); err != nil {
			return nil, err
		}
	}
	if s, ok := obj["service"]; ok && s != nil {
		b, ok := s.(bool)
		if !ok {
			return nil, invalid(id, "service", "must be true or false (got %s)", template.CompactJSON(s))
		}
		n.Service = b
	}
	if err := n.parseMetadata(obj["metadata"], w.Policy.DefaultRetry); err != nil {
		return nil, err
	}
	return n, n.checkRuns(w.Model)
}

func orRun(run string) string {
	if run == "" {
		return "<workflow>"
	}
	return run
}

func (n *Node) parseMetadata(v any, defRetry Retry) error {
	n.Priority, n.Retry = "normal", defRetry
	if v == nil {
		return nil
	}
	md, ok := v.(map[string]any)
	if !ok {
		return invalid(n.ID, "metadata", "must be an object {priority, timeout_ms, retry} (got %s)", kindOf(v))
	}
	if err := knownKeys(n.ID, "metadata", md, metadataKeys); err != nil {
		return err
	}
	if p, ok := md["priority"]; ok && p != nil {
		s, _ := p.(string)
		if !slices.Contains(priorities, s) {
			return invalid(n.ID, "metadata.priority", "must be %s (got %s)", oneOf(priorities), template.CompactJSON(p))
		}
		n.Priority = s
	}
	if t, ok := md["timeout_ms"]; ok && t != nil {
		ms, ok := intOf(t)
		if !ok || ms < 1 || ms > MaxTimeoutMS {
			return invalid(n.ID, "metadata.timeout_ms", "must be an integer from 1 to %d (got %s)", MaxTimeoutMS, template.CompactJSON(t))
		}
		n.TimeoutMS = ms
	}
	var err error
	n.Retry, err = parseRetry(n.ID, "metadata.retry", md["retry"], defRetry)
	return err
}

// checkRuns checks that the node says once what it runs.
func (n *Node) checkRuns(model string) error {
	var given []string
	for _, k := range []string{"recipe", "file", "template", "agent"} {
		if k == "agent" && n.Agent != "" || k != "agent" && n.Spawn[k] != nil {
			given = append(given, k)
		}
	}
	switch {
	case len(given) == 0:
		return invalid(n.ID, "", "says nothing to run: give one of recipe (with values), template, or agent with prompt")
	case len(given) > 1:
		return invalid(n.ID, strings.Join(given, "+"), "give only one of recipe, file, template or agent")
	}
	if n.Prompt != "" && n.Agent == "" {
		return invalid(n.ID, "prompt", "belongs to an agent node: add agent (the role, e.g. \"engineer\")")
	}
	if v, ok := n.Spawn["values"]; ok && v != nil {
		if _, ok := v.(map[string]any); !ok {
			return invalid(n.ID, "values", "must be an object of placeholder values (got %s)", kindOf(v))
		}
	}
	if t := n.Spawn["template"]; t != nil {
		if _, err := template.Parse(t); err != nil {
			return invalid(n.ID, "template", "%v", err)
		}
	}
	if n.Agent == "" {
		return nil
	}
	if strings.TrimSpace(n.Prompt) == "" {
		return invalid(n.ID, "prompt", "an agent node needs a prompt")
	}
	if n.Model == "" && model == "" {
		return invalid(n.ID, "model", "an agent node needs a model: set the workflow's \"model\" (or the node's)")
	}
	return nil
}

// parseDeps reads depends_on: ids, or {node, condition} objects.
func parseDeps(n *Node, v any, w *Workflow) error {
	if v == nil {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		return invalid(n.ID, "depends_on", "must be an array of node ids or {\"node\": id, \"condition\": %s} (got %s)", oneOf(conditions), kindOf(v))
	}
	seen := map[string]bool{}
	for i, item := range list {
		field := "depends_on[" + strconv.Itoa(i) + "]"
		d := Dep{Condition: CondDone}
		switch x := item.(type) {
		case string:
			d.Node = x
		case map[string]any:
			if err := knownKeys(n.ID, field, x, []string{"node", "condition"}); err != nil {
				return err
			}
			d.Node, _ = x["node"].(string)
			if c, ok := x["condition"]; ok && c != nil {
				d.Condition, _ = c.(string)
				if !slices.Contains(conditions, d.Condition) {
					return invalid(n.ID, field+".condition", "must be %s (got %s)", oneOf(conditions), template.CompactJSON(c))
				}
			}
		default:
			return invalid(n.ID, field, "must be a node id or {\"node\": id, \"condition\": …} (got %s)", kindOf(item))
		}
		dep := w.byID[d.Node]
		switch {
		case d.Node == "":
			return invalid(n.ID, field, "names no node")
		case dep == nil:
			return invalid(n.ID, "depends_on", "unknown node %s (nodes: %s)", d.Node, strings.Join(w.ids(), ", "))
		case seen[d.Node]:
			return invalid(n.ID, "depends_on", "lists %s twice", d.Node)
		case dep.Service && d.Condition == CondDone:
			return invalid(n.ID, "depends_on", "%s is a service (it runs until its dependents end): wait for it with {\"node\": %q, \"condition\": \"started\"} or \"ready\" (its readiness probe passed)", d.Node, d.Node)
		}
		seen[d.Node] = true
		n.Deps = append(n.Deps, d)
	}
	return nil
}

func (w *Workflow) ids() []string {
	out := make([]string, len(w.Nodes))
	for i, n := range w.Nodes {
		out[i] = n.ID
	}
	if len(out) > 20 {
		out = append(out[:20], "…")
	}
	return out
}

// checkNodes checks what needs the whole graph: upstream references and
// that something besides services runs.
func (w *Workflow) checkNodes() error {
	services := 0
	for _, n := range w.Nodes {
		if n.Service {
			services++
		}
		if err := w.checkUpstream(n); err != nil {
			return err
		}
	}
	if services == len(w.Nodes) {
		return invalid("", "nodes", "every node is a service; services stop when the other nodes end, so at least one node must not be one")
	}
	return nil
}

func knownKeys(node, field string, obj map[string]any, known []string) error {
	for _, k := range sortedKeys(obj) {
		if !slices.Contains(known, k) {
			f := k
			if field != "" {
				f = field + "." + k
			}
			return invalid(node, f, "unknown key (known: %s)", strings.Join(known, ", "))
		}
	}
	return nil
}

func optString(node, field string, v any) (string, error) {
	if v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", invalid(node, field, "must be a string (got %s)", kindOf(v))
	}
	return s, nil
}

// intOf reads an integer from a decoded JSON number (json.Number or
// float64) or a Go int.
func intOf(v any) (int, bool) {
	switch x := v.(type) {
	case int:
		return x, true
	case json.Number:
		n, err := strconv.Atoi(x.String())
		return n, err == nil
	case float64:
		if x != math.Trunc(x) || math.Abs(x) > 1<<53 {
			return 0, false
		}
		return int(x), true
	}
	return 0, false
}

func kindOf(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case []any:
		if len(v) == 0 {
			return "an empty array"
		}
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "a number"
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sortedSet(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
