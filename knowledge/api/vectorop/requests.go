package vectorop

import (
	"github.com/pi-actors/pi-actors/knowledge/api/op"
)

// Defaults and bounds of the vector graph operations.
const (
	DefaultSearchLimit    = 10
	DefaultLimitPerDomain = 5
	MaxLimitPerDomain     = 50
	DefaultTokenBudget    = 1000
	MinTokenBudget        = 100
	MaxTokenBudget        = 32000
	DefaultDepth          = 2
	MaxDepth              = 5
	DefaultFanOut         = 20
	MaxFanOut             = 100
	DefaultWalkLimit      = 100
	MaxWalkLimit          = 500
	MaxLinks              = 50
	MaxContent            = 32 << 10 // bytes of a node's content given by a caller
	MaxRef                = 1024     // characters of a node's ref
	MaxResolution         = 4 << 10  // bytes of a conflict's resolution
)

// Search is search: similarity search in one store (the project store
// when there is one, else the personal store; store= chooses), each hit
// scored by similarity, trust, freshness and verification.
type Search struct {
	Query  string `json:"query" jsonschema:"what to look for: words, identifiers, a question"`
	Domain string `json:"domain,omitempty" jsonschema:"code, history or academic; default all three"`
	Type   string `json:"type,omitempty" jsonschema:"only nodes of this type (function, outcome, rfc, …); implies its domain"`
	Limit  *int   `json:"limit,omitempty" jsonschema:"how many hits; default 10, at most 100"`
	Store  string `json:"store,omitempty" jsonschema:"search this store: project or personal; default the project store when there is one"`
}

// SearchAll is search_all: one search per domain, grouped by domain, with
// a per-domain limit; a domain whose filter rules the query out answers
// no_matches at once.
type SearchAll struct {
	Query          string        `json:"query" jsonschema:"what to look for"`
	Domains        op.StringList `json:"domains,omitempty" jsonschema:"comma-separated domains to search (code, history, academic); default all"`
	LimitPerDomain *int          `json:"limitPerDomain,omitempty" jsonschema:"hits per domain; default 5, at most 50"`
	Store          string        `json:"store,omitempty" jsonschema:"project or personal; default the project store when there is one"`
	Scope          string        `json:"scope,omitempty" jsonschema:"local (default) or cluster: every member's knowledge asked in parallel, hits merged by score and labelled with their node"`
	TimeoutMS      *int          `json:"timeout_ms,omitempty" jsonschema:"with scope cluster: how long to wait for a member (default 1000 ms); a slower one is reported, not waited for"`
}

// SmartSearch is smart_search: it widens the search round by round until
// it is confident (per thoroughness) or the token budget is spent.
type SmartSearch struct {
	Query        string        `json:"query" jsonschema:"what to look for"`
	TokenBudget  *int          `json:"tokenBudget,omitempty" jsonschema:"most tokens the hits may take (about 4 characters each); default 1000, 100 to 32000"`
	Thoroughness string        `json:"thoroughness,omitempty" jsonschema:"quick (stop at the first good hit), moderate (default: a few good hits) or thorough (fill the budget)"`
	Domains      op.StringList `json:"domains,omitempty" jsonschema:"comma-separated domains to search; default all"`
	Store        string        `json:"store,omitempty" jsonschema:"project or personal; default the project store when there is one"`
}

// Recall is recall: the project store, then the personal store, merged by
// score, deduplicated (the project's copy wins), each hit tagged with its
// store: "have I done something like this before?".
type Recall struct {
	Query     string `json:"query" jsonschema:"what to remember: a task, an error, a name"`
	Domain    string `json:"domain,omitempty" jsonschema:"code, history or academic; default all"`
	Type      string `json:"type,omitempty" jsonschema:"only nodes of this type; implies its domain"`
	Limit     *int   `json:"limit,omitempty" jsonschema:"how many hits; default 10, at most 100"`
	Store     string `json:"store,omitempty" jsonschema:"project or personal only; default both, project first"`
	Scope     string `json:"scope,omitempty" jsonschema:"local (default) or cluster: every member's knowledge asked in parallel, hits merged by score and labelled with their node"`
	TimeoutMS *int   `json:"timeout_ms,omitempty" jsonschema:"with scope cluster: how long to wait for a member (default 1000 ms); a slower one is reported, not waited for"`
}

// Ingest is ingest: index files into the code domain. Unchanged files
// (same content hash) are skipped; a changed file supersedes its old
// nodes. Go files are split by declaration, other files into
// size-bounded chunks.
type Ingest struct {
	Path  string `json:"path" jsonschema:"file or directory to index (relative to the cwd)"`
	Glob  string `json:"glob,omitempty" jsonschema:"only files whose path below path matches this glob, e.g. **/*.go; default every text file"`
	Store string `json:"store,omitempty" jsonschema:"project or personal; default the project store when there is one"`
}

// Link is an edge a new node gets: from the new node to To.
type Link struct {
	To   string `json:"to" jsonschema:"id of the node the edge points to"`
	Type string `json:"type" jsonschema:"edge type (references, based_on, modified, documents, related_to, …)"`
}

// Links decodes from a JSON array of {to, type} or a string holding one
// (unknown keys are errors).
type Links []Link

// UnmarshalJSON accepts [{"to":…,"type":…}] or the same as a string.
func (l *Links) UnmarshalJSON(data []byte) error { return op.DecodeList(data, l) }

// Shape is what Links take.
func (Links) Shape() string {
	return `a JSON array of {"to": …, "type": …} (or a string holding one)`
}

// NodeAdd is node_add: record one node (a decision, a document, a
// finding) with its provenance, and optionally its edges.
type NodeAdd struct {
	Domain     string `json:"domain" jsonschema:"code, history or academic"`
	Type       string `json:"type" jsonschema:"node type of the domain (decision, entry, documentation, rfc, paper, …)"`
	Name       string `json:"name" jsonschema:"short title, 1-255 characters; nodes with the same name are checked for conflicts"`
	Content    string `json:"content,omitempty" jsonschema:"the text, at most 32 KB"`
	Source     string `json:"source,omitempty" jsonschema:"who says so: model (default: an agent's statement, trust 20), user, code, history or academic"`
	Ref        string `json:"ref,omitempty" jsonschema:"where it comes from: a URL, a file path, a task id"`
	Verified   bool   `json:"verified,omitempty" jsonschema:"true when checked against code or by a person"`
	Trust      *int   `json:"trust,omitempty" jsonschema:"trust level 0-100; default by domain, type, source and verified (code 100 … model output 20)"`
	Links      Links  `json:"links,omitempty" jsonschema:"JSON array of edges from the new node: [{to, type}], at most 50"`
	Supersedes string `json:"supersedes,omitempty" jsonschema:"id of a node this one replaces (it is marked superseded and ranked far lower)"`
	TaskID     string `json:"taskId,omitempty" jsonschema:"task recording the node; default the calling run"`
	Store      string `json:"store,omitempty" jsonschema:"project or personal; default the project store when there is one"`
}

// NodeGet is node_get: one node with its provenance, conflicts, linked
// atoms, edges and the cross-domain answers of seed 001 (history for a
// code node, code for a history node, documents for code).
type NodeGet struct {
	ID    string `json:"id" jsonschema:"node id"`
	Store string `json:"store,omitempty" jsonschema:"project or personal; default the store that holds the id"`
}

// Traverse is traverse: a bounded walk of the graph from one node.
type Traverse struct {
	ID        string        `json:"id" jsonschema:"node to start from"`
	Direction string        `json:"direction,omitempty" jsonschema:"out (edges from the node), in (edges to it) or both (default)"`
	EdgeTypes op.StringList `json:"edgeTypes,omitempty" jsonschema:"comma-separated edge types to follow; default all"`
	Depth     *int          `json:"depth,omitempty" jsonschema:"hops; default 2, at most 5"`
	FanOut    *int          `json:"fanOut,omitempty" jsonschema:"edges followed per node; default 20, at most 100"`
	Limit     *int          `json:"limit,omitempty" jsonschema:"nodes returned; default 100, at most 500"`
	Store     string        `json:"store,omitempty" jsonschema:"project or personal; default the store that holds the id"`
}

// Conflicts is conflicts: list recorded conflicts (unresolved first) or
// resolve one. Nothing resolves a conflict but this operation.
type Conflicts struct {
	Operation  string `json:"operation,omitempty" jsonschema:"list (default) or resolve"`
	ID         *int   `json:"id,omitempty" jsonschema:"resolve: the conflict's id"`
	Resolution string `json:"resolution,omitempty" jsonschema:"resolve: what was decided and why, 1 byte to 4 KB"`
	All        bool   `json:"all,omitempty" jsonschema:"list: include resolved conflicts"`
	Limit      *int   `json:"limit,omitempty" jsonschema:"list page size; default 20, at most 100"`
	Offset     *int   `json:"offset,omitempty" jsonschema:"list page offset; default 0"`
	Store      string `json:"store,omitempty" jsonschema:"project or personal; default both (resolve: the store that holds the id)"`
}

// Requests makes the vector graph's requests, in their fixed order.
var Requests = op.Table{
	func() op.Request { return new(Search) },
	func() op.Request { return new(SearchAll) },
	func() op.Request { return new(SmartSearch) },
	func() op.Request { return new(Recall) },
	func() op.Request { return new(Ingest) },
	func() op.Request { return new(NodeAdd) },
	func() op.Request { return new(NodeGet) },
	func() op.Request { return new(Traverse) },
	func() op.Request { return new(Conflicts) },
}

// Op names.
func (*Search) Op() string      { return "search" }
func (*SearchAll) Op() string   { return "search_all" }
func (*SmartSearch) Op() string { return "smart_search" }
func (*Recall) Op() string      { return "recall" }
func (*Ingest) Op() string      { return "ingest" }
func (*NodeAdd) Op() string     { return "node_add" }
func (*NodeGet) Op() string     { return "node_get" }
func (*Traverse) Op() string    { return "traverse" }
func (*Conflicts) Op() string   { return "conflicts" }

// UnmarshalJSON decodes strictly (see op.Unmarshal).
func (s *Search) UnmarshalJSON(b []byte) error { return op.Unmarshal(b, s) }

// UnmarshalJSON decodes strictly (see op.Unmarshal).
func (s *SearchAll) UnmarshalJSON(b []byte) error { return op.Unmarshal(b, s) }

// UnmarshalJSON decodes strictly (see op.Unmarshal).
func (s *SmartSearch) UnmarshalJSON(b []byte) error { return op.Unmarshal(b, s) }

// UnmarshalJSON decodes strictly (see op.Unmarshal).
func (r *Recall) UnmarshalJSON(b []byte) error { return op.Unmarshal(b, r) }

// UnmarshalJSON decodes strictly (see op.Unmarshal).
func (i *Ingest) UnmarshalJSON(b []byte) error { return op.Unmarshal(b, i) }

// UnmarshalJSON decodes strictly (see op.Unmarshal).
func (n *NodeAdd) UnmarshalJSON(b []byte) error { return op.Unmarshal(b, n) }

// UnmarshalJSON decodes strictly (see op.Unmarshal).
func (n *NodeGet) UnmarshalJSON(b []byte) error { return op.Unmarshal(b, n) }

// UnmarshalJSON decodes strictly (see op.Unmarshal).
func (t *Traverse) UnmarshalJSON(b []byte) error { return op.Unmarshal(b, t) }

// UnmarshalJSON decodes strictly (see op.Unmarshal).
func (c *Conflicts) UnmarshalJSON(b []byte) error { return op.Unmarshal(b, c) }
