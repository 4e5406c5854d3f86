package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/pi-actors/pi-actors/knowledge/api"
	"github.com/pi-actors/pi-actors/verbs"
)

// The knowledge verb dispatches its first word to a knowledge operation of
// the verb layer (query_graph, manage_graph, …; `project create|list` is
// project_create|project_list). The operations run in the kernel, the only
// process that opens knowledge stores.

func init() {
	localVerbs = append(localVerbs, &verb{name: "knowledge", summary: "the knowledge graph: query_graph, manage_graph, manage_changelog, project, history, verify, …",
		usageFn: knowledgeUsage, run: runKnowledgeVerb, ownHelp: true})
}

func knowledgeUsage() string {
	var b strings.Builder
	b.WriteString(`pi-actors knowledge <operation> [key=value | key:=JSON ...] [--json]
pi-actors knowledge manage_graph -      (a JSON array of requests on stdin: one transaction)

Persistent memory about a codebase: molecules group atoms, atoms own glob
path patterns and the knowledge an agent needs about those files, and an
immutable changelog records how each evolved. Stores: the project store
<repo>/.pi/knowledge.db (found from the cwd; knowledge init creates it) over
the personal store <agent>/knowledge/knowledge.db. Errors are
VALIDATION_ERROR and INVARIANT_VIOLATION (exit 65), NOT_FOUND (66),
CONFLICT (75, details.currentVersion).

operations:
`)
	for _, op := range api.Ops {
		name := strings.Replace(op, "project_", "project ", 1)
		summary := ""
		if s := verbs.Find(op); s != nil {
			summary = s.Summary
		}
		fmt.Fprintf(&b, "  %-17s %s\n", name, summary)
	}
	b.WriteString(`
pi-actors knowledge <operation> --help shows its parameters. Task ids
(createdByTaskId, lastTaskId, taskId) default to the run inside a run and
are required outside one. Examples:
  pi-actors knowledge init
  pi-actors knowledge manage_graph operation=create entityType=molecule name=Payments knowledge="Stripe, idempotent webhooks" createdByTaskId=task-12
  pi-actors knowledge manage_graph operation=create entityType=atom name=Webhooks paths:='["src/payments/webhook-*.ts"]' moleculeId=<id> createdByTaskId=task-12
  pi-actors knowledge query_graph operation=context paths=src/payments/webhook-handler.ts,src/shared/retry.ts
  pi-actors knowledge manage_changelog operation=append parentType=atom parentId=<id> summary="split the handler" taskId=task-12
  pi-actors message to=knowledge type=knowledge.query_graph body:='{"operation":"search","entityType":"atom","query":"retry"}'`)
	return b.String()
}

// knowledgeOp resolves the operation words: `<op>` or `project create|list`.
func knowledgeOp(words []string) (string, error) {
	ops := strings.Join(slices.DeleteFunc(slices.Clone(api.Ops), func(s string) bool { return strings.HasPrefix(s, "project_") }), ", ") + ", project create|list"
	if len(words) == 0 {
		return "", knowledgeUsagef("knowledge needs an operation: %s (pi-actors help knowledge)", ops)
	}
	op, rest := words[0], words[1:]
	if op == "project" {
		if len(rest) == 0 || (rest[0] != "create" && rest[0] != "list") {
			return "", knowledgeUsagef("knowledge project takes create or list: pi-actors knowledge project create name=<name> [root=DIR]")
		}
		op, rest = "project_"+rest[0], rest[1:]
	}
	if api.New(op) == nil {
		return "", knowledgeUsagef("unknown knowledge operation %q; operations: %s", op, ops)
	}
	if len(rest) > 0 {
		return "", knowledgeUsagef("knowledge %s takes parameters, not words (got %q): write key=value, or key:=JSON", op, rest[0])
	}
	return op, nil
}

func runKnowledgeVerb(ctx context.Context, a *app, r *request) int {
	op, err := knowledgeOp(r.words)
	if err != nil {
		if r.help && len(r.words) == 0 {
			// a.ok: --json gets the help envelope, a failed write 74.
			return a.ok(r, knowledgeUsage()+"\n", map[string]any{"verb": "knowledge", "usage": knowledgeUsage(), "available": true})
		}
		return a.fail(r, err)
	}
	spec := verbs.Find(op)
	if spec == nil {
		return a.fail(r, knowledgeUsagef("knowledge %s is not built into this binary", op))
	}
	if r.help {
		return a.ok(r, specHelp(spec), map[string]any{"verb": "knowledge " + op, "usage": spec.Usage, "available": true})
	}
	env, err := a.env(ctx, spec, r)
	if err != nil {
		return a.fail(r, err)
	}
	one := *r
	one.words = nil
	if len(r.batch) > 0 {
		return a.knowledgeBatch(ctx, spec, env, &one)
	}
	req, err := decode(spec, &one, env)
	if err != nil {
		return a.fail(r, err)
	}
	out, err := spec.Run(ctx, env, req)
	if err != nil {
		return a.fail(r, err)
	}
	return a.print(r, out)
}

// knowledgeBatch runs a stdin batch: manage_graph requests in one
// transaction (the kernel decodes and validates them; a failing request
// fails them all, its error naming details.index), other operations one
// at a time. --json prints one envelope per request; text a summary.
func (a *app) knowledgeBatch(ctx context.Context, spec *verbs.Spec, env *verbs.Env, r *request) int {
	items := r.single()
	if spec.Name == "manage_graph" {
		raws := make([]json.RawMessage, len(items))
		for i, item := range items {
			params := maps.Clone(item.params)
			delete(params, "session") // the common parameter, not the operation's
			b, err := json.Marshal(params)
			if err != nil {
				return a.fail(r, atIndex(verbs.Invalidf("%v", err), i))
			}
			raws[i] = b
		}
		res, err := verbs.RunKnowledgeBatch(env, raws, r.json)
		if err != nil {
			return a.fail(r, err)
		}
		if !r.json {
			return a.ok(r, res.Text(), nil)
		}
		for i, raw := range res.Items {
			a.ok(items[i], "", raw)
		}
		return exitOK
	}
	code := exitOK
	for _, item := range items {
		c := exitOK
		e := *env
		if req, err := decode(spec, item, &e); err != nil {
			c = a.fail(item, err)
		} else if out, err := spec.Run(ctx, &e, req); err != nil {
			c = a.fail(item, err)
		} else {
			c = a.print(item, out)
		}
		if code == exitOK {
			code = c
		}
	}
	return code
}

// atIndex names the batch request an error is about (details.index).
func atIndex(err error, i int) error {
	ce := verbs.Classify(err)
	d := map[string]any{"index": i}
	if m, ok := ce.Details.(map[string]any); ok {
		for k, v := range m {
			d[k] = v
		}
	}
	return &verbs.Error{Exit: ce.Exit, Code: ce.Code, Message: fmt.Sprintf("request %d: %s", i, ce.Message), Hint: ce.Hint, Details: d}
}

// knowledgeUsagef is a usage error of the knowledge verb.
func knowledgeUsagef(format string, args ...any) *cliError {
	e := usagef(format, args...)
	e.Hint = "pi-actors help knowledge"
	return e
}
