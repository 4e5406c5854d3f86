package verbs

import (
	"encoding/json"

	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/api/vectorop"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// The vector graph's operations (knowledge part 2): search, search_all,
// smart_search and recall are read-only MCP tools; ingest, node_add,
// node_get, traverse and conflicts are reached as `pi-actors knowledge
// <op>` (and as kernel messages).

// KnowledgeSearch is `knowledge search`.
type KnowledgeSearch struct {
	vectorop.Search
	rawParams
}

// KnowledgeSearchAll is `knowledge search_all`.
type KnowledgeSearchAll struct {
	vectorop.SearchAll
	rawParams
}

// KnowledgeSmartSearch is `knowledge smart_search`.
type KnowledgeSmartSearch struct {
	vectorop.SmartSearch
	rawParams
}

// KnowledgeRecall is `knowledge recall`.
type KnowledgeRecall struct {
	vectorop.Recall
	rawParams
}

// KnowledgeIngest is `knowledge ingest`.
type KnowledgeIngest struct {
	vectorop.Ingest
	rawParams
}

// KnowledgeNodeAdd is `knowledge node_add`.
type KnowledgeNodeAdd struct {
	vectorop.NodeAdd
	rawParams
}

// KnowledgeNodeGet is `knowledge node_get`.
type KnowledgeNodeGet struct {
	vectorop.NodeGet
	rawParams
}

// KnowledgeTraverse is `knowledge traverse`.
type KnowledgeTraverse struct {
	vectorop.Traverse
	rawParams
}

// KnowledgeConflicts is `knowledge conflicts`.
type KnowledgeConflicts struct {
	vectorop.Conflicts
	rawParams
}

func (r *KnowledgeSearch) Validate() error      { return apiErr(r.Search.Validate()) }
func (r *KnowledgeSearchAll) Validate() error   { return apiErr(r.SearchAll.Validate()) }
func (r *KnowledgeSmartSearch) Validate() error { return apiErr(r.SmartSearch.Validate()) }
func (r *KnowledgeRecall) Validate() error      { return apiErr(r.Recall.Validate()) }
func (r *KnowledgeIngest) Validate() error      { return apiErr(r.Ingest.Validate()) }
func (r *KnowledgeNodeAdd) Validate() error     { return apiErr(r.NodeAdd.Validate()) }
func (r *KnowledgeNodeGet) Validate() error     { return apiErr(r.NodeGet.Validate()) }
func (r *KnowledgeTraverse) Validate() error    { return apiErr(r.Traverse.Validate()) }
func (r *KnowledgeConflicts) Validate() error   { return apiErr(r.Conflicts.Validate()) }

func (r *KnowledgeSearch) apiRequest() op.Request      { return &r.Search }
func (r *KnowledgeSearchAll) apiRequest() op.Request   { return &r.SearchAll }
func (r *KnowledgeSmartSearch) apiRequest() op.Request { return &r.SmartSearch }
func (r *KnowledgeRecall) apiRequest() op.Request      { return &r.Recall }
func (r *KnowledgeIngest) apiRequest() op.Request      { return &r.Ingest }
func (r *KnowledgeNodeAdd) apiRequest() op.Request     { return &r.NodeAdd }
func (r *KnowledgeNodeGet) apiRequest() op.Request     { return &r.NodeGet }
func (r *KnowledgeTraverse) apiRequest() op.Request    { return &r.Traverse }
func (r *KnowledgeConflicts) apiRequest() op.Request   { return &r.Conflicts }

// wrapVector is wrapKnowledge for the vector graph's requests.
func wrapVector(r op.Request, raw []byte) knowledgeRequest {
	p := rawParams{raw}
	switch x := r.(type) {
	case *vectorop.Search:
		return &KnowledgeSearch{*x, p}
	case *vectorop.SearchAll:
		return &KnowledgeSearchAll{*x, p}
	case *vectorop.SmartSearch:
		return &KnowledgeSmartSearch{*x, p}
	case *vectorop.Recall:
		return &KnowledgeRecall{*x, p}
	case *vectorop.Ingest:
		return &KnowledgeIngest{*x, p}
	case *vectorop.NodeAdd:
		return &KnowledgeNodeAdd{*x, p}
	case *vectorop.NodeGet:
		return &KnowledgeNodeGet{*x, p}
	case *vectorop.Traverse:
		return &KnowledgeTraverse{*x, p}
	case *vectorop.Conflicts:
		return &KnowledgeConflicts{*x, p}
	}
	return nil
}

// vectorResult is knowledgeResult for the vector graph's requests.
func vectorResult(req op.Request) any {
	switch r := req.(type) {
	case *vectorop.Search:
		return new(vectorop.SearchResult)
	case *vectorop.SearchAll:
		return new(vectorop.SearchAllResult)
	case *vectorop.SmartSearch:
		return new(vectorop.SmartSearchResult)
	case *vectorop.Recall:
		return new(vectorop.RecallResult)
	case *vectorop.Ingest:
		return new(vectorop.IngestResult)
	case *vectorop.NodeAdd:
		return new(vectorop.NodeAdded)
	case *vectorop.NodeGet:
		return new(vectorop.NodeDetail)
	case *vectorop.Traverse:
		return new(vectorop.TraverseResult)
	case *vectorop.Conflicts:
		if r.Operation == "resolve" {
			return new(vectorop.ConflictRecord)
		}
		return new(op.Page[vectorop.ConflictRecord])
	}
	return nil
}

var readOnlyTool = &Annotations{ReadOnly: true, Idempotent: true}

// vectorSpecs are the vector graph's operations (registered with the
// other knowledge operations).
var vectorSpecs = []knowledgeSpec{
	{"search", "vector search of the knowledge graph (code, history, academic), scored by similarity, trust and freshness", "pi-actors knowledge search query=<text> [domain=code|history|academic] [type=<node type>] [limit=10] [store=project|personal] [--json]",
		readOnlyTool, func() Request { return new(KnowledgeSearch) }},
	{"search_all", "vector search of every domain at once, grouped by domain", "pi-actors knowledge search_all query=<text> [domains=code,history] [limitPerDomain=5] [--json]",
		readOnlyTool, func() Request { return new(KnowledgeSearchAll) }},
	{"smart_search", "search within a token budget, widening until confident", "pi-actors knowledge smart_search query=<text> [tokenBudget=1000] [thoroughness=quick|moderate|thorough] [--json]",
		readOnlyTool, func() Request { return new(KnowledgeSmartSearch) }},
	{"recall", "have I done something like this before? the project store then the personal one, with provenance", "pi-actors knowledge recall query=<task, error or name> [domain=…] [limit=10] [--json]",
		readOnlyTool, func() Request { return new(KnowledgeRecall) }},
	{"ingest", "index files into the code domain (unchanged files skipped, changed ones superseded)", "pi-actors knowledge ingest path=DIR [glob=**/*.go] [store=project|personal] [--json]",
		nil, func() Request { return new(KnowledgeIngest) }},
	{"node_add", "add a node (a decision, a document, a paper…) to the vector graph", "pi-actors knowledge node_add domain=history|academic|code type=<type> name=<title> content=<text> [--json]",
		nil, func() Request { return new(KnowledgeNodeAdd) }},
	{"node_get", "one node of the vector graph with its edges, provenance and conflicts", "pi-actors knowledge node_get id=<node id> [--json]",
		nil, func() Request { return new(KnowledgeNodeGet) }},
	{"traverse", "walk the vector graph's edges from a node (depth ≤ 5)", "pi-actors knowledge traverse id=<node id> [direction=out|in|both] [edgeTypes=a,b] [depth=2] [--json]",
		nil, func() Request { return new(KnowledgeTraverse) }},
	{"conflicts", "list recorded conflicts between nodes, or resolve one", "pi-actors knowledge conflicts [operation=list|resolve] [id=N resolution=<what was decided>] [--json]",
		nil, func() Request { return new(KnowledgeConflicts) }},
}

// callIngest runs `knowledge ingest` as a kernel stream, drawing its
// progress on env.Progress (a terminal's stderr) while it works.
func callIngest(env *Env, params json.RawMessage) (json.RawMessage, error) {
	c, err := env.Dial(true)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	req := wire.Request{Op: "knowledge_ingest", Session: env.Session, Cwd: env.Cwd, Env: env.Environ}
	if err := req.Encode(&KnowledgeCall{Op: "ingest", Params: params}); err != nil {
		return nil, err
	}
	if err := c.Send(req); err != nil {
		return nil, err
	}
	var bar *ProgressBar
	defer func() { bar.Done() }()
	shown := 0
	for {
		resp, err := c.Read()
		if err != nil {
			return nil, err
		}
		var frame struct {
			Progress *struct{ Done, Total int } `json:"progress"`
			Result   json.RawMessage            `json:"result"`
		}
		if err := resp.Decode(&frame); err != nil {
			return nil, err
		}
		if frame.Progress == nil {
			return frame.Result, nil
		}
		if bar == nil {
			bar = env.StartProgress("ingest", frame.Progress.Total)
		}
		bar.Add(frame.Progress.Done - shown)
		shown = frame.Progress.Done
	}
}
