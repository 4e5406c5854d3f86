package vectorop

import "slices"

// Domains of the vector graph (seed 001's Librarian, Archivalist and
// Academic), in their fixed order.
const (
	DomainCode     = "code"
	DomainHistory  = "history"
	DomainAcademic = "academic"
)

// AllDomains lists the domains in their fixed order.
var AllDomains = []string{DomainCode, DomainHistory, DomainAcademic}

// NodeTypes lists each domain's node types: seed 001's, plus two code
// types it lacks (chunk: a size-bounded piece of a file that is not Go;
// type: a Go named type that is neither a struct nor an interface).
var NodeTypes = map[string][]string{
	DomainCode: {"file", "package", "function", "method", "struct", "interface", "variable", "constant",
		"import", "type", "chunk"},
	DomainHistory:  {"entry", "session", "workflow", "outcome", "decision"},
	DomainAcademic: {"paper", "documentation", "best_practice", "rfc", "stack_overflow", "blog_post", "tutorial"},
}

// EdgeTypes lists the edge types of seed 001: structural code edges,
// history edges, cross-domain edges and academic edges. An edge is stored
// once, in its forward direction (calls, not called_by); walks follow it
// either way.
var EdgeTypes = []string{
	// code structure
	"calls", "imports", "implements", "embeds", "has_field", "has_method", "defines", "returns", "receives",
	// history
	"produced_by", "resulted_in", "similar_to", "followed_by", "supersedes",
	// cross-domain
	"modified", "created", "deleted", "based_on", "references", "validated_by", "documents", "uses_library",
	"implements_pattern",
	// academic
	"cites", "related_to",
}

// Trust levels of seed 001: who said it decides how much it weighs.
const (
	TrustCode       = 100 // current code: the source of truth
	TrustRecent     = 80  // recent verified history (a run's record)
	TrustStandard   = 70  // RFCs, official documentation
	TrustAcademic   = 60  // papers, best practices; verified history under 30 days
	TrustOldHistory = 40  // verified history older than 30 days
	TrustBlog       = 30  // blog posts, Stack Overflow answers
	TrustModel      = 20  // model output, unverified claims
)

// Source types of provenance records.
const (
	SourceCode     = "code"     // read from a file (ingest)
	SourceHistory  = "history"  // recorded by the kernel (run and message capture)
	SourceAcademic = "academic" // an external document
	SourceModel    = "model"    // an agent's (model's) statement
	SourceUser     = "user"     // given by a person
)

// sourceTypes lists the source types.
var sourceTypes = []string{SourceCode, SourceHistory, SourceAcademic, SourceModel, SourceUser}

// Conflict types of seed 001.
const (
	ConflictTemporal       = "temporal"        // old vs new on the same subject
	ConflictSourceMismatch = "source_mismatch" // code vs a non-code claim
	ConflictSemantic       = "semantic"        // contradictory claims
)

// isDomain reports whether d names a domain.
func isDomain(d string) bool { return slices.Contains(AllDomains, d) }

// isNodeType reports whether t is a node type of domain d (of any domain
// when d is empty).
func isNodeType(d, t string) bool {
	if d != "" {
		return slices.Contains(NodeTypes[d], t)
	}
	return domainOf(t) != ""
}

// domainOf returns the domain a node type belongs to ("" when none).
func domainOf(t string) string {
	for _, d := range AllDomains {
		if slices.Contains(NodeTypes[d], t) {
			return d
		}
	}
	return ""
}

// isEdgeType reports whether t is an edge type.
func isEdgeType(t string) bool { return slices.Contains(EdgeTypes, t) }

// DefaultTrust is a new node's trust level when the caller gives none:
// code 100; history 80 when verified, else 20; academic by type (rfc and
// documentation 70, stack_overflow and blog_post 30, others 60); a model
// source 20 whatever the domain.
func DefaultTrust(domain, typ, source string, verified bool) int {
	if source == SourceModel && !verified {
		return TrustModel
	}
	switch domain {
	case DomainCode:
		return TrustCode
	case DomainHistory:
		if verified {
			return TrustRecent
		}
		return TrustModel
	}
	switch typ {
	case "rfc", "documentation":
		return TrustStandard
	case "stack_overflow", "blog_post":
		return TrustBlog
	}
	return TrustAcademic
}
