package verbs

import (
	"encoding/json"

	"github.com/pi-actors/pi-actors/knowledge/api"
	"github.com/pi-actors/pi-actors/knowledge/api/graphop"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
)

// The knowledge operations are verbs of their own (query_graph,
// manage_graph and manage_changelog are MCP tools, as the knowledge graph
// spec names them); the CLI reaches them as `pi-actors knowledge <op>`.
// Each request type embeds its knowledge/api request, so its parameters,
// their descriptions, decoding (unknown and mistyped parameters are a
// VALIDATION_ERROR naming the field) and validation are the api's.

// knowledgeRequest is a verb request that carries a knowledge/api request
// and the JSON object it was decoded from.
type knowledgeRequest interface {
	Request
	apiRequest() op.Request
	params() json.RawMessage
}

// rawParams keeps the JSON object a request was decoded from: it travels
// to the kernel as given (re-encoding the typed request would drop an
// empty array such as relatedAtoms:=[], which clears the relations).
type rawParams struct{ raw json.RawMessage }

func (p *rawParams) params() json.RawMessage { return p.raw }

// QueryGraph is query_graph: get, search, context.
type QueryGraph struct {
	graphop.QueryGraph
	rawParams
}

// ManageGraph is manage_graph: create, update, delete.
type ManageGraph struct {
	graphop.ManageGraph
	rawParams
}

// ManageChangelog is manage_changelog: append, search.
type ManageChangelog struct {
	graphop.ManageChangelog
	rawParams
}

// ProjectCreate is `knowledge project create`.
type ProjectCreate struct {
	graphop.ProjectCreate
	rawParams
}

// ProjectList is `knowledge project list`.
type ProjectList struct {
	graphop.ProjectList
	rawParams
}

// KnowledgeHistory is `knowledge history`.
type KnowledgeHistory struct {
	graphop.History
	rawParams
}

// KnowledgeVerify is `knowledge verify`.
type KnowledgeVerify struct {
	graphop.Verify
	rawParams
}

// TaskContext is `knowledge task_context`.
type TaskContext struct {
	graphop.TaskContext
	rawParams
}

// KnowledgeInit is `knowledge init`.
type KnowledgeInit struct {
	api.Init
	rawParams
}

// KnowledgeStatus is `knowledge status`.
type KnowledgeStatus struct {
	api.Status
	rawParams
}

// Validate runs the api's validation.
func (r *QueryGraph) Validate() error      { return apiErr(r.QueryGraph.Validate()) }
func (r *ManageGraph) Validate() error     { return apiErr(r.ManageGraph.Validate()) }
func (r *ManageChangelog) Validate() error { return apiErr(r.ManageChangelog.Validate()) }
func (r *ProjectCreate) Validate() error   { return apiErr(r.ProjectCreate.Validate()) }
func (r *ProjectList) Validate() error     { return apiErr(r.ProjectList.Validate()) }
func (r *KnowledgeHistory) Validate() error {
	return apiErr(r.History.Validate())
}
func (r *KnowledgeVerify) Validate() error { return apiErr(r.Verify.Validate()) }
func (r *TaskContext) Validate() error     { return apiErr(r.TaskContext.Validate()) }
func (r *KnowledgeInit) Validate() error   { return apiErr(r.Init.Validate()) }
func (r *KnowledgeStatus) Validate() error { return apiErr(r.Status.Validate()) }

func (r *QueryGraph) apiRequest() op.Request       { return &r.QueryGraph }
func (r *ManageGraph) apiRequest() op.Request      { return &r.ManageGraph }
func (r *ManageChangelog) apiRequest() op.Request  { return &r.ManageChangelog }
func (r *ProjectCreate) apiRequest() op.Request    { return &r.ProjectCreate }
func (r *ProjectList) apiRequest() op.Request      { return &r.ProjectList }
func (r *KnowledgeHistory) apiRequest() op.Request { return &r.History }
func (r *KnowledgeVerify) apiRequest() op.Request  { return &r.Verify }
func (r *TaskContext) apiRequest() op.Request      { return &r.TaskContext }
func (r *KnowledgeInit) apiRequest() op.Request    { return &r.Init }
func (r *KnowledgeStatus) apiRequest() op.Request  { return &r.Status }

// wrapKnowledge returns the verb request that carries r, decoded from raw.
func wrapKnowledge(r op.Request, raw json.RawMessage) knowledgeRequest {
	switch x := r.(type) {
	case *graphop.QueryGraph:
		return &QueryGraph{QueryGraph: *x, rawParams: rawParams{raw}}
	case *graphop.ManageGraph:
		return &ManageGraph{ManageGraph: *x, rawParams: rawParams{raw}}
	case *graphop.ManageChangelog:
		return &ManageChangelog{ManageChangelog: *x, rawParams: rawParams{raw}}
	case *graphop.ProjectCreate:
		return &ProjectCreate{ProjectCreate: *x, rawParams: rawParams{raw}}
	case *graphop.ProjectList:
		return &ProjectList{ProjectList: *x, rawParams: rawParams{raw}}
	case *graphop.History:
		return &KnowledgeHistory{History: *x, rawParams: rawParams{raw}}
	case *graphop.Verify:
		return &KnowledgeVerify{Verify: *x, rawParams: rawParams{raw}}
	case *graphop.TaskContext:
		return &TaskContext{TaskContext: *x, rawParams: rawParams{raw}}
	case *api.Init:
		return &KnowledgeInit{Init: *x, rawParams: rawParams{raw}}
	case *api.Status:
		return &KnowledgeStatus{Status: *x, rawParams: rawParams{raw}}
	}
	return wrapVector(r, raw)
}

// apiErr keeps a nil *op.Error from becoming a non-nil error.
func apiErr(e *op.Error) error {
	if e == nil {
		return nil
	}
	return e
}

// knowledgeError is an api error as every front door reports it: the
// spec's code (VALIDATION_ERROR, NOT_FOUND, CONFLICT,
// INVARIANT_VIOLATION), its message and details, and its sysexits code.
func knowledgeError(e *op.Error) *Error {
	out := &Error{Exit: e.Exit(), Code: string(e.Code), Message: e.Message}
	if e.Details["reason"] == op.ReasonBusy {
		out.Hint = op.BusyHint
	}
	if len(e.Details) > 0 {
		out.Details = e.Details
	}
	return out
}

// DecodeKnowledge decodes and validates the parameters of a knowledge
// operation (api.Ops) into its verb request. Errors are the api's
// (VALIDATION_ERROR naming the field).
func DecodeKnowledge(op string, raw json.RawMessage) (Request, error) {
	r, err := api.Decode(op, raw)
	if err != nil {
		return nil, err
	}
	return wrapKnowledge(r, raw), nil
}

// KnowledgeCall is the kernel's "knowledge" operation: one knowledge
// operation (Op, Params), a batch of manage_graph requests applied in one
// transaction (Batch; Limit, when set, bounds how many results come back —
// the text shows a few), or Op "inspect" (the kernel's open stores and the
// caller's status).
type KnowledgeCall struct {
	Op     string            `json:"op"`
	Params json.RawMessage   `json:"params,omitempty"`
	Batch  []json.RawMessage `json:"batch,omitempty"`
	Limit  int               `json:"limit,omitempty"`
}

// KnowledgeBatchResult is the kernel's answer to a batch: Count requests
// applied, the results of the first ones (all unless the call's Limit is
// smaller), in order.
type KnowledgeBatchResult struct {
	Store string            `json:"store"`
	Count int               `json:"count"`
	Items []json.RawMessage `json:"items"`
}

// KnowledgeOpenStore is one store the kernel's knowledge actors hold open.
type KnowledgeOpenStore struct {
	Path   string `json:"path"`
	Layer  string `json:"layer"`
	Actor  string `json:"actor"`
	Users  int    `json:"users"`
	IdleMS int64  `json:"idle_ms"`
}

// KnowledgeInspect is inspect target=knowledge view=status: the stores
// the kernel holds open (each closes after IdleTimeoutMS unused) and the
// caller's stores (project and personal) with projects, counts, schema
// version and sizes.
type KnowledgeInspect struct {
	Open          []KnowledgeOpenStore `json:"open"`
	IdleTimeoutMS int64                `json:"idle_timeout_ms"`
	Stores        []api.StoreStatus    `json:"stores"`
	ProjectStore  string               `json:"project_store,omitempty"`
	PersonalStore string               `json:"personal_store"`
}
