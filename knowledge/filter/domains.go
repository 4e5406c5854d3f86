package filter

import (
	"slices"
	"sync"
)

// Domains holds one Set per domain name (code, history, academic, …). The
// zero value is empty and ready to use.
type Domains struct {
	mu   sync.RWMutex
	sets map[string]*Set
}

// Set returns the Set of domain, creating an empty one if needed.
func (d *Domains) Set(domain string) *Set {
	d.mu.RLock()
	s := d.sets[domain]
	d.mu.RUnlock()
	if s != nil {
		return s
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.sets == nil {
		d.sets = make(map[string]*Set)
	}
	if s = d.sets[domain]; s == nil {
		s = new(Set)
		d.sets[domain] = s
	}
	return s
}

// Names returns the domain names, sorted.
func (d *Domains) Names() []string {
	d.mu.RLock()
	defer d.mu.RUnlock()
	names := make([]string, 0, len(d.sets))
	for n := range d.sets {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// MayMatch reports whether domain may hold any topic of query. A domain
// never seen has nothing; a query without tokens (empty, or only very
// short words) cannot be ruled out and may match any known domain.
func (d *Domains) MayMatch(domain, query string) bool {
	return d.MayMatchKeys(domain, Tokens(query))
}

// MayMatchKeys is MayMatch for keys already made with Tokens.
func (d *Domains) MayMatchKeys(domain string, keys []uint64) bool {
	d.mu.RLock()
	s := d.sets[domain]
	d.mu.RUnlock()
	if s == nil {
		return false
	}
	return len(keys) == 0 || s.MayContainAny(keys)
}

// AlsoExistsIn returns, sorted, the domains other than except that may
// hold a topic of query: the hints a search result carries.
func (d *Domains) AlsoExistsIn(query, except string) []string {
	keys := Tokens(query)
	var out []string
	for _, n := range d.Names() {
		if n != except && d.MayMatchKeys(n, keys) {
			out = append(out, n)
		}
	}
	return out
}
