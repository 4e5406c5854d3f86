package vectorop

import (
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/pi-actors/pi-actors/knowledge/api/op"
)

// checkQuery trims a search query and requires it.
func checkQuery(q *string) *op.Error {
	if len(*q) > op.MaxQuery {
		return op.Invalid("query", "query is %d bytes; at most %d", len(*q), op.MaxQuery)
	}
	*q = strings.TrimSpace(*q)
	if *q == "" {
		return op.Invalid("query", "query is required: words, identifiers or a question to search for")
	}
	return nil
}

// checkDomainType checks domain and type; a type without a domain sets
// the domain to the type's.
func checkDomainType(domain, typ *string) *op.Error {
	if *domain != "" && !isDomain(*domain) {
		return op.Invalid("domain", "domain must be one of %s, not %q", strings.Join(AllDomains, ", "), *domain)
	}
	if *typ == "" {
		return nil
	}
	if *domain == "" {
		if *domain = domainOf(*typ); *domain == "" {
			return op.Invalid("type", "type %q is no node type; code: %s; history: %s; academic: %s", *typ,
				strings.Join(NodeTypes[DomainCode], ", "), strings.Join(NodeTypes[DomainHistory], ", "), strings.Join(NodeTypes[DomainAcademic], ", "))
		}
		return nil
	}
	if !isNodeType(*domain, *typ) {
		return op.Invalid("type", "type %q is not a %s node type; use one of %s", *typ, *domain, strings.Join(NodeTypes[*domain], ", "))
	}
	return nil
}

func checkDomains(l op.StringList) *op.Error {
	for _, d := range l {
		if !isDomain(d) {
			return op.Invalid("domains", "domain %q is unknown; use a comma-separated list of %s", d, strings.Join(AllDomains, ", "))
		}
	}
	return nil
}

// Validate checks search parameters.
func (s *Search) Validate() *op.Error {
	return op.First(checkQuery(&s.Query), checkDomainType(&s.Domain, &s.Type), op.CheckRange("limit", s.Limit, 1, op.MaxLimit), op.CheckStore(s.Store))
}

// Validate checks search_all parameters.
func (s *SearchAll) Validate() *op.Error {
	return op.First(checkQuery(&s.Query), checkDomains(s.Domains), op.CheckRange("limitPerDomain", s.LimitPerDomain, 1, MaxLimitPerDomain), op.CheckStore(s.Store),
		op.OneOf("scope", s.Scope, "", "local", "cluster"), op.CheckRange("timeout_ms", s.TimeoutMS, 1, 60000))
}

// Validate checks smart_search parameters.
func (s *SmartSearch) Validate() *op.Error {
	return op.First(checkQuery(&s.Query), checkDomains(s.Domains), op.CheckRange("tokenBudget", s.TokenBudget, MinTokenBudget, MaxTokenBudget),
		op.OneOf("thoroughness", s.Thoroughness, "", "quick", "moderate", "thorough"), op.CheckStore(s.Store))
}

// Validate checks recall parameters.
func (r *Recall) Validate() *op.Error {
	return op.First(checkQuery(&r.Query), checkDomainType(&r.Domain, &r.Type), op.CheckRange("limit", r.Limit, 1, op.MaxLimit), op.CheckStore(r.Store),
		op.OneOf("scope", r.Scope, "", "local", "cluster"), op.CheckRange("timeout_ms", r.TimeoutMS, 1, 60000))
}

// Validate checks ingest parameters.
func (i *Ingest) Validate() *op.Error {
	i.Path = strings.TrimSpace(i.Path)
	i.Glob = strings.TrimSpace(i.Glob)
	switch {
	case i.Path == "":
		return op.Invalid("path", "path is required: the file or directory to index, e.g. path=.")
	case len(i.Path) > op.MaxPathLen:
		return op.Invalid("path", "path is %d bytes; at most %d", len(i.Path), op.MaxPathLen)
	case len(i.Glob) > op.MaxPatternLen:
		return op.Invalid("glob", "glob is %d bytes; at most %d", len(i.Glob), op.MaxPatternLen)
	case i.Glob != "" && !doublestar.ValidatePattern(i.Glob):
		return op.Invalid("glob", "glob %q is not a valid pattern (unclosed [ or {, or a trailing \\)", i.Glob)
	}
	return op.CheckStore(i.Store)
}

// Validate checks node_add parameters.
func (n *NodeAdd) Validate() *op.Error {
	if n.Domain == "" {
		return op.Invalid("domain", "domain is required: one of %s", strings.Join(AllDomains, ", "))
	}
	if n.Type == "" {
		return op.Invalid("type", "type is required: one of %s", strings.Join(NodeTypes[n.Domain], ", "))
	}
	if e := checkDomainType(&n.Domain, &n.Type); e != nil {
		return e
	}
	name := n.Name
	if e := op.CheckName(&name); e != nil {
		return e
	}
	n.Name = name
	n.Content = strings.TrimSpace(n.Content)
	n.Ref = strings.TrimSpace(n.Ref)
	switch {
	case len(n.Content) > MaxContent:
		return op.Invalid("content", "content is %d bytes after trimming; at most %d (32 KB): split it into several nodes", len(n.Content), MaxContent)
	case utf8.RuneCountInString(n.Ref) > MaxRef:
		return op.Invalid("ref", "ref is %d characters; at most %d", utf8.RuneCountInString(n.Ref), MaxRef)
	case len(n.Links) > MaxLinks:
		return op.Invalid("links", "%d links; at most %d", len(n.Links), MaxLinks)
	}
	if n.Source == "" {
		n.Source = SourceModel
	}
	if e := op.First(op.OneOf("source", n.Source, sourceTypes...), op.CheckRange("trust", n.Trust, 0, 100),
		op.CheckID("supersedes", &n.Supersedes, false), op.CheckTaskID("taskId", n.TaskID), op.CheckStore(n.Store)); e != nil {
		return e
	}
	for i := range n.Links {
		l := &n.Links[i]
		l.To = strings.ToLower(strings.TrimSpace(l.To))
		if !op.IsID(l.To) {
			return op.Invalid("links", "link %d: to must be a node id (a UUID), got %q", i+1, l.To)
		}
		if !isEdgeType(l.Type) {
			return op.Invalid("links", "link %d: type %q is no edge type; use one of %s", i+1, l.Type, strings.Join(EdgeTypes, ", "))
		}
	}
	return nil
}

// Validate checks node_get parameters.
func (n *NodeGet) Validate() *op.Error {
	return op.First(op.CheckID("id", &n.ID, true), op.CheckStore(n.Store))
}

// Validate checks traverse parameters.
func (t *Traverse) Validate() *op.Error {
	if e := op.First(op.CheckID("id", &t.ID, true), op.OneOf("direction", t.Direction, "", "out", "in", "both"),
		op.CheckRange("depth", t.Depth, 1, MaxDepth), op.CheckRange("fanOut", t.FanOut, 1, MaxFanOut),
		op.CheckRange("limit", t.Limit, 1, MaxWalkLimit), op.CheckStore(t.Store)); e != nil {
		return e
	}
	for _, et := range t.EdgeTypes {
		if !isEdgeType(et) {
			return op.Invalid("edgeTypes", "edge type %q is unknown; use a comma-separated list of %s", et, strings.Join(EdgeTypes, ", "))
		}
	}
	return nil
}

// Validate checks conflicts parameters.
func (c *Conflicts) Validate() *op.Error {
	if e := op.First(op.OneOf("operation", c.Operation, "", "list", "resolve"), op.CheckStore(c.Store)); e != nil {
		return e
	}
	resolve := c.Operation == "resolve"
	where := "operation=" + c.Operation
	if e := op.First(op.NotFor("id", c.ID != nil, where, resolve), op.NotFor("resolution", c.Resolution != "", where, resolve),
		op.NotFor("all", c.All, where, !resolve), op.NotFor("limit", c.Limit != nil, where, !resolve),
		op.NotFor("offset", c.Offset != nil, where, !resolve)); e != nil {
		return e
	}
	if !resolve {
		return op.CheckPage(c.Limit, c.Offset)
	}
	if c.ID == nil || *c.ID < 1 {
		return op.Invalid("id", "id is required for operation=resolve: the conflict's id (see conflicts operation=list)")
	}
	c.Resolution = strings.TrimSpace(c.Resolution)
	if c.Resolution == "" || len(c.Resolution) > MaxResolution {
		return op.Invalid("resolution", "resolution is required for operation=resolve: what was decided and why, 1 byte to 4 KB")
	}
	return nil
}
