package verbs

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pi-actors/pi-actors/internal/termtext"
	"github.com/pi-actors/pi-actors/knowledge/api"
	"github.com/pi-actors/pi-actors/knowledge/api/graphop"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
)

// knowledgeSpecs are the knowledge operations: name (the api op), summary,
// usage, MCP hints (nil: not a tool), the verb request.
type knowledgeSpec struct {
	op, summary, usage string
	tool               *Annotations
	new                func() Request
}

var knowledgeSpecs = []knowledgeSpec{
	{"query_graph", "read the knowledge graph: get an atom or molecule, search, or match file paths (context)", usageQueryGraph,
		&Annotations{ReadOnly: true, Idempotent: true}, func() Request { return new(QueryGraph) }},
	{"manage_graph", "create, update or delete knowledge atoms and molecules (optimistic locking by version)", usageManageGraph,
		&Annotations{Destructive: true}, func() Request { return new(ManageGraph) }},
	{"manage_changelog", "append to or page through an atom's or molecule's immutable changelog", usageManageChangelog,
		&Annotations{}, func() Request { return new(ManageChangelog) }},
	{"project_create", "create a knowledge project {id, name, root, createdAt}", "pi-actors knowledge project create name=<name> [root=DIR] [store=project|personal] [--json]",
		nil, func() Request { return new(ProjectCreate) }},
	{"project_list", "list knowledge projects", "pi-actors knowledge project list [limit=N] [offset=N] [store=project|personal] [--json]",
		nil, func() Request { return new(ProjectList) }},
	{"history", "list an atom's or molecule's hash-chained history; version=N reconstructs that version", "pi-actors knowledge history id=<uuid> [version=N] [limit=N] [offset=N] [--json]",
		nil, func() Request { return new(KnowledgeHistory) }},
	{"verify", "recompute every hash chain of the knowledge stores (exit 65 on a break)", "pi-actors knowledge verify [store=project|personal] [--json]",
		nil, func() Request { return new(KnowledgeVerify) }},
	{"task_context", "the graph context of a task's \"Context Files\" section", "pi-actors knowledge task_context file=<task.md> | text=<task text> [projectId=…] [--json]",
		nil, func() Request { return new(TaskContext) }},
	{"init", "create the project store <repo>/.pi/knowledge.db and its project", "pi-actors knowledge init [name=<project name>] [--json]",
		nil, func() Request { return new(KnowledgeInit) }},
	{"status", "the caller's knowledge stores: projects, counts, schema version, sizes", "pi-actors knowledge status [store=project|personal] [--json]",
		nil, func() Request { return new(KnowledgeStatus) }},
}

const usageQueryGraph = `pi-actors knowledge query_graph operation=get entityType=atom|molecule id=<uuid> [includeChangelog=false] [changelogLimit=5]
pi-actors knowledge query_graph operation=search entityType=atom|molecule [query=<words>] [moleculeId=<uuid> | orphansOnly=true] [projectId=<uuid>] [limit=20] [offset=0]
pi-actors knowledge query_graph operation=context paths=src/a.ts,src/b.ts [projectId=<uuid>] [includeChangelog=false]

All reads of the knowledge graph (molecules group atoms; atoms own glob
path patterns and hold what an agent needs to know about those files).
get: one entity with its last changelogLimit changelog entries (a molecule
also lists its atoms). search: a page {items, total, limit, offset}; query
words are prefixes, all required. context: the atoms whose patterns match
the paths (* within a segment, ** across), walked up to their molecules;
orphanAtoms and unmatchedPaths (knowledge gaps) too. Reads ask the project
store (<repo>/.pi/knowledge.db, found from the cwd) first, then the personal
one; every item says its store. projectId may be omitted when the cwd lies
under exactly one project's root.`

const usageManageGraph = `pi-actors knowledge manage_graph operation=create entityType=atom name=<name> paths:='["src/pay/**"]' [knowledge=<text>] [moleculeId=<uuid>] [relatedAtoms:='[{"atomId":…,"reason":…}]'] [projectId=<uuid>] [createdByTaskId=<task>]
pi-actors knowledge manage_graph operation=update entityType=atom|molecule id=<uuid> version=<n> [name=…] [knowledge=… [knowledgeMode=append]] [paths:=…] [moleculeId=<uuid>|moleculeId:=null] [lastTaskId=<task>]
pi-actors knowledge manage_graph operation=delete entityType=atom|molecule id=<uuid> version=<n> [cascade=true]
pi-actors knowledge manage_graph -       (a JSON array of requests on stdin: applied in one transaction, all or none)

All writes. update and delete need the version you read (a mismatch is
CONFLICT, exit 75, with details.currentVersion: read again and retry).
knowledgeMode=append adds "\n\n---[<time> task:<task>]---\n<text>".
Deleting a molecule orphans its atoms (cascade=true deletes them). Task ids
default to the calling run (run:$PI_ACTORS_RUN_ID); run:<id> must name a
run. Writes go to the project store when one is found, unless
store=personal; every change appends a hash-chained history delta.`

const usageManageChangelog = `pi-actors knowledge manage_changelog operation=append parentType=atom|molecule parentId=<uuid> summary=<what changed and why> [taskId=<task>]
pi-actors knowledge manage_changelog operation=search parentType=atom|molecule parentId=<uuid> [limit=20] [offset=0]

The changelog of an atom or molecule: immutable entries, newest first.
Entries are always explicit (no automatic changelog).`

// knowledgeEnums are the enumerations of the MCP tools' parameters.
var knowledgeEnums = map[string]map[string][]string{
	"query_graph": {"operation": {"get", "search", "context"}, "entityType": {graphop.EntityAtom, graphop.EntityMolecule},
		"store": {op.StoreProject, op.StorePersonal}},
	"manage_graph": {"operation": {"create", "update", "delete"}, "entityType": {graphop.EntityAtom, graphop.EntityMolecule},
		"knowledgeMode": {"overwrite", "append"}, "store": {op.StoreProject, op.StorePersonal}},
	"manage_changelog": {"operation": {"append", "search"}, "parentType": {graphop.EntityAtom, graphop.EntityMolecule},
		"store": {op.StoreProject, op.StorePersonal}},
}

func init() {
	for _, k := range append(knowledgeSpecs, vectorSpecs...) {
		op := k.op
		Register(&Spec{
			Name:    op,
			Summary: k.summary,
			Usage:   k.usage,
			Tool:    k.tool,
			Enums:   knowledgeEnums[op],
			Hidden:  true,
			New:     k.new,
			Decode:  func(raw []byte) (Request, error) { return DecodeKnowledge(op, raw) },
			Run:     runKnowledge,
		})
	}
}

func runKnowledge(_ context.Context, env *Env, req Request) (*Outcome, error) {
	kr, ok := req.(knowledgeRequest)
	if !ok {
		return nil, fmt.Errorf("knowledge: unexpected request %T", req)
	}
	raw, err := CallKnowledge(env, kr)
	if err != nil {
		return nil, err
	}
	return KnowledgeOutcome(kr.apiRequest(), raw)
}

// CallKnowledge runs one knowledge operation in the kernel (the only
// process that opens stores) and returns its result as the kernel wrote it.
func CallKnowledge(env *Env, req Request) (json.RawMessage, error) {
	kr, ok := req.(knowledgeRequest)
	if !ok {
		return nil, fmt.Errorf("knowledge: unexpected request %T", req)
	}
	params, err := paramsOf(kr)
	if err != nil {
		return nil, err
	}
	if kr.apiRequest().Op() == "ingest" {
		return callIngest(env, params)
	}
	if raw, ok, err := clusterKnowledge(env, kr, params); ok {
		return raw, err
	}
	var raw json.RawMessage
	if err := env.Call("knowledge", &KnowledgeCall{Op: kr.apiRequest().Op(), Params: params}, &raw); err != nil {
		return nil, err
	}
	return raw, nil
}

// paramsOf is the JSON object a request was decoded from, else its
// encoding (moleculeId null written as "", which also unassigns).
func paramsOf(kr knowledgeRequest) (json.RawMessage, error) {
	if p := kr.params(); len(p) > 0 {
		return p, nil
	}
	r := kr.apiRequest()
	if m, ok := r.(*graphop.ManageGraph); ok && m.Unassign() {
		m.MoleculeID = new("")
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encode %s parameters: %w", r.Op(), err)
	}
	return b, nil
}

// KnowledgeOutcome turns a knowledge result into an Outcome: the result
// as the kernel wrote it (the --json result and MCP structured content)
// and api.Text's compact rendering. A verify that found breaks fails with
// INVARIANT_VIOLATION (exit 65) and the report as details.
func KnowledgeOutcome(req op.Request, raw json.RawMessage) (*Outcome, error) {
	typed := knowledgeResult(req)
	if err := json.Unmarshal(raw, typed); err != nil {
		return nil, fmt.Errorf("knowledge %s result: %w", req.Op(), err)
	}
	if h, ok := typed.(*graphop.HistoryResult); ok {
		fixHistoryState(h)
	}
	// What an agent stored reaches no terminal as a control sequence.
	out := &Outcome{Result: raw, Text: termtext.VisibleLines(api.Text(typed))}
	if v, ok := typed.(*graphop.VerifyResult); ok && !v.OK {
		n := 0
		for _, s := range v.Stores {
			n += len(s.Breaks)
		}
		out.Exit = ExitDataErr
		out.Fail = &Error{Exit: ExitDataErr, Code: string(op.CodeInvariant), Details: raw,
			Message: fmt.Sprintf("%d hash chain break(s): the knowledge history does not verify (details lists each)", n),
			Hint:    "pi-actors knowledge history id=<entity> shows an entity's deltas"}
	}
	return out, nil
}

// knowledgeResult is a pointer to the result type of req.
func knowledgeResult(req op.Request) any {
	switch r := req.(type) {
	case *graphop.QueryGraph:
		switch {
		case r.Operation == "context":
			return new(graphop.Context)
		case r.Operation == "get" && r.EntityType == graphop.EntityMolecule:
			return new(graphop.Molecule)
		case r.Operation == "get":
			return new(graphop.Atom)
		case r.EntityType == graphop.EntityMolecule:
			return new(op.Page[graphop.Molecule])
		}
		return new(op.Page[graphop.Atom])
	case *graphop.ManageGraph:
		switch {
		case r.Operation == "delete":
			return new(graphop.Deleted)
		case r.EntityType == graphop.EntityMolecule:
			return new(graphop.Molecule)
		}
		return new(graphop.Atom)
	case *graphop.ManageChangelog:
		if r.Operation == "append" {
			return new(graphop.ChangelogEntry)
		}
		return new(op.Page[graphop.ChangelogEntry])
	case *graphop.ProjectCreate:
		return new(graphop.Project)
	case *graphop.ProjectList:
		return new(op.Page[graphop.Project])
	case *graphop.History:
		return new(graphop.HistoryResult)
	case *graphop.Verify:
		return new(graphop.VerifyResult)
	case *graphop.TaskContext:
		return new(graphop.TaskContextResult)
	case *api.Init:
		return new(api.InitResult)
	case *api.Status:
		return new(api.StatusResult)
	}
	if v := vectorResult(req); v != nil {
		return v
	}
	return new(any)
}

// fixHistoryState decodes a reconstructed version into its entity type
// (it arrives as a JSON object).
func fixHistoryState(h *graphop.HistoryResult) {
	if h.State == nil {
		return
	}
	b, err := json.Marshal(h.State)
	if err != nil {
		return
	}
	var v any = new(graphop.Atom)
	if h.EntityType == graphop.EntityMolecule {
		v = new(graphop.Molecule)
	}
	if json.Unmarshal(b, v) == nil {
		h.State = v
	}
}

// KnowledgeBatch is the answer to a manage_graph batch: Count requests
// applied, and the results of the first ones (see RunKnowledgeBatch), in
// order, as the kernel wrote them.
type KnowledgeBatch struct {
	Store string
	Count int
	Items []json.RawMessage
	reqs  []json.RawMessage
}

// knowledgeBatchShown is how many results a batch's text shows.
const knowledgeBatchShown = 20

// RunKnowledgeBatch applies manage_graph requests (JSON objects of
// parameters) in the kernel in one transaction, all or none: the kernel
// decodes and validates them, and a failing request fails the batch with
// its error naming details.index. With all unset only the first results
// the text shows come back.
func RunKnowledgeBatch(env *Env, reqs []json.RawMessage, all bool) (*KnowledgeBatch, error) {
	call := &KnowledgeCall{Op: "manage_graph", Batch: reqs}
	if !all {
		call.Limit = knowledgeBatchShown
	}
	var res KnowledgeBatchResult
	if err := env.Call("knowledge", call, &res); err != nil {
		return nil, err
	}
	if res.Count != len(reqs) || (all && len(res.Items) != len(reqs)) {
		return nil, &Error{Exit: ExitSoftware, Code: "internal", Message: fmt.Sprintf("the kernel answered %d of %d batch requests", res.Count, len(reqs))}
	}
	return &KnowledgeBatch{Store: res.Store, Count: res.Count, Items: res.Items, reqs: reqs}, nil
}

// Outcome is request i's outcome (its result and text); i < len(Items).
func (b *KnowledgeBatch) Outcome(i int) (*Outcome, error) {
	req, err := api.Decode("manage_graph", b.reqs[i])
	if err != nil {
		return nil, err
	}
	return KnowledgeOutcome(req, b.Items[i])
}

// Text is the bounded text of a batch: a count, then the first results one
// line each.
func (b *KnowledgeBatch) Text() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "batch=%d applied in one transaction store=%s\n", b.Count, b.Store)
	for i := range b.Items {
		if i == knowledgeBatchShown {
			break
		}
		line := "(unreadable result)"
		if o, err := b.Outcome(i); err == nil {
			line, _, _ = strings.Cut(o.Text, "\n")
		}
		fmt.Fprintf(&sb, "  %s\n", line)
	}
	if b.Count > knowledgeBatchShown {
		fmt.Fprintf(&sb, "… %d more (--json for every result)\n", b.Count-knowledgeBatchShown)
	}
	return sb.String()
}
