package vectorop

// Search statuses.
const (
	StatusOK        = "ok"
	StatusNoMatches = "no_matches"
)

// Provenance is one source of a node: where it came from and when.
type Provenance struct {
	Source   string `json:"source"`           // code, history, academic, model or user
	Ref      string `json:"ref,omitempty"`    // path, URL, run:<id>, message id
	TaskID   string `json:"taskId,omitempty"` // the task that recorded it
	At       string `json:"at"`
	Verified bool   `json:"verified"`
}

// ConflictRef is an unresolved conflict a node takes part in.
type ConflictRef struct {
	ID          int    `json:"id"`
	Type        string `json:"type"`
	With        string `json:"with"`     // the other node's id
	WithName    string `json:"withName"` // and name
	Description string `json:"description"`
}

// AtomRef names a knowledge-graph atom a code node is linked to.
type AtomRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Hit is one search result. Score combines Similarity (cosine, 0-1),
// Trust (0-100), Freshness (0-1; superseded nodes 0.1) and Verified; the
// weights are seed 001's (0.35, 0.25, 0.25, +0.15). Snippet is a bounded
// preview of the content (node_get has all of it).
type Hit struct {
	ID           string        `json:"id"`
	Domain       string        `json:"domain"`
	Type         string        `json:"type"`
	Name         string        `json:"name"`
	Path         string        `json:"path,omitempty"`
	LineStart    int           `json:"lineStart,omitempty"`
	LineEnd      int           `json:"lineEnd,omitempty"`
	Snippet      string        `json:"snippet"`
	Score        float64       `json:"score"`
	Similarity   float64       `json:"similarity"`
	Trust        int           `json:"trust"`
	Freshness    float64       `json:"freshness"`
	Verified     bool          `json:"verified"`
	SupersededBy string        `json:"supersededBy,omitempty"`
	Warning      string        `json:"warning,omitempty"`
	CreatedAt    string        `json:"createdAt"`
	Provenance   []Provenance  `json:"provenance"`
	Conflicts    []ConflictRef `json:"conflicts,omitzero"`
	Atoms        []AtomRef     `json:"atoms,omitzero"`
	Store        string        `json:"store,omitempty"`
	// Node is the member whose knowledge holds the hit (scope=cluster).
	Node string `json:"node,omitempty"`
}

// SearchResult is search's result. Status is no_matches when the filters
// rule the query out (or nothing scores); AlsoExistsIn names other
// domains whose filters may hold the query's topics.
type SearchResult struct {
	Query        string   `json:"query"`
	Status       string   `json:"status"`
	Domain       string   `json:"domain,omitempty"`
	Hits         []Hit    `json:"hits"`
	AlsoExistsIn []string `json:"alsoExistsIn,omitzero"`
	Hint         string   `json:"hint,omitempty"`
	Store        string   `json:"store,omitempty"`
}

// DomainResult is one domain's part of search_all.
type DomainResult struct {
	Domain string `json:"domain"`
	Status string `json:"status"`
	Hits   []Hit  `json:"hits"`
}

// SearchAllResult is search_all's result, one entry per domain searched.
type SearchAllResult struct {
	Query   string         `json:"query"`
	Results []DomainResult `json:"results"`
	Store   string         `json:"store,omitempty"`
	// Nodes says how each member answered (scope=cluster).
	Nodes map[string]string `json:"nodes,omitempty"`
}

// SmartSearchResult is smart_search's result: hits by score within the
// token budget, how many rounds it took and whether it stopped confident.
type SmartSearchResult struct {
	Query        string   `json:"query"`
	Status       string   `json:"status"`
	Hits         []Hit    `json:"hits"`
	TokensUsed   int      `json:"tokensUsed"`
	TokenBudget  int      `json:"tokenBudget"`
	Rounds       int      `json:"rounds"`
	Confident    bool     `json:"confident"`
	AlsoExistsIn []string `json:"alsoExistsIn,omitzero"`
	Hint         string   `json:"hint,omitempty"`
	Store        string   `json:"store,omitempty"`
}

// RecallResult is recall's result: hits of every store searched, by
// score, each tagged with its store.
type RecallResult struct {
	Query  string   `json:"query"`
	Status string   `json:"status"`
	Hits   []Hit    `json:"hits"`
	Stores []string `json:"stores"`
	// Nodes says how each member answered (scope=cluster): ok, or why
	// its hits are missing (slow, unreachable, an error).
	Nodes map[string]string `json:"nodes,omitempty"`
}

// IngestResult is ingest's result.
type IngestResult struct {
	Path       string `json:"path"`
	Files      int    `json:"files"`      // files considered
	Indexed    int    `json:"indexed"`    // new files
	Changed    int    `json:"changed"`    // files whose content changed
	Unchanged  int    `json:"unchanged"`  // skipped: same content hash
	Skipped    int    `json:"skipped"`    // binary, too large or unreadable
	Nodes      int    `json:"nodes"`      // nodes created
	Superseded int    `json:"superseded"` // nodes superseded by new versions (or retired with their deleted file)
	Removed    int    `json:"removed"`    // files gone since they were ingested: their nodes retired
	AtomLinks  int    `json:"atomLinks"`  // links from code nodes to atoms
	DurationMS int64  `json:"durationMs"`
	Store      string `json:"store,omitempty"`
}

// NodeRef is a short reference to a node.
type NodeRef struct {
	ID           string `json:"id"`
	Domain       string `json:"domain"`
	Type         string `json:"type"`
	Name         string `json:"name"`
	Path         string `json:"path,omitempty"`
	CreatedAt    string `json:"createdAt"`
	SupersededBy string `json:"supersededBy,omitempty"`
}

// Node is one node of the vector graph in full.
type Node struct {
	NodeRef
	LineStart   int            `json:"lineStart,omitempty"`
	LineEnd     int            `json:"lineEnd,omitempty"`
	Content     string         `json:"content"`
	ContentHash string         `json:"contentHash"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	Trust       int            `json:"trust"`
	Verified    bool           `json:"verified"`
	UpdatedAt   string         `json:"updatedAt"`
	Embedder    string         `json:"embedder,omitempty"` // the embedder of its current vector; "" while pending
	Store       string         `json:"store,omitempty"`
}

// EdgeRef is one edge of a node: Direction out (from the node) or in.
type EdgeRef struct {
	Type      string  `json:"type"`
	Direction string  `json:"direction"`
	Node      NodeRef `json:"node"`
}

// NodeDetail is node_get's result. History, Code and Academic are the
// cross-domain answers: for a code node the history that touched it (and
// its older versions) and the documents about it; for a history node the
// code it touched and the sources it was based on; for an academic node
// the code it documents.
type NodeDetail struct {
	Node       Node          `json:"node"`
	Provenance []Provenance  `json:"provenance"`
	Conflicts  []ConflictRef `json:"conflicts"`
	Atoms      []AtomRef     `json:"atoms"`
	Edges      []EdgeRef     `json:"edges"`
	EdgesTotal int           `json:"edgesTotal"`
	History    []NodeRef     `json:"history,omitzero"`
	Code       []NodeRef     `json:"code,omitzero"`
	Academic   []NodeRef     `json:"academic,omitzero"`
	// LinkedCut names the lists of linked nodes (history, code,
	// academic) that reached their cap of 50: there may be more, which
	// traverse from the node walks.
	LinkedCut []string `json:"linkedCut,omitzero"`
}

// NodeAdded is node_add's result: the node and the conflicts its name
// raised with other nodes.
type NodeAdded struct {
	Node      Node          `json:"node"`
	Conflicts []ConflictRef `json:"conflicts"`
}

// Step is one node reached by a walk: at Depth hops, over an edge of type
// Via from node From (Direction relative to From).
type Step struct {
	NodeRef
	Depth     int    `json:"depth"`
	Via       string `json:"via"`
	From      string `json:"from"`
	Direction string `json:"direction"`
}

// TraverseResult is traverse's result. Truncated is true when the limit
// or a fan-out bound cut the walk short.
type TraverseResult struct {
	Start     NodeRef `json:"start"`
	Nodes     []Step  `json:"nodes"`
	Truncated bool    `json:"truncated"`
	Store     string  `json:"store,omitempty"`
}

// ConflictRecord is a recorded conflict between two nodes.
type ConflictRecord struct {
	ID          int    `json:"id"`
	Type        string `json:"type"`
	Subject     string `json:"subject"`
	NodeA       string `json:"nodeA"`
	NameA       string `json:"nameA"`
	NodeB       string `json:"nodeB"`
	NameB       string `json:"nameB"`
	Description string `json:"description"`
	Resolved    bool   `json:"resolved"`
	Resolution  string `json:"resolution,omitempty"`
	DetectedAt  string `json:"detectedAt"`
	ResolvedAt  string `json:"resolvedAt,omitempty"`
	Store       string `json:"store,omitempty"`
}

// IndexStatus is one domain's index in a store's VectorStatus.
type IndexStatus struct {
	Domain        string `json:"domain"`
	Nodes         int    `json:"nodes"`
	Vectors       int    `json:"vectors"`       // in memory, of the current embedder
	Index         string `json:"index"`         // exact, hnsw, building or unloaded
	FilterKeys    int    `json:"filterKeys"`    // keys in the built filter
	FilterPending int    `json:"filterPending"` // keys added since
}

// EmbedProgress is the background embedder's progress: nodes whose vector
// is missing or was made by another embedder get (re-)embedded.
type EmbedProgress struct {
	Running bool   `json:"running"`
	Done    int    `json:"done"`
	Total   int    `json:"total"`
	Error   string `json:"error,omitempty"`
}

// VectorStatus is the vector graph part of a store's status.
type VectorStatus struct {
	Embedder  string        `json:"embedder"`
	Dim       int           `json:"dim"`
	Nodes     int           `json:"nodes"`
	Edges     int           `json:"edges"`
	Pending   int           `json:"pending"` // nodes without a vector of the current embedder
	Conflicts int           `json:"conflicts"`
	Domains   []IndexStatus `json:"domains"`
	Embedding EmbedProgress `json:"embedding"`
}
