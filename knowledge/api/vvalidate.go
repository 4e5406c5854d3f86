package api

import (
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
)

// checkQuery trims a search query and requires it.
func checkQuery(q *string) *Error {
	if len(*q) > MaxQuery {
		return Invalid("query", "query is %d bytes; at most %d", len(*q), MaxQuery)
	}
	*q = strings.TrimSpace(*q)
	if *q == "" {
		return Invalid("query", "query is required: words, identifiers or a question to search for")
	}
	return nil
}

// checkDomainType checks domain and type; a type without a domain sets
// the domain to the type's.
func checkDomainType(domain, typ *string) *Error {
	if *domain != "" && !IsDomain(*domain) {
		return Invalid("domain", "domain must be one of %s, not %q", strings.Join(AllDomains, ", "), *domain)
	}
	if *typ == "" {
		return nil
	}
	if *domain == "" {
		if *domain = DomainOf(*typ); *domain == "" {
			return Invalid("type", "type %q is no node type; code: %s; history: %s; academic: %s", *typ,
				strings.Join(NodeTypes[DomainCode], ", "), strings.Join(NodeTypes[DomainHistory], ", "), strings.Join(NodeTypes[DomainAcademic], ", "))
		}
		return nil
	}
	if !IsNodeType(*domain, *typ) {
		return Invalid("type", "type %q is not a %s node type; use one of %s", *typ, *domain, strings.Join(NodeTypes[*domain], ", "))
	}
	return nil
}

func checkDomains(l StringList) *Error {
	for _, d := range l {
		if !IsDomain(d) {
			return Invalid("domains", "domain %q is unknown; use a comma-separated list of %s", d, strings.Join(AllDomains, ", "))
		}
	}
	return nil
}

// Validate checks search parameters.
func (s *Search) Validate() *Error {
	return first(checkQuery(&s.Query), checkDomainType(&s.Domain, &s.Type), checkRange("limit", s.Limit, 1, MaxLimit), checkStore(s.Store))
}

// Validate checks search_all parameters.
func (s *SearchAll) Validate() *Error {
	return first(checkQuery(&s.Query), checkDomains(s.Domains), checkRange("limitPerDomain", s.LimitPerDomain, 1, MaxLimitPerDomain), checkStore(s.Store))
}

// Validate checks smart_search parameters.
func (s *SmartSearch) Validate() *Error {
	return first(checkQuery(&s.Query), checkDomains(s.Domains), checkRange("tokenBudget", s.TokenBudget, MinTokenBudget, MaxTokenBudget),
		oneOf("thoroughness", s.Thoroughness, "", "quick", "moderate", "thorough"), checkStore(s.Store))
}

// Validate checks recall parameters.
func (r *Recall) Validate() *Error {
	return first(checkQuery(&r.Query), checkDomainType(&r.Domain, &r.Type), checkRange("limit", r.Limit, 1, MaxLimit), checkStore(r.Store))
}

// Validate checks ingest parameters.
func (i *Ingest) Validate() *Error {
	i.Path = strings.TrimSpace(i.Path)
	i.Glob = strings.TrimSpace(i.Glob)
	switch {
	case i.Path == "":
		return Invalid("path", "path is required: the file or directory to index, e.g. path=.")
	case len(i.Path) > MaxPathLen:
		return Invalid("path", "path is %d bytes; at most %d", len(i.Path), MaxPathLen)
	case len(i.Glob) > MaxPatternLen:
		return Invalid("glob", "glob is %d bytes; at most %d", len(i.Glob), MaxPatternLen)
	case i.Glob != "" && !doublestar.ValidatePattern(i.Glob):
		return Invalid("glob", "glob %q is not a valid pattern (unclosed [ or {, or a trailing \\)", i.Glob)
	}
	return checkStore(i.Store)
}

// Validate checks node_add parameters.
func (n *NodeAdd) Validate() *Error {
	if n.Domain == "" {
		return Invalid("domain", "domain is required: one of %s", strings.Join(AllDomains, ", "))
	}
	if n.Type == "" {
		return Invalid("type", "type is required: one of %s", strings.Join(NodeTypes[n.Domain], ", "))
	}
	if e := checkDomainType(&n.Domain, &n.Type); e != nil {
		return e
	}
	name := n.Name
	if e := checkName(&name); e != nil {
		return e
	}
	n.Name = name
	n.Content = strings.TrimSpace(n.Content)
	n.Ref = strings.TrimSpace(n.Ref)
	switch {
	case len(n.Content) > MaxContent:
		return Invalid("content", "content is %d bytes after trimming; at most %d (32 KB): split it into several nodes", len(n.Content), MaxContent)
	case utf8.RuneCountInString(n.Ref) > MaxRef:
		return Invalid("ref", "ref is %d characters; at most %d", utf8.RuneCountInString(n.Ref), MaxRef)
	case len(n.Links) > MaxLinks:
		return Invalid("links", "%d links; at most %d", len(n.Links), MaxLinks)
	}
	if n.Source == "" {
		n.Source = SourceModel
	}
	if e := first(oneOf("source", n.Source, SourceTypes...), checkRange("trust", n.Trust, 0, 100),
		checkID("supersedes", &n.Supersedes, false), checkTaskID("taskId", n.TaskID), checkStore(n.Store)); e != nil {
		return e
	}
	for i := range n.Links {
		l := &n.Links[i]
		l.To = strings.ToLower(strings.TrimSpace(l.To))
		if !IsID(l.To) {
			return Invalid("links", "link %d: to must be a node id (a UUID), got %q", i+1, l.To)
		}
		if !IsEdgeType(l.Type) {
			return Invalid("links", "link %d: type %q is no edge type; use one of %s", i+1, l.Type, strings.Join(EdgeTypes, ", "))
		}
	}
	return nil
}

// Validate checks node_get parameters.
func (n *NodeGet) Validate() *Error {
	return first(checkID("id", &n.ID, true), checkStore(n.Store))
}

// Validate checks traverse parameters.
func (t *Traverse) Validate() *Error {
	if e := first(checkID("id", &t.ID, true), oneOf("direction", t.Direction, "", "out", "in", "both"),
		checkRange("depth", t.Depth, 1, MaxDepth), checkRange("fanOut", t.FanOut, 1, MaxFanOut),
		checkRange("limit", t.Limit, 1, MaxWalkLimit), checkStore(t.Store)); e != nil {
		return e
	}
	for _, et := range t.EdgeTypes {
		if !IsEdgeType(et) {
			return Invalid("edgeTypes", "edge type %q is unknown; use a comma-separated list of %s", et, strings.Join(EdgeTypes, ", "))
		}
	}
	return nil
}

// Validate checks conflicts parameters.
func (c *Conflicts) Validate() *Error {
	if e := first(oneOf("operation", c.Operation, "", "list", "resolve"), checkStore(c.Store)); e != nil {
		return e
	}
	resolve := c.Operation == "resolve"
	op := "operation=" + c.Operation
	if e := first(notFor("id", c.ID != nil, op, resolve), notFor("resolution", c.Resolution != "", op, resolve),
		notFor("all", c.All, op, !resolve), notFor("limit", c.Limit != nil, op, !resolve),
		notFor("offset", c.Offset != nil, op, !resolve)); e != nil {
		return e
	}
	if !resolve {
		return checkPage(c.Limit, c.Offset)
	}
	if c.ID == nil || *c.ID < 1 {
		return Invalid("id", "id is required for operation=resolve: the conflict's id (see conflicts operation=list)")
	}
	c.Resolution = strings.TrimSpace(c.Resolution)
	if c.Resolution == "" || len(c.Resolution) > MaxResolution {
		return Invalid("resolution", "resolution is required for operation=resolve: what was decided and why, 1 byte to 4 KB")
	}
	return nil
}
