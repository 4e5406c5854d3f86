package recipes

import (
	"fmt"
	"sort"
	"strings"

	"github.com/pi-actors/pi-actors/internal/lazyre"
)

// Names a user gives and names stored differ in spelling: register_tool
// stores name=my-tool as my_tool (PARITY's normalisation), the packaged
// library spells its recipes with hyphens. Every lookup by name — call,
// spawn recipe=, message to=tool:, inspect target=tool:, the MCP and pi
// recipe tools, register_tool's update and delete — takes a recipe's exact
// id first, else the one active recipe whose id differs only in case, in
// - against _, and in what the MCP tool names replace with _ (a.b is
// listed as a_b) (NameKey). Two such recipes and no exact id is an
// AmbiguousError; register_tool refuses to create the second.

// nameKeyRe is what NameKey writes as one _: any run of characters a tool
// name cannot hold.
var nameKeyRe = lazyre.New(`[^a-z0-9_]+`)

// NameKey is a name's spelling-blind form: trimmed, lowercase, every -
// an _, every run of other characters but letters, digits and _ one _.
// my-tool, My_Tool and my_tool have the same key; so do a.b and a_b.
func NameKey(name string) string {
	return nameKeyRe.ReplaceAllString(strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "-", "_"), "_")
}

// AmbiguousError is a name that is no recipe's exact id and matches
// several ids by NameKey.
type AmbiguousError struct {
	Name string
	IDs  []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("recipe name %s is ambiguous: it matches %s (spelt differently); use the exact name", e.Name, strings.Join(e.IDs, " and "))
}

// Resolve returns the id name stands for among the active entries keep
// accepts (nil: every one): name when it is such an entry's id, else the
// only one whose NameKey is name's; "" when there is none.
func (g *Registry) Resolve(name string, keep func(*Entry) bool) (string, error) {
	ok := func(e *Entry) bool { return keep == nil || keep(e) }
	if e, found := g.Active[name]; found && ok(e) {
		return name, nil
	}
	ids := g.sameKey(name, ok)
	switch len(ids) {
	case 0:
		return "", nil
	case 1:
		return ids[0], nil
	}
	return "", &AmbiguousError{Name: name, IDs: ids}
}

// sameKey lists the active ids with name's NameKey (name itself included)
// that keep accepts, sorted.
func (g *Registry) sameKey(name string, keep func(*Entry) bool) []string {
	key := NameKey(name)
	var ids []string
	for id, e := range g.Active {
		if NameKey(id) == key && keep(e) {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// Spellings lists the other active recipes whose id has name's NameKey
// but is not name: what a tool registered as name would be confused with.
func (g *Registry) Spellings(name string) []*Entry {
	var out []*Entry
	for _, id := range g.sameKey(name, func(*Entry) bool { return true }) {
		if id != name {
			out = append(out, g.Active[id])
		}
	}
	return out
}

// spelling picks the id a register_tool request acts on: name, or the
// tool the user root already holds under another spelling of it (a
// hand-written my-tool.json for name=my-tool, stored as my_tool). A new
// tool that another recipe spells differently is refused: lookups take
// either spelling, so one of the two could not be reached by its name.
func (rg *Registrar) spelling(requested, name string, deleting bool) (string, error) {
	g, err := Discover(rg.AgentDir)
	if err != nil {
		return "", err
	}
	// The exact id the caller wrote comes first (a-b.json for name=a-b,
	// though the name normalises to a_b); any other spelling must be
	// the only one.
	if e, ok := g.Active[requested]; ok && e.Layer == LayerUser {
		return requested, nil
	}
	var user, other []*Entry
	if e, ok := g.Active[name]; ok && e.Layer == LayerUser {
		user = append(user, e) // the normalised name is one spelling too
	}
	for _, e := range g.Spellings(name) {
		if e.Layer == LayerUser {
			user = append(user, e)
		} else {
			other = append(other, e)
		}
	}
	switch {
	case len(user) == 1:
		return user[0].ID, nil
	case len(user) > 1:
		ids := make([]string, len(user))
		for i, e := range user {
			ids[i] = e.ID
		}
		return "", &AmbiguousError{Name: requested, IDs: ids}
	case len(other) > 0 && !deleting:
		e := other[0]
		return "", regErr("name", ErrInvalid, fmt.Sprintf("choose another name, e.g. name=my_%s", name),
			"tool name %s is taken: the %s recipe %s (%s) has that name spelt differently, and names are looked up spelt either way (call %s would run it)", name, e.Layer, e.ID, e.Path, e.ID)
	}
	return name, nil
}
